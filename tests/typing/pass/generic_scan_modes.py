# SPDX-License-Identifier: Apache-2.0
"""block.scan with both modes, a minimum operator and an initial value."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 64
ITEMS = 2
BIG = np.int32(2**31 - 1)


@cuda.jit
def prefix_minima(src: NDArray[np.int32], incl: NDArray[np.int32], excl: NDArray[np.int32]) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    result = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, oob_default=BIG, algorithm="direct", threads=BLOCK)
    block.scan(items, result, mode="inclusive", scan_op="min", threads=BLOCK)
    block.store(incl, base, result, algorithm="direct", threads=BLOCK)
    block.scan(items, result, mode="exclusive", scan_op="min", initial_value=BIG, threads=BLOCK)
    block.store(excl, base, result, algorithm="direct", threads=BLOCK)


_VEC = types.int32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (prefix_minima.py_func, (_VEC, _VEC, _VEC)),
]
