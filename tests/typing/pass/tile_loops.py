# SPDX-License-Identifier: Apache-2.0
"""Tile loops with the iterators: block.tiles forward and reversed, warp.tiles, warp.tile_size."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block, warp

THREADS = 64
ITEMS = 4


@statefn.stateful(np.int64)
def running_total(state: NDArray[np.int64], block_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.int32(prefix)


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in block.tiles(src.shape[0], items, threads=THREADS):
        block.load(src, base, items, oob_default=0, threads=THREADS)
        block.inclusive_sum(
            items, items, prefix_op=running_total, prefix_state=state, threads=THREADS
        )
        block.store(dst, base, items, threads=THREADS)
    state[0] = 0
    for base in block.tiles(src.shape[0], items, reverse=True, threads=THREADS):
        block.load(src, base, items, oob_default=0, threads=THREADS)
        block.inclusive_sum(
            items, prefix_op=running_total, prefix_state=state, threads=THREADS, reverse=True
        )
        block.store(dst, base, items, threads=THREADS)


@cuda.jit
def warp_rows(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    tile: int = warp.tile_size(items, lanes=8)
    row = (cuda.blockIdx.x * THREADS + cuda.threadIdx.x) // 8 * tile
    for base in warp.tiles(tile, items, lanes=8):
        warp.load(src, row + base, items, oob_default=0, lanes=8, threads=THREADS)
        warp.inclusive_sum(items, items, lanes=8, threads=THREADS)
        warp.store(dst, row + base, items, lanes=8, threads=THREADS)


_VEC = types.int32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (row_cumsum.py_func, (_VEC, _VEC)),
    (warp_rows.py_func, (_VEC, _VEC)),
]
