# SPDX-License-Identifier: Apache-2.0
"""On a GPU: block.adjacent_difference and block.flag_heads in numba-cuda-mlir kernels.

The documentation's programs (docs/neighbours.md: a row's differences carried
across tiles, and each item's run number from its heads and a carried scan),
their bodies compiled by numba-cuda-mlir, against NumPy.
"""

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
    pytest.mark.sanitize,
    pytest.mark.filterwarnings(
        "ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning"
    ),
]

DOC = doc_programs("neighbours")


def test_row_differences() -> None:
    src = np.random.default_rng(0).integers(-1000, 1000, (4, 3001)).astype(np.int32)
    dst = np.zeros_like(src)
    DOC.row_diff[4, DOC.THREADS](src, dst)
    np.testing.assert_array_equal(dst, np.diff(src, axis=1, prepend=0))


def test_run_numbers_from_heads() -> None:
    rng = np.random.default_rng(1)
    src = np.repeat(rng.standard_normal((4, 2000)), 3, axis=1)[:, :5000].astype(np.float32)
    dst = np.zeros(src.shape, np.int32)
    DOC.run_ids[4, DOC.THREADS](src, dst)
    heads = np.concatenate([np.zeros((4, 1), bool), src[:, 1:] != src[:, :-1]], axis=1)
    np.testing.assert_array_equal(dst, np.cumsum(heads, axis=1, dtype=np.int32))
