# SPDX-License-Identifier: Apache-2.0
"""On a GPU: reverse scans in numba-cuda-mlir kernels, the docs' programs against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.mlir_programs import doc_programs

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed: its GPU tests do NOT run",
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings(
        "ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning"
    ),
]


def _doc_programs() -> Any:
    return doc_programs("reverse")


DOC = _doc_programs()


def test_suffix_sums_of_rows_walked_from_their_end() -> None:
    got, want = DOC.run_suffix(rows=3, cols=5000)
    np.testing.assert_array_equal(got, want)


def test_backward_recurrence_of_records() -> None:
    got, want = DOC.run_backward(n=3001)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_selective_scan_backward_pass() -> None:
    got, want = DOC.run_selective_backward(rows=3, n=3001)  # h, dx and ddelta
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
