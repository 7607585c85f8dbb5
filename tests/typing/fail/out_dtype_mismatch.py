# SPDX-License-Identifier: Apache-2.0
"""An array scan writes out in the dtype of its values; an int64 out for int32 items is refused."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def widening_cumsum(src: NDArray[np.int32], dst: NDArray[np.int64]) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    wide = cuda.local.array(ITEMS, np.int64)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, threads=BLOCK)
    block.inclusive_sum(items, wide, threads=BLOCK)  # E: arg-type: Argument 2 to "inclusive_sum" has incompatible type "_ShapedNDArray[tuple[int], dtype[signedinteger[_64Bit]]]"; expected "ndarray[tuple[Any, ...], dtype[signedinteger[_32Bit]]] | generic[Callable[[], signedinteger[_32Bit]]] | None"
    block.store(dst, base, wide, threads=BLOCK)
