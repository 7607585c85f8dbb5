# SPDX-License-Identifier: Apache-2.0
"""A tile status made for other values than the scan's (float32 status, int32 items)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import scan
from scan import block


@cuda.jit
def cumsum(
    src: NDArray[np.int32], dst: NDArray[np.int32], status: scan.TileStatus[np.float32]
) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, cuda.blockIdx.x * 512, items, threads=128)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, threads=128)  # E: misc: Cannot infer value of type parameter "ValueT" of "inclusive_sum"
    block.store(dst, cuda.blockIdx.x * 512, items, threads=128)
