# SPDX-License-Identifier: Apache-2.0
"""On a GPU: the documentation's kernels, their tile loops written with block.tiles.

The same programs the simulator runs in tests/doc_examples/test_sim_examples.py
(reverse scans: tests/gpu/test_reverse_docs_gpu.py; warp scans:
tests/gpu/test_warp_gpu.py; records: tests/gpu/test_records_gpu.py), compiled
by numba-cuda and checked against NumPy on the device, on rows of several
tiles with a partial last one.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.sanitize]


def test_quickstart_and_launch_shape() -> None:
    from doc_examples.examples import launch_shape, quickstart

    got, want = quickstart.run(rows=3, cols=5 * 512 + 77)
    np.testing.assert_array_equal(got, want, strict=True)
    got, want = launch_shape.run()
    np.testing.assert_array_equal(got, want, strict=True)


def test_reduce_examples() -> None:
    from doc_examples.examples import reduce

    got, want = reduce.run_norm(rows=3, cols=3001)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    got, want = reduce.run_argmax(rows=3, cols=3001)
    np.testing.assert_array_equal(got, want)
    got, want = reduce.run_count(rows=3, cols=3001)  # full tiles of 512 positives
    np.testing.assert_array_equal(got, want)


def test_tile_io_and_state_contract_examples() -> None:
    from doc_examples.examples import state_contract, tile_io

    for run in (tile_io.run_copy, tile_io.run_partial, tile_io.run_vectorized):
        got, want = run()
        np.testing.assert_array_equal(got, want, err_msg=run.__name__)
    for got, want in state_contract.run_running_max(rows=3, cols=2000):
        np.testing.assert_array_equal(got, want)
    totals, want = state_contract.run_per_tile_totals()
    np.testing.assert_array_equal(totals, want)
