# SPDX-License-Identifier: Apache-2.0
"""docs/lookback.md's kernels in the CUDA simulator, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("n", [1, 2048, 2049, 9000])
def test_one_array_cumsum(n):
    from doc_examples.examples import lookback

    got, want = lookback.run_cumsum(n)
    np.testing.assert_array_equal(got, want)


def test_selective_scan_one_status_row_per_sequence():
    from doc_examples.examples import lookback

    got, want = lookback.run_selective_scan(rows=3, cols=1100)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [5, 3000])
def test_stream_compaction_carries_counts_across_blocks(n):
    from doc_examples.examples import lookback

    (kept, count), want = lookback.run_compaction(n)
    assert count == want.size
    np.testing.assert_array_equal(kept, want)
