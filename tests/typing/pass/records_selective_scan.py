# SPDX-License-Identifier: Apache-2.0
"""docs/records.md's selective-scan recurrence: (a, b) records as values and state,
loaded from two float32 arrays (zipped tile I/O) and stored as one field."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

THREADS = 32
ITEMS = 4

# magictoken.typed_records.begin
# h[t] = a[t] * h[t-1] + b[t]: each item is the affine map h -> a * h + b
pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def compose(x: Any, y: Any) -> tuple[Any, Any]:  # x first, then y
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateful(pair)
def carry_map(state: NDArray[np.void], block_aggregate: Any) -> tuple[Any, Any]:
    prefix = (state[0].a, state[0].b)
    state[0].a = prefix[0] * block_aggregate.a
    state[0].b = block_aggregate.a * prefix[1] + block_aggregate.b
    return prefix


@cuda.jit
def selective_scan(a: NDArray[np.float32], b: NDArray[np.float32], h: NDArray[np.float32]) -> None:
    row = cuda.blockIdx.x
    state = cuda.local.array(1, pair)
    state[0].a = 1.0  # the identity map: h[-1] = 0
    state[0].b = 0.0
    items = cuda.local.array(ITEMS, pair)
    for base in range(0, a.shape[1], THREADS * ITEMS):
        block.load((a[row], b[row]), base, items, oob_default=(1.0, 0.0), threads=THREADS)
        block.inclusive_scan(
            items, items, scan_op=compose, prefix_op=carry_map, prefix_state=state, threads=THREADS
        )
        block.store(h[row], base, items, field="b", threads=THREADS)  # h[t] is the b field


# magictoken.typed_records.end


_ROWS = types.float32[:, ::1]
KERNELS: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (selective_scan.py_func, (_ROWS, _ROWS, _ROWS)),
]
