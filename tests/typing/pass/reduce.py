# SPDX-License-Identifier: Apache-2.0
"""Block reduce: sums and reductions of arrays, scalars and records return the value type
(dtype='s scalar type with dtype=)."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

THREADS = 128
ITEMS = 4
PAIR = np.dtype([("value", np.float32), ("pos", np.int32)])


@cuda.jit(device=True)
def larger(a: Any, b: Any) -> tuple[float, int]:
    return (a[0], a[1]) if a[0] >= b[0] else (b[0], b[1])


@cuda.jit
def stats(src: NDArray[np.float32], out: NDArray[np.float32], best: NDArray[np.int32]) -> None:
    items = cuda.local.array(ITEMS, np.float32)
    block.load(src, 0, items, oob_default=0.0, threads=THREADS)
    total: np.float32 = block.sum(items, threads=THREADS)
    top: np.float32 = block.reduce(
        items, "max", valid=src.shape[0], broadcast=False, threads=THREADS
    )
    wide: np.float64 = block.sum(items, dtype=np.float64, threads=THREADS)
    small = cuda.local.array(ITEMS, np.uint8)
    for i in range(ITEMS):
        small[i] = np.uint8(i)
    count: np.int64 = block.sum(small, dtype=np.int64, threads=THREADS)
    most: np.int32 = block.reduce(small, "max", dtype=np.int32, threads=THREADS)
    low: np.float32 = block.reduce(items[0], np.minimum, algorithm="raking", threads=THREADS)
    n: int = block.sum(1, algorithm="raking_commutative_only", threads=THREADS)
    pairs = cuda.local.array(ITEMS, PAIR)
    for i in range(ITEMS):
        pairs[i]["value"] = items[i]
        pairs[i]["pos"] = i
    winner: np.void = block.reduce(pairs, larger, threads=THREADS)
    if cuda.threadIdx.x == 0:
        out[0] = total + top + low + n + wide + count + most
        best[0] = winner["pos"]


_F32 = types.float32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (stats.py_func, (_F32, _F32, types.int32[::1])),
]
