# SPDX-License-Identifier: Apache-2.0
"""block.sum of records: records have no +; block.reduce with an operator instead."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

PAIR = np.dtype([("value", np.float32), ("pos", np.int32)])


@cuda.jit
def kernel(src: NDArray[np.float32]) -> None:
    pairs = cuda.local.array(4, PAIR)
    block.sum(pairs)  # E: type-var: Value of type variable "ValueT" of "sum" cannot be "void"
