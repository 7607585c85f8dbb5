# SPDX-License-Identifier: Apache-2.0
"""A stateless prefix callback: every tile's exclusive sum starts from a fixed offset."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateless
def base_offset(block_aggregate: np.int32) -> np.int32:
    return np.int32(1000)


@cuda.jit
def offsets_from_1000(sizes: NDArray[np.int32], offsets: NDArray[np.int32]) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(sizes, base, items, threads=BLOCK)
    block.exclusive_sum(items, items, prefix_op=base_offset, threads=BLOCK)
    block.store(offsets, base, items, threads=BLOCK)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (offsets_from_1000.py_func, (types.int32[::1], types.int32[::1])),
]
