# SPDX-License-Identifier: Apache-2.0
"""The block shape is an int or a 2/3-tuple of ints."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def ranks(flags: NDArray[np.int32], out: NDArray[np.int32]) -> None:
    i = cuda.grid(1)
    out[i] = block.exclusive_sum(np.int32(flags[i]), threads=128.0)  # E: call-overload: No overload variant of "exclusive_sum" matches
