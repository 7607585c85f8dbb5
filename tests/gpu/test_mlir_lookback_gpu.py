# SPDX-License-Identifier: Apache-2.0
"""On a GPU: cross-block scans in numba-cuda-mlir kernels, the docs' programs against NumPy."""

from __future__ import annotations

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

DOC = doc_programs("lookback")


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [1, 2049, 300_001])
def test_one_array_cumsum(n: int) -> None:
    got, want = DOC.run_cumsum(n=n)
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_selective_scan_of_16_rows() -> None:
    got, want = DOC.run_selective_scan(rows=16, cols=5000)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_stream_compaction() -> None:
    (kept, count), want = DOC.run_compaction(n=100_003)
    assert count == want.size
    np.testing.assert_array_equal(kept, want)
