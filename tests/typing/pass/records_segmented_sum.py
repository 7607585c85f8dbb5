# SPDX-License-Identifier: Apache-2.0
"""docs/records.md's segmented inclusive sum: (flag, value) records, a stateful carry."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.np.numpy_support import from_dtype
from numpy.typing import NDArray

import statefn
from scan import block

THREADS = 32
ITEMS = 4

# a segment starts at every item whose flag is set
seg = np.dtype([("flag", np.int32), ("value", np.float32)], align=True)


# Operands are named tuples of the fields at run time; Any here.
def segmented_add(a: Any, b: Any) -> tuple[Any, Any]:
    if b.flag:  # b starts a segment: what came before does not count
        return (1, b.value)
    return (a.flag, a.value + b.value)


@statefn.stateful(seg)
def carry_segment(state: NDArray[np.void], block_aggregate: Any) -> tuple[Any, Any]:
    prefix = (state[0].flag, state[0].value)
    if block_aggregate.flag:
        state[0].value = block_aggregate.value
        state[0].flag = 1
    else:
        state[0].value = prefix[1] + block_aggregate.value
    return prefix


@cuda.jit
def segmented_sum(src: NDArray[np.void], dst: NDArray[np.void]) -> None:
    row = cuda.blockIdx.x
    state = cuda.local.array(1, seg)
    state[0].flag = 0
    state[0].value = 0.0
    items = cuda.local.array(ITEMS, seg)
    for base in range(0, src.shape[1], THREADS * ITEMS):
        block.load(src[row], base, items, oob_default=(0, 0.0), threads=THREADS)
        block.inclusive_scan(
            items,
            items,
            scan_op=segmented_add,
            prefix_op=carry_segment,
            prefix_state=state,
            threads=THREADS,
        )
        block.store(dst[row], base, items, threads=THREADS)


_ROWS = from_dtype(seg)[:, ::1]
KERNELS: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (segmented_sum.py_func, (_ROWS, _ROWS)),
]
