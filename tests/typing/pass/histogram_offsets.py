# SPDX-License-Identifier: Apache-2.0
"""Shared-memory histogram with atomics, then bin offsets by a block-wide exclusive sum."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BINS = 256


@cuda.jit
def bin_offsets(keys: NDArray[np.uint8], offsets: NDArray[np.int32]) -> None:
    hist = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    hist[t] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(hist, keys[i], 1)
    cuda.syncthreads()
    count = np.int32(hist[t])
    offsets[cuda.blockIdx.x * BINS + t] = block.exclusive_sum(count, threads=BINS)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (bin_offsets.py_func, (types.uint8[::1], types.int32[::1])),
]
