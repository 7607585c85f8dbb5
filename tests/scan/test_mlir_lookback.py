# SPDX-License-Identifier: Apache-2.0
"""Cross-block scans under numba-cuda-mlir: the docs' programs compile and link for sm_90."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.mlir_programs import doc_programs

import scan

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed (pip install 'statefn-scan[mlir]'): "
    "the numba-cuda-mlir front end is NOT tested",
)
from numba_cuda_mlir.numba_cuda import types  # noqa: E402
from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype  # noqa: E402

pytestmark = pytest.mark.nvrtc

DOC = doc_programs("lookback")


def _status(dtype: Any, ndim: int) -> Any:
    return types.Array(from_dtype(scan.tile_status_dtype(dtype)), ndim, "C")


@pytest.mark.parametrize(
    ("name", "threads", "argtypes"),
    [
        ("cumsum", DOC.THREADS, (types.int32[::1], types.int32[::1], _status(np.int32, 1))),
        (
            "selective_scan",
            DOC.ROW_THREADS,
            (
                types.Array(from_dtype(DOC.pair), 2, "C"),
                types.float32[:, ::1],
                _status(DOC.pair, 2),
            ),
        ),
        (
            "compact",
            DOC.KEEP_THREADS,
            (
                types.float32[::1],
                types.float32,
                types.float32[::1],
                types.int32[::1],
                _status(np.int32, 1),
            ),
        ),
    ],
)
def test_docs_programs_compile_and_link(name: str, threads: int, argtypes: Any) -> None:
    kernel = getattr(DOC, name)
    cubin = scan.compile(kernel, argtypes, cc=(9, 0), block=(threads, 1, 1))
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
