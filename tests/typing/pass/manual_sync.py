# SPDX-License-Identifier: Apache-2.0
"""auto_sync=False: the kernel places the block barrier itself, then publishes block totals."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 128


@cuda.jit
def scan_and_total(
    src: NDArray[np.int64], dst: NDArray[np.int64], grand_total: NDArray[np.int64]
) -> None:
    i = cuda.grid(1)
    v = src[i] if i < src.shape[0] else np.int64(0)
    total = cuda.local.array(1, np.int64)
    s = block.inclusive_sum(np.int64(v), block_aggregate=total, auto_sync=False, threads=BLOCK)
    cuda.syncthreads()
    if i < dst.shape[0]:
        dst[i] = s
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(grand_total, 0, total[0])


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (scan_and_total.py_func, (types.int64[::1], types.int64[::1], types.int64[::1])),
]
