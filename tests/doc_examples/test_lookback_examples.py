# SPDX-License-Identifier: Apache-2.0
"""docs/lookback.md's kernels compile and link for sm_90 with numba-cuda, without a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan

pytestmark = pytest.mark.nvrtc


def _status(dtype, ndim):
    return types.Array(from_dtype(scan.tile_status_dtype(dtype)), ndim, "C")


def _cases():
    from doc_examples.examples import lookback

    pairs = types.Array(from_dtype(lookback.pair), 2, "C")
    return [
        ("cumsum", (types.int32[::1], types.int32[::1], _status(np.int32, 1))),
        ("selective_scan", (pairs, types.float32[:, ::1], _status(lookback.pair, 2))),
        (
            "compact",
            (
                types.float32[::1],
                types.float32,
                types.float32[::1],
                types.int32[::1],
                _status(np.int32, 1),
            ),
        ),
    ]


@pytest.mark.parametrize("index", range(3))
def test_docs_kernels_link(index):
    from doc_examples.examples import lookback

    name, argtypes = _cases()[index]
    kernel = getattr(lookback, name)
    threads = {"cumsum": lookback.THREADS, "selective_scan": lookback.ROW_THREADS}
    block = threads.get(name, lookback.KEEP_THREADS)
    cubin = scan.compile(kernel, argtypes, cc=(9, 0), block=(block, 1, 1))
    assert cubin[:4] == b"\x7fELF"
