# SPDX-License-Identifier: Apache-2.0
"""The compiler names a callback's wrong result before Numba's own words.

``scan.compile(..., cc=(9, 0))`` (no GPU) of a kernel whose callback forgets
``return``, returns its state array, or returns a record where a number is
expected, and of a scan operator without ``return``: ``CallbackCompileError``
naming the callback and its ``def`` line, the text the simulator gives too
(``tests/helpers/callback_results.py``); numba-cuda-mlir says the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import callback_results as cr
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import block

pytestmark = pytest.mark.nvrtc

CC = (9, 0)


def _kernel(case: str, jit: Any = cuda.jit, device: Any = cuda) -> Any:
    callback, state_dtype, _, _ = cr.CASES[case]
    record = state_dtype is not None and np.dtype(state_dtype).names is not None

    def prefix_scan(a: Any) -> None:
        state = device.local.array(1, state_dtype)
        if record:
            state[0].total = 0
            state[0].tiles = 0
        else:
            state[0] = 0
        i = device.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=callback, prefix_state=state, threads=64)

    def operator_scan(a: Any) -> None:
        i = device.threadIdx.x
        a[i] = block.inclusive_scan(a[i], scan_op=callback, threads=64)

    return jit(prefix_scan if state_dtype is not None else operator_scan)


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "rejection", exc))


@pytest.mark.parametrize("case", sorted(cr.CASES))
def test_wrong_result_is_named(case: str) -> None:
    with pytest.raises(statefn.CallbackCompileError) as info:
        scan.compile(_kernel(case), (types.Array(types.int32, 1, "C"),), cc=CC)
    assert _message(info.value) == cr.expected(case)


@pytest.mark.parametrize("case", ["no_return", "state_array"])
def test_numba_cuda_mlir_says_the_same(case: str) -> None:
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed")
    from numba_cuda_mlir import cuda as mcuda
    from numba_cuda_mlir.numba_cuda import types as mtypes

    kernel = _kernel(case, jit=mcuda.jit, device=mcuda)
    with pytest.raises(statefn.CallbackCompileError) as info:
        scan.compile(kernel, (mtypes.Array(mtypes.int32, 1, "C"),), cc=CC)
    assert _message(info.value) == cr.expected(case)
