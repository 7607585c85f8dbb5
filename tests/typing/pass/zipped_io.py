# SPDX-License-Identifier: Apache-2.0
"""Zipped tile I/O: fields stored one by one, to a tuple in any order, every field.

records_selective_scan.py loads records from two arrays."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numba.np.numpy_support import from_dtype
from numpy.typing import NDArray

from scan import block

THREADS = 32
ITEMS = 4
pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@cuda.jit
def store_each_field(ab: NDArray[np.void], a: NDArray[np.float32], b: NDArray[np.float32]) -> None:
    items = cuda.local.array(ITEMS, pair)
    block.load(ab, 0, items, threads=THREADS)  # a record array
    block.store(a, 0, items, field="a", threads=THREADS)
    block.store(b, 0, items, field="b", threads=THREADS)


@cuda.jit
def swap_fields(a: NDArray[np.float32], b: NDArray[np.float32], n: int) -> None:
    items = cuda.local.array(ITEMS, pair)
    block.load((a, b), 0, items, valid_items=n, threads=THREADS)
    block.store((b, a), 0, items, field=("a", "b"), valid_items=n, threads=THREADS)
    block.store((a, b), 0, items, algorithm="direct", threads=THREADS)


_ROW = types.float32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (store_each_field.py_func, (from_dtype(pair)[::1], _ROW, _ROW)),
    (swap_fields.py_func, (_ROW, _ROW, types.int64)),
]
