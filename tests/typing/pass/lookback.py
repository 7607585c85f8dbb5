# SPDX-License-Identifier: Apache-2.0
"""Cross-block scans: prefix_op=scan.lookback with a tile status of the values' dtype."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numba.np.numpy_support import from_dtype
from numpy.typing import NDArray

import scan
from scan import block

THREADS = 128
ITEMS = 4
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def affine(x: Any, y: Any) -> tuple[Any, Any]:  # x first, then y
    return (x.a * y.a, y.a * x.b + y.b)


@cuda.jit
def cumsum(
    src: NDArray[np.int32], dst: NDArray[np.int32], status: scan.TileStatus[np.int32]
) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * THREADS * ITEMS
    block.load(src, base, items, oob_default=0, threads=THREADS)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, threads=THREADS)
    block.store(dst, base, items, threads=THREADS)


@cuda.jit
def suffix_sums(
    src: NDArray[np.int32], dst: NDArray[np.int32], status: scan.TileStatus[np.int32]
) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    base = (src.shape[0] - 1) // (THREADS * ITEMS) * THREADS * ITEMS
    base -= cuda.blockIdx.x * THREADS * ITEMS  # tile t is the t-th from the end
    block.load(src, base, items, oob_default=0, threads=THREADS)
    block.inclusive_sum(
        items, prefix_op=scan.lookback, prefix_state=status, reverse=True, threads=THREADS
    )
    block.store(dst, base, items, threads=THREADS)


@cuda.jit
def row_maxima(
    src: NDArray[np.float32], dst: NDArray[np.float32], status: scan.TileStatus[np.float32]
) -> None:
    row = cuda.blockIdx.y
    items = cuda.local.array(ITEMS, np.float32)
    base = cuda.blockIdx.x * THREADS * ITEMS
    block.load(src[row], base, items, oob_default=-np.inf, threads=THREADS)
    block.exclusive_scan(
        items,
        scan_op="max",
        initial_value=-np.inf,
        prefix_op=scan.lookback,
        prefix_state=status[row],
        tile=cuda.blockIdx.x,
        threads=THREADS,
    )
    block.store(dst[row], base, items, threads=THREADS)


@cuda.jit
def recurrence(
    src: NDArray[np.void], dst: NDArray[np.void], status: scan.TileStatus[np.void]
) -> None:
    items = cuda.local.array(ITEMS, PAIR)
    base = cuda.blockIdx.x * THREADS * ITEMS
    block.load(src, base, items, oob_default=(1.0, 0.0), threads=THREADS)
    block.inclusive_scan(
        items, scan_op=affine, prefix_op=scan.lookback, prefix_state=status, threads=THREADS
    )
    block.store(dst, base, items, threads=THREADS)


_INT_STATUS = from_dtype(scan.tile_status_dtype(np.int32))[::1]
_FLOAT_STATUS = from_dtype(scan.tile_status_dtype(np.float32))[:, ::1]
_PAIR_STATUS = from_dtype(scan.tile_status_dtype(PAIR))[::1]


_VEC = types.int32[::1]
_F2 = types.float32[:, ::1]
_PAIRS = from_dtype(PAIR)[::1]
KERNELS: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (cumsum.py_func, (_VEC, _VEC, _INT_STATUS)),
    (suffix_sums.py_func, (_VEC, _VEC, _INT_STATUS)),
    (row_maxima.py_func, (_F2, _F2, _FLOAT_STATUS)),
    (recurrence.py_func, (_PAIRS, _PAIRS, _PAIR_STATUS)),
]
