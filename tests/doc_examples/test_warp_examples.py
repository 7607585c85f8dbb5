# SPDX-License-Identifier: Apache-2.0
"""docs/warp.md's kernels compile and link for sm_90 with numba-cuda, without a GPU."""

from __future__ import annotations

import pytest
from numba.cuda import types

import scan

pytestmark = pytest.mark.nvrtc


@pytest.mark.parametrize(
    ("name", "argtypes"),
    [
        ("row_cumsum_per_warp", (types.int32[:, ::1], types.int32[:, ::1])),
        ("short_row_maxima", (types.float32[:, ::1], types.float32[:, ::1], types.float32[::1])),
    ],
)
@pytest.mark.parametrize("threads", [32, 64, 1024])
def test_docs_kernels_link(name, argtypes, threads):
    from doc_examples.examples import warp

    cubin = scan.compile(getattr(warp, name), argtypes, cc=(9, 0), block=(threads, 1, 1))
    assert cubin[:4] == b"\x7fELF"
