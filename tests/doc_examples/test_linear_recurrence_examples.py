# SPDX-License-Identifier: Apache-2.0
"""docs/linear-recurrence.md's kernels compile and link for sm_90 with numba-cuda, without a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan

pytestmark = pytest.mark.nvrtc


def _status(dtype: np.dtype) -> types.Array:
    return types.Array(from_dtype(scan.tile_status_dtype(dtype)), 2, "C")


@pytest.mark.parametrize("acc", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["forward", "backward", "forward_lookback", "backward_lookback"])
def test_recurrence_kernels_link(acc, name):
    pytest.importorskip("torch")
    from doc_examples.examples import linear_recurrence as lr

    k = lr.kernels(acc)
    row = types.Array(from_dtype(np.dtype(acc)), 2, "C")
    vec = types.Array(from_dtype(np.dtype(acc)), 1, "C")
    argtypes = {
        "forward": (row, row, vec, row, vec),
        "backward": (row, row, row, vec, vec, row, row, vec),
    }[name.removesuffix("_lookback")]
    if name.endswith("lookback"):
        argtypes = (*argtypes, _status(k["pair"]))
    cubin = scan.compile(k[name], argtypes, cc=(9, 0), block=(lr.THREADS, 1, 1))
    assert cubin[:4] == b"\x7fELF"
