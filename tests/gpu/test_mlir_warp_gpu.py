# SPDX-License-Identifier: Apache-2.0
"""On a GPU: warp scans in numba-cuda-mlir kernels, the docs' programs against NumPy."""

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

DOC = doc_programs("warp")


@pytest.mark.parametrize("cols", [32, 33, 500, 4096])
@pytest.mark.parametrize("threads", [32, 256, 1024])
def test_one_row_per_warp(cols: int, threads: int) -> None:
    got, want = DOC.run_rows(rows=37, cols=cols, threads=threads)
    np.testing.assert_array_equal(got, want)


def test_short_rows_on_logical_warps() -> None:
    got, want = DOC.run_short_rows(rows=64)
    np.testing.assert_array_equal(got, want)
