# SPDX-License-Identifier: Apache-2.0
"""docs/records.md's running argmax, with the operands typed by a NamedTuple of the fields."""

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

THREADS = 32
ITEMS = 4

vi = np.dtype([("value", np.float32), ("pos", np.int32)], align=True)


class ValuePos(NamedTuple):
    """The static shape of vi's operands (at run time: statefn.record_tuple(vi))."""

    value: np.float32
    pos: np.int32


def larger(a: ValuePos, b: ValuePos) -> ValuePos:  # the first of equal maxima wins
    return b if b.value > a.value else a


@statefn.stateful(vi)
def running_max(state: NDArray[np.void], block_aggregate: ValuePos) -> tuple[Any, Any]:
    prefix = (state[0].value, state[0].pos)
    if block_aggregate.value > prefix[0]:
        state[0].value = block_aggregate.value
        state[0].pos = block_aggregate.pos
    return prefix


@cuda.jit
def running_argmax(src: NDArray[np.float32], where: NDArray[np.int32]) -> None:
    row = cuda.blockIdx.x
    rank = cuda.threadIdx.x
    state = cuda.local.array(1, vi)
    state[0].value = -np.inf
    state[0].pos = -1
    values = cuda.local.array(ITEMS, np.float32)
    items = cuda.local.array(ITEMS, vi)
    indices = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[1], THREADS * ITEMS):
        block.load(src[row], base, values, oob_default=-np.inf, threads=THREADS)
        for i in range(ITEMS):  # zip the values with their column into records
            items[i].value = values[i]
            items[i].pos = base + rank * ITEMS + i
        block.inclusive_scan(
            items, items, scan_op=larger, prefix_op=running_max, prefix_state=state, threads=THREADS
        )
        for i in range(ITEMS):
            indices[i] = items[i].pos
        block.store(where[row], base, indices, threads=THREADS)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (running_argmax.py_func, (types.float32[:, ::1], types.int32[:, ::1])),
]
