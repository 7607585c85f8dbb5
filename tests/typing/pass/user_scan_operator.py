# SPDX-License-Identifier: Apache-2.0
"""Inclusive scan with a user operator declared once with statefn.scan_op."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128


@statefn.scan_op
def larger_magnitude(a: np.float32, b: np.float32) -> np.float32:
    return a if abs(a) >= abs(b) else b


@cuda.jit
def peak_so_far(signal: NDArray[np.float32], peaks: NDArray[np.float32]) -> None:
    i = cuda.grid(1)
    x = signal[i] if i < signal.shape[0] else np.float32(0)
    peak = block.inclusive_scan(np.float32(x), scan_op=larger_magnitude, threads=BLOCK)
    if i < peaks.shape[0]:
        peaks[i] = peak


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (peak_so_far.py_func, (types.float32[::1], types.float32[::1])),
]
