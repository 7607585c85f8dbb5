# SPDX-License-Identifier: Apache-2.0
"""A store rounds float32 or float64 items into a half-precision array, not float16 into
bfloat16."""

import ml_dtypes
import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 8


@cuda.jit
def reround(src: NDArray[np.float16], dst: NDArray[ml_dtypes.bfloat16]) -> None:
    items = cuda.local.array(ITEMS, np.float16)
    block.load(src, 0, items, threads=BLOCK)
    block.store(dst, 0, items, threads=BLOCK)  # E: arg-type: Argument 3 to "store" has incompatible type "_ShapedNDArray[tuple[int], dtype[floating[_16Bit]]]"; expected "ndarray[tuple[Any, ...], dtype[bfloat16]] | generic[Callable[[], bfloat16]]"
