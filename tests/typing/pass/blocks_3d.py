# SPDX-License-Identifier: Apache-2.0
"""A 3-D block (8 x 4 x 4): an inclusive float64 sum over the whole block's volume."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block


@cuda.jit
def volume_prefix(vox: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tz = cuda.threadIdx.z
    rank = (tz * cuda.blockDim.y + ty) * cuda.blockDim.x + tx
    i = cuda.blockIdx.x * 128 + rank
    value = np.float64(vox[i])
    total = block.inclusive_sum(value, threads=(8, 4, 4), algorithm="warp_scans")
    out[i] = total


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (volume_prefix.py_func, (types.float64[::1], types.float64[::1])),
]
