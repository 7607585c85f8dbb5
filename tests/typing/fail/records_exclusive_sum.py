# SPDX-License-Identifier: Apache-2.0
"""Sums are not defined on records: exclusive_sum of (flag, value) records into out=."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4
SEG = np.dtype([("flag", np.int32), ("value", np.float32)], align=True)


@cuda.jit
def offsets(src: NDArray[np.void], dst: NDArray[np.void]) -> None:
    items = cuda.local.array(ITEMS, SEG)
    out = cuda.local.array(ITEMS, SEG)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, oob_default=(0, 0.0), threads=BLOCK)
    block.exclusive_sum(items, out, threads=BLOCK)  # E: type-var: Value of type variable "ValueT" of "exclusive_sum" cannot be "void"
    block.store(dst, base, out, threads=BLOCK)
