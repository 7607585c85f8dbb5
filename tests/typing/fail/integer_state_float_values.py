# SPDX-License-Identifier: Apache-2.0
"""An integer state cannot carry the running total of float values: it would truncate it."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.int64)  # E: type-var: Value of type variable "IntegerStateNeedsIntegerValues" of "__call__" of "_StatefulDecorator" cannot be "floating[_32Bit]"
def running_total(state: NDArray[np.int64], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = prefix + np.int64(block_aggregate)
    return np.float32(prefix)


@cuda.jit
def float_cumsum(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, threads=BLOCK)
        block.store(dst, base, items, threads=BLOCK)
