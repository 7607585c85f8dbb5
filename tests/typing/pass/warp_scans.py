# SPDX-License-Identifier: Apache-2.0
"""Warp scans and tile I/O: one row per warp with a stateful callback, logical warps."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import warp

THREADS = 64
ITEMS = 4


@statefn.stateful(np.int64)
def running_total(state: NDArray[np.int64], warp_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + warp_aggregate
    return np.int32(prefix)


@cuda.jit
def rows_per_warp(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    row = cuda.blockIdx.x * (THREADS // 32) + cuda.threadIdx.x // 32
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[1], 32 * ITEMS):
        warp.load(src[row], base, items, oob_default=0, threads=THREADS)
        warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state, threads=THREADS)
        warp.store(dst[row], base, items, algorithm="direct", threads=THREADS)


@cuda.jit
def logical_warps(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    items = cuda.local.array(ITEMS, np.float32)
    best = cuda.local.array(1, np.float32)
    for i in range(ITEMS):
        items[i] = src[cuda.threadIdx.x * ITEMS + i]
    warp.inclusive_scan(items, scan_op="max", warp_aggregate=best, lanes=8, threads=THREADS)
    first: np.float32 = warp.exclusive_scan(
        items[0], scan_op="min", initial_value=0.0, lanes=16, threads=THREADS
    )
    total: np.float32 = warp.scan(items[1], mode="inclusive", threads=THREADS)
    for i in range(ITEMS):
        dst[cuda.threadIdx.x * ITEMS + i] = items[i] + best[0] + first + total


_ROWS = types.int32[:, ::1]
_VEC = types.float32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (rows_per_warp.py_func, (_ROWS, _ROWS)),
    (logical_warps.py_func, (_VEC, _VEC)),
]
