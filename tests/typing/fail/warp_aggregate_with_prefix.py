# SPDX-License-Identifier: Apache-2.0
"""With a prefix callback the warp aggregate goes to the callback, not to warp_aggregate."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import warp


@statefn.stateful(np.int64)
def running_total(state: NDArray[np.int64], warp_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + warp_aggregate
    return np.int32(prefix)


@cuda.jit
def per_warp(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    total = cuda.local.array(1, np.int32)
    for i in range(4):
        items[i] = src[cuda.threadIdx.x * 4 + i]
    warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state, warp_aggregate=total)  # E: arg-type: Argument "warp_aggregate" to "inclusive_sum" has incompatible type "_ShapedNDArray[tuple[int], dtype[signedinteger[_32Bit]]]"; expected "ndarray[tuple[Any, ...], dtype[WarpAggregateCannotBeCombinedWithPrefixOp]]"
    for i in range(4):
        dst[cuda.threadIdx.x * 4 + i] = items[i]
