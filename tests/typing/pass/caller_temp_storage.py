# SPDX-License-Identifier: Apache-2.0
"""Caller-owned temp storage: one shared buffer serving load, scan and store in turn."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4

_LAYOUTS = [
    block.temp_storage(primitive, np.int32, BLOCK, ITEMS, cc=(9, 0))
    for primitive in ("load", "scan", "store")
]
TEMP_SIZE = max(layout.size for layout in _LAYOUTS)
TEMP_ALIGN = max(layout.alignment for layout in _LAYOUTS)


@statefn.stateful(np.int32)
def carry(state: NDArray[np.int32], block_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.int32(prefix)


@cuda.jit
def cumsum_shared_temp(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    temp = cuda.shared.array(TEMP_SIZE, np.uint8, alignment=TEMP_ALIGN)
    state = cuda.local.array(1, np.int32)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, temp_storage=temp, threads=BLOCK)
        block.inclusive_sum(
            items, prefix_op=carry, prefix_state=state, temp_storage=temp, threads=BLOCK
        )
        block.store(dst, base, items, temp_storage=temp, threads=BLOCK)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (cumsum_shared_temp.py_func, (types.int32[::1], types.int32[::1])),
]
