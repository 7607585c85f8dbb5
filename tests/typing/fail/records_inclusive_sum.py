# SPDX-License-Identifier: Apache-2.0
"""Sums are not defined on records: inclusive_sum of (a, b) pairs (use inclusive_scan)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@cuda.jit
def pair_cumsum(src: NDArray[np.void], dst: NDArray[np.void]) -> None:
    items = cuda.local.array(ITEMS, PAIR)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, oob_default=(0.0, 0.0), threads=BLOCK)
    block.inclusive_sum(items, threads=BLOCK)  # E: type-var: Value of type variable "ValueT" of "inclusive_sum" cannot be "void"
    block.store(dst, base, items, threads=BLOCK)
