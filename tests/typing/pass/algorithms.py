# SPDX-License-Identifier: Apache-2.0
"""The three BlockScan algorithms and the tile I/O algorithms, spelled as literals."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def three_ways(src: NDArray[np.int32], a: NDArray[np.int32], b: NDArray[np.int32]) -> None:
    base = cuda.blockIdx.x * BLOCK * ITEMS
    items = cuda.local.array(ITEMS, np.int32)
    out = cuda.local.array(ITEMS, np.int32)
    block.load(src, base, items, algorithm="transpose", threads=BLOCK)
    block.inclusive_sum(items, out, algorithm="raking_memoize", threads=BLOCK)
    block.store(a, base, out, algorithm="warp_transpose", threads=BLOCK)
    block.exclusive_sum(items, out, algorithm="warp_scans", threads=BLOCK)
    block.store(b, base, out, algorithm="warp_transpose_timesliced", threads=BLOCK)


_VEC = types.int32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (three_ways.py_func, (_VEC, _VEC, _VEC)),
]
