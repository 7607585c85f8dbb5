# SPDX-License-Identifier: Apache-2.0
"""A launch configuration needs both the grid and the block shape."""

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
        block.inclusive_sum(items, threads=BLOCK)
        block.store(dst, base, items, threads=BLOCK)


def main() -> None:
    d_src = cuda.to_device(np.arange(1 << 16, dtype=np.int32))
    d_dst = cuda.device_array_like(d_src)
    row_cumsum[BLOCK](d_src, d_dst)  # E: call-overload: No overload variant of "__getitem__" of "_Kernel" matches
