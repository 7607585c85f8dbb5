# SPDX-License-Identifier: Apache-2.0
"""On a GPU: block reduce in numba-cuda-mlir kernels against NumPy.

The documentation's reduce programs (a per-row norm, a row-wise argmax over
(value, position) records with ``broadcast=False``, and a count accumulated in
int64 with ``dtype=``), their bodies compiled by
numba-cuda-mlir, and sums and maxima over every algorithm with partial tiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.mlir_programs import doc_programs

from scan import block

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed: its GPU tests do NOT run",
)
from numba_cuda_mlir import cuda  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings(
        "ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning"
    ),
]


def _doc_programs() -> Any:
    return doc_programs("reduce")


DOC = _doc_programs()
THREADS, ITEMS, TILE = DOC.THREADS, DOC.ITEMS, DOC.TILE


def test_per_row_norm() -> None:
    src = np.random.default_rng(0).standard_normal((5, 3000)).astype(np.float32)
    dst = np.zeros_like(src)
    DOC.normalize_rows[5, THREADS](src, dst)
    ref = src.astype(np.float64)
    np.testing.assert_allclose(dst, ref / np.linalg.norm(ref, axis=1, keepdims=True), rtol=2e-5)


def test_row_argmax_of_records() -> None:
    src = np.random.default_rng(1).integers(0, 100, (5, 3001)).astype(np.float32)
    best = np.zeros(5, np.int32)
    DOC.argmax_rows[5, THREADS](src, best)
    np.testing.assert_array_equal(best, src.argmax(axis=1))


def test_count_accumulated_in_int64() -> None:
    src = np.random.default_rng(3).standard_normal((5, 3001)).astype(np.float32)
    src[0] = np.abs(src[0]) + 1  # 512 positives a full tile: uint8 would wrap
    counts = np.zeros(5, np.int64)
    DOC.count_positive[5, THREADS](src, counts)
    np.testing.assert_array_equal(counts, (src > 0).sum(axis=1))


def _partial_max(algorithm: str) -> Any:
    @cuda.jit
    def kernel(src: Any, valid: Any, out: Any) -> None:
        items = cuda.local.array(ITEMS, np.int32)
        for i in range(ITEMS):
            items[i] = src[cuda.blockIdx.x, cuda.threadIdx.x * ITEMS + i]
        top = block.reduce(items, "max", valid=valid[cuda.blockIdx.x], algorithm=algorithm)
        total = block.sum(items, algorithm=algorithm)
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x, 0] = top
            out[cuda.blockIdx.x, 1] = total

    return kernel


@pytest.mark.parametrize("algorithm", ["warp_reductions", "raking", "raking_commutative_only"])
def test_partial_tiles_and_sums(algorithm: str) -> None:
    rng = np.random.default_rng(2)
    valid = np.array([1, 2, 63, 511, 512, 10_000], np.int64)
    src = rng.integers(-(2**20), 2**20, (len(valid), TILE), dtype=np.int32)
    out = np.zeros((len(valid), 2), np.int32)
    _partial_max(algorithm)[len(valid), THREADS](src, valid, out)
    want = [src[r, : min(n, TILE)].max() for r, n in enumerate(valid)]
    np.testing.assert_array_equal(out[:, 0], want)
    np.testing.assert_array_equal(out[:, 1], src.sum(axis=1, dtype=np.int64).astype(np.int32))
