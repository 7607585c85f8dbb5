# SPDX-License-Identifier: Apache-2.0
"""A stateless callback takes no prefix_state."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateless
def base_offset(block_aggregate: np.int32) -> np.int32:
    return np.int32(1000)


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.exclusive_sum(items, prefix_op=base_offset, prefix_state=state, threads=BLOCK)  # E: arg-type: Argument "prefix_state" to "exclusive_sum" has incompatible type "_ShapedNDArray[tuple[int], dtype[signedinteger[_64Bit]]]"; expected "ndarray[tuple[Any, ...], dtype[PrefixStateNeedsAStatefulPrefixOp]]"
        block.store(dst, base, items, threads=BLOCK)
