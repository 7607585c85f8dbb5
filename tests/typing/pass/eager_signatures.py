# SPDX-License-Identifier: Apache-2.0
"""Kernels and device functions compiled eagerly from explicit signature strings."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

BLOCK = 128

COMPILE_SKIP = (
    "signature-decorated functions compile when the module is imported, which asks the "
    "current device for its compute capability; the GPU suite compiles and runs them "
    "(test_device_corpus_kernels_compile_and_run)"
)


@cuda.jit("void(float32[::1], float32[::1], float32)")
def saxpy(x: NDArray[np.float32], y: NDArray[np.float32], a: float) -> None:
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        y[i] = a * x[i] + y[i]


@cuda.jit(types.void(types.int32[::1], types.int32), lineinfo=True)
def fill(out: NDArray[np.int32], value: int) -> None:
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = value


@cuda.jit(["float32(float32, float32)", "float64(float64, float64)"], device=True)
def hypot2(a: float, b: float) -> float:
    return a * a + b * b


def main() -> None:
    n = 1 << 20
    x = cuda.to_device(np.ones(n, dtype=np.float32))
    y = cuda.device_array(n, np.float32)
    saxpy[n // BLOCK, BLOCK](x, y, 2.0)
    fill[n // BLOCK, BLOCK](cuda.device_array(n, np.int32), 7)


def check() -> list[tuple[NDArray[Any], NDArray[Any]]]:
    """Launch the kernels on small arrays; (result, expected) pairs for the GPU suite."""
    n = 4 * BLOCK
    x = np.arange(n, dtype=np.float32)
    d_y = cuda.to_device(np.ones(n, dtype=np.float32))
    saxpy[n // BLOCK, BLOCK](cuda.to_device(x), d_y, 2.0)
    d_out = cuda.to_device(np.zeros(n, dtype=np.int32))
    fill[n // BLOCK, BLOCK](d_out, 7)
    return [
        (d_y.copy_to_host(), 2 * x + 1),
        (d_out.copy_to_host(), np.full(n, 7, dtype=np.int32)),
    ]


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (saxpy.py_func, (types.float32[::1], types.float32[::1], types.float32)),
    (fill.py_func, (types.int32[::1], types.int32)),
]
