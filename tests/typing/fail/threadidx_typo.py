# SPDX-License-Identifier: Apache-2.0
"""threadIdx has x, y and z."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def copy(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.w  # E: attr-defined: "_Dim3" has no attribute "w"
    dst[i] = src[i]
