# SPDX-License-Identifier: Apache-2.0
"""A misspelled reduce algorithm is no overload of block.reduce."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

@cuda.jit
def kernel(src: NDArray[np.float32]) -> None:
    items = cuda.local.array(4, np.float32)
    block.reduce(items, "max", algorithm="warp_reduction")  # E: call-overload: No overload variant of "reduce" matches
