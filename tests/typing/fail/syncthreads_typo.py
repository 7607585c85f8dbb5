# SPDX-License-Identifier: Apache-2.0
"""A misspelt intrinsic is caught, not typed as Any."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def reverse(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    tile = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    tile[t] = src[cuda.grid(1)]
    cuda.syncthread()  # E: attr-defined: Module has no attribute "syncthread"
    dst[cuda.grid(1)] = tile[BLOCK - 1 - t]
