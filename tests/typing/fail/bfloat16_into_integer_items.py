# SPDX-License-Identifier: Apache-2.0
"""A load widens bfloat16 only into float32 or float64 items, never into integers."""

import ml_dtypes
import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 8


@cuda.jit
def truncate(src: NDArray[ml_dtypes.bfloat16], dst: NDArray[np.int32]) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, threads=BLOCK)  # E: arg-type: Argument 3 to "load" has incompatible type "_ShapedNDArray[tuple[int], dtype[signedinteger[_32Bit]]]"; expected "ndarray[tuple[Any, ...], dtype[bfloat16]] | generic[Callable[[], bfloat16]]"
    block.store(dst, base, items, threads=BLOCK)
