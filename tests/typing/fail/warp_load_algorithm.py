# SPDX-License-Identifier: Apache-2.0
"""Warp tile I/O has its own algorithms: CUB's transposing ones need shared memory."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import warp


@cuda.jit
def per_warp(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    items = cuda.local.array(4, np.int32)
    warp.load(src, 0, items, algorithm="transpose")  # E: arg-type: Argument "algorithm" to "load" has incompatible type "Literal['transpose']"
    warp.store(dst, 0, items)
