# SPDX-License-Identifier: Apache-2.0
"""Kernels return nothing; a value-returning function is a device function."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit  # E: arg-type: Argument 1 to "jit" has incompatible type
def block_total(src: NDArray[np.int32]) -> np.int32:
    i = cuda.grid(1)
    return block.inclusive_sum(np.int32(src[i]), threads=BLOCK)
