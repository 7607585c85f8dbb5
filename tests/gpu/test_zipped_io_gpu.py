# SPDX-License-Identifier: Apache-2.0
"""On a GPU: zipped tile I/O over long rows, against NumPy and the two-loads kernel.

The block-semantics cases are tests/sim/test_sim_zipped_io.py, which runs here
too; these run the recurrence and segmented sum of docs/records.md at full
size, every algorithm over rows whose tiles start at every 16-byte alignment
(vector accesses and their fallbacks), the arrays of other lengths, and the
same kernels compiled by numba-cuda-mlir.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import numpy as np
import pytest
from numba import cuda

from scan import block
from scan._vocab import IO_ALGORITHMS

pytestmark = pytest.mark.gpu

PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
THREADS = 256
ITEMS = 4


@pytest.mark.sanitize
def test_docs_recurrence_long_rows() -> None:
    from doc_examples.examples import records

    got, expected = records.run_recurrence(rows=8, cols=65536)
    scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - expected) <= records.RECURRENCE_TOLERANCE * scale)


@pytest.mark.sanitize
def test_docs_segmented_sum_long_rows() -> None:
    from doc_examples.examples import records

    got, expected = records.run_segmented(rows=16, cols=20000)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-3)


def _round_trip(algorithm: Any) -> Any:
    @cuda.jit
    def round_trip(a, b, start, a_out, b_out, h):
        row = cuda.blockIdx.x
        first = start[row]
        items = cuda.local.array(ITEMS, PAIR)
        for base in range(first, a.shape[1], block.tile_size(items)):
            block.load((a[row], b[row]), base, items, oob_default=(0.0, 0.0), algorithm=algorithm)
            block.store((a_out[row], b_out[row]), base, items, algorithm=algorithm)
            block.store(h[row], base, items, field="b", algorithm=algorithm)

    return round_trip


@pytest.mark.parametrize("algorithm", [None, *IO_ALGORITHMS])
def test_every_algorithm_at_every_alignment(algorithm: Any) -> None:
    # row r starts its tiles at item r: every alignment mod 16 bytes, partial last tiles
    rows, cols = 8, 3 * THREADS * ITEMS + 5
    rng = np.random.default_rng(1)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    start = np.arange(rows, dtype=np.int64)
    a_out = np.zeros_like(a)
    b_out = np.zeros_like(b)
    h = np.zeros_like(b)
    _round_trip(algorithm)[rows, THREADS](a, b, start, a_out, b_out, h)
    for r in range(rows):
        np.testing.assert_array_equal(a_out[r, r:], a[r, r:])
        np.testing.assert_array_equal(b_out[r, r:], b[r, r:])
        np.testing.assert_array_equal(h[r, r:], b[r, r:])
        assert not a_out[r, :r].any()


@cuda.jit
def shortest_ends_the_tile(a, b, out):
    items = cuda.local.array(ITEMS, PAIR)
    for base in range(0, out.shape[0], block.tile_size(items)):
        block.load((a, b), base, items, oob_default=(-1.0, -2.0))
        block.store(out, base, items, field="a")


@pytest.mark.sanitize
def test_the_shortest_array_ends_the_tile() -> None:
    a = np.arange(5000, dtype=np.float32)
    b = np.arange(4100, dtype=np.float32)  # no item of b past 4100 is read
    out = np.zeros(5000, np.float32)
    shortest_ends_the_tile[1, THREADS](a, b, out)
    np.testing.assert_array_equal(out[:4100], a[:4100])
    assert (out[4100:] == -1.0).all()


def test_docs_recurrence_under_numba_cuda_mlir(monkeypatch: pytest.MonkeyPatch) -> None:
    mlir = pytest.importorskip(
        "numba_cuda_mlir",
        reason="!!!!! numba-cuda-mlir is not installed: its zipped tile I/O is NOT run",
    )
    from doc_examples.examples import records

    fn = records.selective_scan.py_func
    body = pytypes.FunctionType(fn.__code__, {**fn.__globals__, "cuda": mlir.cuda}, fn.__name__)
    monkeypatch.setattr(records, "selective_scan", mlir.cuda.jit(body))
    got, expected = records.run_recurrence(rows=8, cols=65536)
    scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - expected) <= records.RECURRENCE_TOLERANCE * scale)
