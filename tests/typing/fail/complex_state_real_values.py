# SPDX-License-Identifier: Apache-2.0
"""A complex state carries a complex prefix, which real values cannot hold (its imaginary
part would be lost)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.complex64)  # E: type-var: Value of type variable "ComplexStateNeedsComplexValues" of "__call__" of "_StatefulDecorator" cannot be "floating[_32Bit]"
def rotation(state: NDArray[np.complex64], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return np.float32(prefix.real)


@cuda.jit
def rotate(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    state = cuda.local.array(1, np.complex64)
    state[0] = 1
    items = cuda.local.array(ITEMS, np.float32)
    block.load(src, 0, items, threads=BLOCK)
    block.inclusive_sum(items, prefix_op=rotation, prefix_state=state, threads=BLOCK)
    block.store(dst, 0, items, threads=BLOCK)
