# SPDX-License-Identifier: Apache-2.0
"""A sum's state is numeric in the stubs: a record state with inclusive_sum is a static error.

(The run time accepts a record state with numeric values; it refuses this dtype
only for its field name "count", a tuple method. scan/block.pyi explains why the
sums keep StateT numeric.)
"""

from typing import Any

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4
PAIR = np.dtype([("total", np.int64), ("count", np.int64)])


@statefn.stateful(PAIR)
def running_total(state: NDArray[np.void], block_aggregate: np.int32) -> np.int32:
    prefix: Any = state[0]["total"]
    state[0]["total"] = prefix + block_aggregate
    return np.int32(prefix)


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, PAIR)
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, threads=BLOCK)  # E: type-var: Value of type variable "StateT" of "inclusive_sum" cannot be "void"
        block.store(dst, base, items, threads=BLOCK)
