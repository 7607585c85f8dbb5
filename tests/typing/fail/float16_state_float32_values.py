# SPDX-License-Identifier: Apache-2.0
"""A float16 state cannot carry the running total of float32 values: it would round it."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.float16)  # E: type-var: Value of type variable "Float16StateNeedsFloat16Values" of "__call__" of "_Float16StatefulDecorator" cannot be "floating[_32Bit]"
def running_total(state: NDArray[np.float16], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.float32(prefix)


@cuda.jit
def float_cumsum(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    state = cuda.local.array(1, np.float16)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, threads=BLOCK)
        block.store(dst, base, items, threads=BLOCK)
