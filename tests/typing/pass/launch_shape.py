# SPDX-License-Identifier: Apache-2.0
"""A row scan whose threads x items per thread come from block.launch_shape."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

SHAPE: block.LaunchShape = block.launch_shape(2048, np.float32)
THREADS, ITEMS = SHAPE
TILE: int = SHAPE.threads * SHAPE.items_per_thread
# a cross-block (look-back) scan's shape: keyword-only
LOOKBACK_THREADS, LOOKBACK_ITEMS = block.launch_shape(1 << 28, np.int32, cross_block=True)


@statefn.stateful(np.float32)
def running_total(state: NDArray[np.float32], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.float32(prefix)


@cuda.jit
def row_cumsum(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.float32)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float32)
    for base in range(0, src.shape[1], TILE):
        block.load(src[row], base, items, oob_default=0, threads=THREADS)
        block.inclusive_sum(
            items, items, prefix_op=running_total, prefix_state=state, threads=THREADS
        )
        block.store(dst[row], base, items, threads=THREADS)


_ROWS = types.Array(types.float32, 2, "C")
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (row_cumsum.py_func, (_ROWS, _ROWS)),
]
