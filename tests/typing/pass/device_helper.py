# SPDX-License-Identifier: Apache-2.0
"""A @cuda.jit(device=True) helper keeps its own signature when called from a kernel."""

from collections.abc import Callable
from typing import Any, assert_type

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 128

COMPILE_SKIP = (
    "calls a @cuda.jit(device=True) dispatcher, whose compilation asks the current device "
    "for its compute capability; the GPU suite compiles and runs it "
    "(test_device_corpus_kernels_compile_and_run)"
)


@cuda.jit(device=True)
def clamp(x: np.int32, lo: np.int32, hi: np.int32) -> np.int32:
    return max(lo, min(x, hi))


@cuda.jit("int32(int32)", device=True, inline="always")
def square(x: np.int32) -> np.int32:
    return x * x


@cuda.jit
def clamped_prefix(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    i = cuda.grid(1)
    v = clamp(np.int32(src[i]), np.int32(0), np.int32(100))
    dst[i] = block.inclusive_sum(square(v), threads=BLOCK)


def _static_checks() -> None:
    assert_type(clamp(np.int32(1), np.int32(0), np.int32(2)), np.int32)


def check() -> list[tuple[NDArray[Any], NDArray[Any]]]:
    """Launch the kernel on one block; (result, expected) pairs for the GPU suite."""
    src = (np.arange(BLOCK, dtype=np.int32) - 20) * 3
    d_dst = cuda.to_device(np.zeros(BLOCK, dtype=np.int32))
    clamped_prefix[1, BLOCK](cuda.to_device(src), d_dst)
    clamped = np.clip(src, 0, 100).astype(np.int32)
    return [(d_dst.copy_to_host(), np.cumsum(clamped * clamped, dtype=np.int32))]


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (clamped_prefix.py_func, (types.int32[::1], types.int32[::1])),
]
