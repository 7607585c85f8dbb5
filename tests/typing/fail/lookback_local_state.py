# SPDX-License-Identifier: Apache-2.0
"""prefix_op=scan.lookback reads a tile status, not a per-thread state array."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import scan
from scan import block


@cuda.jit
def cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int32)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    block.load(src, cuda.blockIdx.x * 512, items, threads=128)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=state, threads=128)  # E: call-overload: No overload variant of "inclusive_sum" matches argument types
    block.store(dst, cuda.blockIdx.x * 512, items, threads=128)
