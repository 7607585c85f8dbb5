# SPDX-License-Identifier: Apache-2.0
"""float32 values with a float64 running sum: the state dtype differs from the values'."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 256
ITEMS = 2


@statefn.stateful(np.dtype(np.float64))
def compensated_total(state: NDArray[np.float64], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = prefix + np.float64(block_aggregate)
    return np.float32(prefix)


@cuda.jit(lto=True, fastmath=False)
def float_cumsum(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    state = cuda.local.array(1, np.float64)
    state[0] = 0.0
    items = cuda.local.array(ITEMS, np.float32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, oob_default=np.float32(0), threads=BLOCK)
        block.exclusive_sum(items, prefix_op=compensated_total, prefix_state=state, threads=BLOCK)
        block.store(dst, base, items, threads=BLOCK)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (float_cumsum.py_func, (types.float32[::1], types.float32[::1])),
]
