# SPDX-License-Identifier: Apache-2.0
"""The kernel-side numba.cuda API as the stubs type it (and not as numba's stale copy would)."""

from collections.abc import Callable
from typing import Any, assert_type

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

BLOCK = 128
TILE = BLOCK + 2  # shared array shapes must be compile-time constants


@cuda.jit(cache=False, lto=True, fastmath=True)
def smooth(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    tile = cuda.shared.array(TILE, np.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    n = src.shape[0]
    tile[t] = src[i] if i < n else np.float32(0)
    if cuda.threadIdx.x == 0:
        tile[0] = src[i - 1] if i > 0 else np.float32(0)
    if cuda.threadIdx.x == cuda.blockDim.x - 1:
        tile[t + 1] = src[i + 1] if i + 1 < n else np.float32(0)
    cuda.syncthreads()
    if i < n:
        dst[i] = (tile[t - 1] + tile[t] + tile[t + 1]) / np.float32(3)


@cuda.jit
def transpose(src: NDArray[np.float64], dst: NDArray[np.float64]) -> None:
    x, y = cuda.grid(2)
    if x < src.shape[1] and y < src.shape[0]:
        dst[x, y] = src[y, x]


@cuda.jit
def vote(values: NDArray[np.int32], positive_warps: NDArray[np.int32]) -> None:
    i = cuda.grid(1)
    is_positive = values[i] > 0
    if cuda.all_sync(0xFFFFFFFF, is_positive) and cuda.laneid == 0:
        cuda.atomic.add(positive_warps, 0, 1)
    cuda.syncwarp()


def _static_checks(x: NDArray[np.float32]) -> None:
    # never run: the stubs win over numba's bundled numba/cuda
    assert_type(cuda.grid(1), int)
    assert_type(cuda.grid(2), tuple[int, int])
    assert_type(cuda.gridsize(3), tuple[int, int, int])
    assert_type(cuda.threadIdx.x, int)
    # local and shared arrays carry their shape; an element index gives the scalar
    assert_type(cuda.local.array(4, np.int32).shape, tuple[int])
    assert_type(cuda.local.array(4, np.int32)[0], np.int32)
    assert_type(cuda.shared.array((8,), np.dtype(np.int64))[cuda.threadIdx.x], np.int64)
    assert_type(cuda.shared.array((16, 16), np.float64).shape, tuple[int, int])
    assert_type(cuda.shared.array((16, 16), np.float64)[0, 1], np.float64)
    assert_type(cuda.local.array((2, 2, 2), np.dtype(np.uint8)).shape, tuple[int, int, int])
    assert_type(cuda.local.array((2, 2, 2), np.dtype(np.uint8))[0, 1, 1], np.uint8)
    assert_type(cuda.local.array(1, np.dtype(np.uint8))[1:], NDArray[np.uint8])
    assert_type(cuda.shared.array((16, 16), np.float64)[0], NDArray[np.float64])
    assert_type(x[0], Any)  # a kernel argument's shape is unknown: NumPy's Any
    assert_type(cuda.atomic.max(x, 0, np.float32(1)), np.float32)
    assert_type(cuda.shfl_down_sync(0xFFFFFFFF, np.int32(3), 1), np.int32)
    assert_type(cuda.syncthreads_count(True), int)
    assert_type(cuda.launchconfig.current_launch_config() is None, bool)


def main() -> None:
    n = 1 << 20
    x = cuda.to_device(np.ones(n, dtype=np.float32))
    y = cuda.device_array(n, np.float32)
    stream = cuda.stream()
    smooth[n // BLOCK, BLOCK, stream](x, y)
    smooth[n // BLOCK, BLOCK, stream, 0](y, x)
    stream.synchronize()
    m = cuda.to_device(np.zeros((64, 32), dtype=np.float64))
    mt = cuda.device_array((32, 64), np.float64)
    transpose[(2, 4), (16, 16)](m, mt)
    counts = cuda.device_array(1, np.int32)
    vote.forall(n)(cuda.to_device(np.arange(n, dtype=np.int32)), counts)
    host: NDArray[np.float32] = y.copy_to_host()
    assert host.shape == (n,)
    cuda.synchronize()


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (smooth.py_func, (types.float32[::1], types.float32[::1])),
    (transpose.py_func, (types.float64[:, ::1], types.float64[:, ::1])),
    (vote.py_func, (types.int32[::1], types.int32[::1])),
]
