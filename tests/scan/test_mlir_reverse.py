# SPDX-License-Identifier: Apache-2.0
"""Reverse scans under numba-cuda-mlir: the docs' programs compile and link for sm_90."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.mlir_programs import doc_programs

import scan

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed (pip install 'statefn-scan[mlir]'): "
    "the numba-cuda-mlir front end is NOT tested",
)
from numba_cuda_mlir.numba_cuda import types  # noqa: E402

pytestmark = pytest.mark.nvrtc


def _doc_programs() -> Any:
    return doc_programs("reverse")


@pytest.mark.parametrize(
    ("name", "argtypes"),
    [
        ("row_suffix_sums", (types.int32[:, ::1], types.int32[:, ::1])),
        ("backward", (types.float64[::1], types.float64[::1], types.float64[::1])),
        (
            "selective_backward",
            (types.float64[:, ::1], types.float64[::1]) + (types.float64[:, ::1],) * 7,
        ),
    ],
)
def test_docs_programs_compile_and_link(name: str, argtypes: Any) -> None:
    kernel = getattr(_doc_programs(), name)
    cubin = scan.compile(kernel, argtypes, cc=(9, 0), block=(64, 1, 1))
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
