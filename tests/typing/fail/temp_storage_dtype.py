# SPDX-License-Identifier: Apache-2.0
"""Caller-owned temp storage is a shared uint8 array."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    temp = cuda.shared.array(1024, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, temp_storage=temp, threads=BLOCK)  # E: arg-type: Argument "temp_storage" to "inclusive_sum" has incompatible type "_ShapedNDArray[tuple[int], dtype[signedinteger[_32Bit]]]"
        block.store(dst, base, items, threads=BLOCK)
