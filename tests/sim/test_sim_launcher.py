# SPDX-License-Identifier: Apache-2.0
"""``scan.launcher``: repeated launches give what ``kernel[grid, block](...)`` gives.

In the simulator every call launches through ``kernel[...]``; on a GPU
(``SCAN_TESTS_BACKEND=gpu``) calls after the first launch the compiled
kernel with cuda.core directly, and arguments of other types are refused.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from helpers.callback_corpus import running_total
from numba import cuda

import scan
from scan import block

pytestmark = pytest.mark.sim
ON_GPU = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"

THREADS, ITEMS = 32, 4


@cuda.jit
def row_cumsum(src: Any, dst: Any, scale: Any, offset: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int64)
    row = cuda.blockIdx.x
    for base in range(0, src.shape[1], block.tile_size(items)):
        block.load(src[row], base, items, oob_default=0)
        for i in range(ITEMS):
            items[i] = items[i] * scale
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        for i in range(ITEMS):
            items[i] = items[i] + offset
        block.store(dst[row], base, items)


def _device(a: np.ndarray) -> Any:
    return cuda.to_device(a)


def test_repeated_launches_equal_the_kernels_own() -> None:
    rng = np.random.default_rng(1)
    rows, cols = 3, 300
    launch = scan.launcher(row_cumsum, rows, THREADS)
    assert not launch.direct  # nothing is bound before the first launch
    for k in range(3):
        x = rng.integers(-50, 50, (rows, cols))
        d_x, d_y = _device(x), _device(np.zeros_like(x))
        launch(d_x, d_y, k + 1, np.int64(7))
        np.testing.assert_array_equal(d_y.copy_to_host(), np.cumsum(x * (k + 1), axis=1) + 7)
    assert launch.direct == ON_GPU
    assert "row_cumsum" in repr(launch)


def test_a_launcher_on_a_stream() -> None:
    x = np.arange(2 * 200, dtype=np.int64).reshape(2, 200)
    stream = cuda.stream()
    launch = scan.launcher(row_cumsum, (2,), (THREADS,), stream=stream)
    d_x = cuda.to_device(x, stream=stream)
    for _ in range(2):
        d_y = cuda.device_array_like(d_x, stream=stream)
        launch(d_x, d_y, 1, 0)
        got = d_y.copy_to_host(stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(got, np.cumsum(x, axis=1))


@cuda.jit
def cumsum_lookback(src: Any, dst: Any, status: Any) -> None:
    items = cuda.local.array(ITEMS, np.int64)
    base = cuda.blockIdx.x * THREADS * ITEMS
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status)
    block.store(dst, base, items)


def test_a_launcher_with_a_tile_status_reset_between_launches() -> None:
    n = 1000
    tiles = -(-n // (THREADS * ITEMS))
    status = scan.tile_status(tiles, np.int64)
    launch = scan.launcher(cumsum_lookback, tiles, THREADS)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.integers(-9, 9, n)
        d_x, d_y = _device(x), _device(np.zeros_like(x))
        launch(d_x, d_y, status)
        status.reset()
        np.testing.assert_array_equal(d_y.copy_to_host(), np.cumsum(x))


@pytest.mark.skipif(not ON_GPU, reason="the simulator launches through kernel[...], which converts")
def test_other_argument_types_are_refused_after_the_first_launch() -> None:
    x = np.ones((1, 64), np.int64)
    launch = scan.launcher(row_cumsum, 1, THREADS)
    launch(_device(x), _device(x), 1, 0)
    with pytest.raises(TypeError, match=r"argument 0 is array\(int32.*compiled for array\(int64"):
        launch(_device(x.astype(np.int32)), _device(x), 1, 0)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(3 given\)"):
        launch(_device(x), _device(x), 1)
    with pytest.raises(TypeError, match=r"a ndarray is not device memory; copy it to the device"):
        launch(x, _device(x), 1, 0)  # a host array: kernel[...] would copy it at every launch


@pytest.mark.parametrize(
    ("grid", "block_", "kw", "error", "match"),
    [
        (0, 32, {}, ValueError, r"grid must be a positive int"),
        (1, (32, 1, 1, 1), {}, ValueError, r"block must be a positive int or a tuple of 1 to 3"),
        (1, 32, {"sharedmem": -1}, ValueError, r"sharedmem must be a number of bytes"),
        (1.5, 32, {}, ValueError, r"grid must be"),
    ],
)
def test_launch_shapes_are_checked(grid: Any, block_: Any, kw: Any, error: Any, match: str) -> None:
    with pytest.raises(error, match=match):
        scan.launcher(row_cumsum, grid, block_, **kw)


def plain_function(x: Any) -> None:
    pass


def test_a_python_function_is_not_a_kernel() -> None:
    with pytest.raises(TypeError, match=r"takes a @cuda.jit kernel \(got function\)"):
        scan.launcher(plain_function, 1, 1)
