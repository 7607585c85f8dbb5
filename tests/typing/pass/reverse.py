# SPDX-License-Identifier: Apache-2.0
"""Reverse scans: reverse=True on the sums and scans, scalar and array values alike."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

THREADS = 64
ITEMS = 4


@statefn.stateful(np.int64)
def suffix_total(state: NDArray[np.int64], block_aggregate: np.int32) -> np.int32:
    suffix = state[0]
    state[0] = suffix + block_aggregate
    return np.int32(suffix)


@cuda.jit
def suffixes(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    tile = block.tile_size(items, threads=THREADS)
    for base in range((src.shape[0] - 1) // tile * tile, -1, -tile):
        block.load(src, base, items, oob_default=0, threads=THREADS)
        block.inclusive_sum(
            items, prefix_op=suffix_total, prefix_state=state, threads=THREADS, reverse=True
        )
        block.store(dst, base, items, threads=THREADS)
    last: np.int32 = block.exclusive_scan(
        items[0], scan_op="max", initial_value=0, threads=THREADS, reverse=True
    )
    dst[0] = last


_VEC = types.int32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (suffixes.py_func, (_VEC, _VEC)),
]
