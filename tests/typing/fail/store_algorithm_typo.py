# SPDX-License-Identifier: Apache-2.0
"""BlockStore algorithm names are checked."""

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
    block.store(dst, 0, items, algorithm="warp_transpos", threads=BLOCK)  # E: arg-type: Argument "algorithm" to "store" has incompatible type "Literal['warp_transpos']"
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, threads=BLOCK)
        block.store(dst, base, items, threads=BLOCK)
