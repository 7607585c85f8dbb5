# SPDX-License-Identifier: Apache-2.0
"""The items array must have the dtype of the source."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def widen(src: NDArray[np.int32], dst: NDArray[np.int64]) -> None:
    items = cuda.local.array(ITEMS, np.int64)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, threads=BLOCK)  # E: arg-type: Argument 3 to "load" has incompatible type "_ShapedNDArray[tuple[int], dtype[signedinteger[_64Bit]]]"; expected "ndarray[tuple[Any, ...], dtype[signedinteger[_32Bit]]] | generic[Callable[[], signedinteger[_32Bit]]]"
    block.inclusive_sum(items, threads=BLOCK)
    block.store(dst, base, items, threads=BLOCK)
