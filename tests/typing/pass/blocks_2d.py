# SPDX-License-Identifier: Apache-2.0
"""A 2-D block (32 x 8 threads) ranking each thread's value by row-major thread rank."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BX = 32
BY = 8


@cuda.jit
def tile_offsets(counts: NDArray[np.int32], offsets: NDArray[np.int32]) -> None:
    x, y = cuda.grid(2)
    width = cuda.gridDim.x * cuda.blockDim.x
    i = y * width + x
    count = np.int32(counts[i])
    offsets[i] = block.exclusive_sum(count, threads=(BX, BY))


def main() -> None:
    counts = np.ones(64 * 64, dtype=np.int32)
    offsets = cuda.device_array(counts.shape, np.int32)
    tile_offsets[(2, 8), (BX, BY)](cuda.to_device(counts), offsets)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (tile_offsets.py_func, (types.int32[::1], types.int32[::1])),
]
