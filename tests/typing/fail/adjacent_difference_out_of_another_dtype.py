# SPDX-License-Identifier: Apache-2.0
"""The differences have the items' dtype: an out of another one is refused."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block


@cuda.jit
def differences(src: NDArray[np.float32], dst: NDArray[np.float64]) -> None:
    items = cuda.local.array(4, np.float32)
    out = cuda.local.array(4, np.float64)
    block.load(src, 0, items, threads=128)
    block.adjacent_difference(items, out, threads=128)  # E: type-var: Value of type variable "ValueT" of "adjacent_difference" cannot be "object"
    block.store(dst, 0, out, threads=128)
