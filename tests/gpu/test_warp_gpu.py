# SPDX-License-Identifier: Apache-2.0
"""On a GPU: docs/warp.md's kernels (numba-cuda) against NumPy.

The block-semantics cases of warp scans (every operator, lane count, item
count, seed and aggregate; records; warps making different numbers of
scans) are tests/sim/test_sim_warp.py, which runs here too.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.sanitize
@pytest.mark.parametrize("cols", [32, 33, 500, 4096])
@pytest.mark.parametrize("threads", [32, 256, 1024])
def test_one_row_per_warp(cols: int, threads: int) -> None:
    from doc_examples.examples import warp

    got, want = warp.run_rows(rows=37, cols=cols, threads=threads)
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_short_rows_on_logical_warps() -> None:
    from doc_examples.examples import warp

    got, want = warp.run_short_rows(rows=64)
    np.testing.assert_array_equal(got, want)
