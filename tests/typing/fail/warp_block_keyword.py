# SPDX-License-Identifier: Apache-2.0
"""Warp scans take no block options: algorithm= (and temp_storage=, auto_sync=) are block's."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import warp


@cuda.jit
def per_warp(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    items = cuda.local.array(4, np.int32)
    for i in range(4):
        items[i] = src[cuda.threadIdx.x * 4 + i]
    warp.inclusive_sum(items, algorithm="raking")  # E: call-overload: No overload variant of "inclusive_sum" matches argument types
    for i in range(4):
        dst[cuda.threadIdx.x * 4 + i] = items[i]
