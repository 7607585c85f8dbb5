# SPDX-License-Identifier: Apache-2.0
"""A stateful callback needs its prefix_state."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.int64)
def running_total(state: NDArray[np.int64], block_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.int32(prefix)


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, prefix_op=running_total, threads=BLOCK)  # E: arg-type: Argument "prefix_op" to "inclusive_sum" has incompatible type "StatefulFunction[signedinteger[_64Bit], signedinteger[_32Bit]]"; expected "StatelessFunction[signedinteger[_32Bit]] | Callable[[signedinteger[_32Bit]], signedinteger[_32Bit]] | StatefulPrefixOpNeedsPrefixState"
        block.store(dst, base, items, threads=BLOCK)
