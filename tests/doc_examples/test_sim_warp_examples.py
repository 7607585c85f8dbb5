# SPDX-License-Identifier: Apache-2.0
"""docs/warp.md's kernels in the CUDA simulator, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("cols", [1, 32, 33, 300, 700])
def test_one_row_per_warp(cols):
    from doc_examples.examples import warp

    got, want = warp.run_rows(cols=cols)
    np.testing.assert_array_equal(got, want)


def test_short_rows_on_logical_warps():
    from doc_examples.examples import warp

    got, want = warp.run_short_rows()
    np.testing.assert_array_equal(got, want)
