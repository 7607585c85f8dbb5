# SPDX-License-Identifier: Apache-2.0
"""The element type of a local array follows its dtype argument."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def row_sums(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    items: NDArray[np.int32] = cuda.local.array(ITEMS, np.float32)  # E: arg-type: Argument 2 to "array" of "local" has incompatible type "type[floating[_32Bit]]"
    block.load(src, 0, items, threads=BLOCK)
    block.inclusive_sum(items, threads=BLOCK)
    block.store(dst, 0, items, threads=BLOCK)
