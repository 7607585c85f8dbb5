# SPDX-License-Identifier: Apache-2.0
"""exclusive_scan needs scan_op (use exclusive_sum for sums)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.exclusive_scan(items, initial_value=0, threads=BLOCK)  # E: call-overload: No overload variant of "exclusive_scan" matches
        block.store(dst, base, items, threads=BLOCK)
