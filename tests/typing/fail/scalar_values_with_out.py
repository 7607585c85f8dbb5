# SPDX-License-Identifier: Apache-2.0
"""A scalar scan returns its result; out= is for array payloads."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def slots(flags: NDArray[np.int32], out: NDArray[np.int32]) -> None:
    i = cuda.grid(1)
    result = cuda.local.array(1, np.int32)
    block.exclusive_sum(np.int32(flags[i]), result, threads=BLOCK)  # E: call-overload: No overload variant of "exclusive_sum" matches
    out[i] = result[0]
