# SPDX-License-Identifier: Apache-2.0
"""Python int payloads: thread indices and counts need no NumPy scalar when no callback is set."""

from collections.abc import Callable
from typing import assert_type

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

from scan import block

BLOCK = 128


@cuda.jit
def triangular(out: NDArray[np.int64]) -> None:
    t = cuda.threadIdx.x
    out[cuda.grid(1)] = block.inclusive_sum(t, threads=BLOCK)


def _static_checks(t: int, f: float) -> None:
    # never run: what the checker infers for Python scalar payloads
    assert_type(block.inclusive_sum(t, threads=BLOCK), int)
    assert_type(block.exclusive_scan(f, scan_op="max", initial_value=0.0, threads=BLOCK), float)


KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (triangular.py_func, (types.int64[::1],)),
]
