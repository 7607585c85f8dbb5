# SPDX-License-Identifier: Apache-2.0
"""dtype= of block.sum is a numeric dtype to accumulate in: bool is none."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

@cuda.jit
def kernel(src: NDArray[np.int8], out: NDArray[np.int64]) -> None:
    items = cuda.local.array(4, np.int8)
    out[0] = block.sum(items, dtype=np.bool_)  # E: type-var: Value of type variable "_AccT" of "sum" cannot be "bool[Any]"
