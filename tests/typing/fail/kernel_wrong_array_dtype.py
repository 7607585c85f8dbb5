# SPDX-License-Identifier: Apache-2.0
"""The launch passes a float64 device array to an int32 parameter."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], BLOCK * ITEMS):
        block.load(src, base, items, threads=BLOCK)
        block.inclusive_sum(items, threads=BLOCK)
        block.store(dst, base, items, threads=BLOCK)


def main() -> None:
    d_src = cuda.to_device(np.linspace(0.0, 1.0, 1 << 16))
    d_dst = cuda.device_array(1 << 16, np.int32)
    row_cumsum[1, BLOCK](d_src, d_dst)  # E: arg-type: Argument 1 to "__call__" of "_KernelLaunch" has incompatible type "_DeviceNDArray[float64]"
