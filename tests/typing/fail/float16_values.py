# SPDX-License-Identifier: Apache-2.0
"""float16 values are not scanned (no CUB/NVRTC path for __half is built)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def half_cumsum(dst: NDArray[np.float16]) -> None:
    items = cuda.local.array(ITEMS, np.float16)
    for i in range(ITEMS):
        items[i] = 1.0
    block.inclusive_sum(items, threads=BLOCK)  # E: type-var: Value of type variable "ValueT" of "inclusive_sum" cannot be "floating[_16Bit]"
    dst[cuda.grid(1)] = items[ITEMS - 1]
