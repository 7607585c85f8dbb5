# SPDX-License-Identifier: Apache-2.0
"""Running maximum along rows of float32 data, carried across tiles."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.float32, name="running_max")
def running_max(state: NDArray[np.float32], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = max(prefix, block_aggregate)
    return np.float32(prefix)


@cuda.jit
def row_running_max(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.float32)
    state[0] = -np.inf
    items = cuda.local.array(ITEMS, np.float32)
    for base in range(0, src.shape[1], BLOCK * ITEMS):
        block.load(src[row], base, items, oob_default=-np.inf, threads=BLOCK)
        block.inclusive_scan(
            items, items, scan_op="max", prefix_op=running_max, prefix_state=state, threads=BLOCK
        )
        block.store(dst[row], base, items, threads=BLOCK)


_ROWS = types.float32[:, ::1]
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (row_running_max.py_func, (_ROWS, _ROWS)),
]
