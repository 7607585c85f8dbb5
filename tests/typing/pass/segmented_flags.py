# SPDX-License-Identifier: Apache-2.0
"""Segment ids from head flags: an inclusive sum of the flags, carried across tiles."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.int32)
def segments_so_far(state: NDArray[np.int32], block_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.int32(prefix)


@cuda.jit
def segment_ids(head_flags: NDArray[np.int32], ids: NDArray[np.int32], n: int) -> None:
    state = cuda.local.array(1, np.int32)
    state[0] = -1  # the first head flag opens segment 0
    flags = cuda.local.array(ITEMS, np.int32)
    for base in range(0, n, BLOCK * ITEMS):
        block.load(head_flags, base, flags, valid_items=n - base, oob_default=0, threads=BLOCK)
        block.inclusive_sum(flags, prefix_op=segments_so_far, prefix_state=state, threads=BLOCK)
        block.store(ids, base, flags, valid_items=n - base, threads=BLOCK)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (segment_ids.py_func, (types.int32[::1], types.int32[::1], types.int64)),
]
