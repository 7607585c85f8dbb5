# SPDX-License-Identifier: Apache-2.0
"""Stream compaction within a block: exclusive sum of keep-flags gives output slots."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 128


@cuda.jit
def compact_positive(
    src: NDArray[np.float32], dst: NDArray[np.float32], kept: NDArray[np.int32]
) -> None:
    i = cuda.grid(1)
    value = src[i] if i < src.shape[0] else np.float32(0)
    keep = np.int32(1) if value > 0 else np.int32(0)
    aggregate = cuda.local.array(1, np.int32)
    slot = block.exclusive_sum(keep, block_aggregate=aggregate, threads=BLOCK)
    if keep:
        dst[cuda.blockIdx.x * BLOCK + slot] = value
    if cuda.threadIdx.x == 0:
        kept[cuda.blockIdx.x] = aggregate[0]


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (compact_positive.py_func, (types.float32[::1], types.float32[::1], types.int32[::1])),
]
