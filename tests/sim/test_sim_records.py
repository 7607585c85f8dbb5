# SPDX-License-Identifier: Apache-2.0
"""Record values and state: every scan entry point, payload and algorithm, tile I/O
of records, and the three worked programs (simulator, and unchanged on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import record_cases as rc

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("case", rc.record_cases(), ids=str)
def test_record_scan_matches_reference(case):
    got, expected = rc.run(case)
    np.testing.assert_array_equal(got["a"], expected["a"].astype(np.float32))
    np.testing.assert_array_equal(got["b"], expected["b"].astype(np.float32))


def test_segmented_sum():
    from doc_examples.examples import records

    got, expected = records.run_segmented()
    np.testing.assert_array_equal(got, expected.astype(np.float32))


def test_running_argmax():
    from doc_examples.examples import records

    got, expected = records.run_argmax()
    np.testing.assert_array_equal(got, expected)


def test_selective_scan_recurrence():
    from doc_examples.examples import records

    got, expected = records.run_recurrence()
    scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - expected) <= records.RECURRENCE_TOLERANCE * scale)
