# SPDX-License-Identifier: Apache-2.0
"""Exclusive max-scan of uint32 keys with a NumPy ufunc operator and an initial value."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def previous_max(keys: NDArray[np.uint32], out: NDArray[np.uint32]) -> None:
    items = cuda.local.array(ITEMS, np.uint32)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(keys, base, items, algorithm="striped", threads=BLOCK)
    block.exclusive_scan(
        items, items, scan_op=np.maximum, initial_value=np.uint32(0), threads=BLOCK
    )
    block.store(out, base, items, algorithm="striped", threads=BLOCK)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (previous_max.py_func, (types.uint32[::1], types.uint32[::1])),
]
