# SPDX-License-Identifier: Apache-2.0
"""adjacent_difference and flag_heads: items, out and carry of one scalar type, integer or
bool flags; both return nothing."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

THREADS = 128
ITEMS = 4


def apart(previous: Any, item: Any) -> bool:
    return bool(item - previous > 1)


@cuda.jit
def runs(src: NDArray[np.float32], diffs: NDArray[np.float32], heads: NDArray[np.int32]) -> None:
    carry = cuda.local.array(1, np.float32)
    carry[0] = 0
    items = cuda.local.array(ITEMS, np.float32)
    out = cuda.local.array(ITEMS, np.float32)
    flags = cuda.local.array(ITEMS, np.int32)
    for base in block.tiles(src.shape[0], items, threads=THREADS):
        block.load(src, base, items, oob_default=0.0, threads=THREADS)
        block.flag_heads(flags, items, op=apart, carry=carry, threads=THREADS)
        block.adjacent_difference(items, out, threads=THREADS)
        block.adjacent_difference(items, carry=carry, threads=THREADS)
        block.store(diffs, base, out, threads=THREADS)
        block.store(heads, base, flags, threads=THREADS)


_F32 = types.float32[::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (runs.py_func, (_F32, _F32, types.int32[::1])),
]
