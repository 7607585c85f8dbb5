# SPDX-License-Identifier: Apache-2.0
"""On a GPU: docs/reverse.md's kernels (numba-cuda) against NumPy.

The block-semantics cases of reverse scans are tests/sim/test_sim_reverse.py,
which runs here too; these are the docs' programs on rows longer than the
simulator runs.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.sanitize
def test_suffix_sums_of_rows_walked_from_their_end() -> None:
    from doc_examples.examples import reverse

    got, want = reverse.run_suffix(rows=3, cols=5000)
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_backward_recurrence_of_records() -> None:
    from doc_examples.examples import reverse

    got, want = reverse.run_backward(n=3001)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.sanitize
def test_selective_scan_backward_pass() -> None:
    from doc_examples.examples import reverse

    got, want = reverse.run_selective_backward(rows=3, n=3001)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
