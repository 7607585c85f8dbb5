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


# a row shorter than a tile, of whole tiles, and with a partial last tile (tiles of 128)
@pytest.mark.parametrize("cols", [50, 256, 300])
def test_segmented_sum(cols):
    from doc_examples.examples import records

    got, expected = records.run_segmented(cols=cols)
    np.testing.assert_array_equal(got, expected.astype(np.float32))


def test_running_argmax():
    from doc_examples.examples import records

    got, expected = records.run_argmax()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("cols", [50, 256, 1000])
def test_selective_scan_recurrence(cols):
    from doc_examples.examples import records

    got, expected = records.run_recurrence(cols=cols)
    scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - expected) <= records.RECURRENCE_TOLERANCE * scale)
