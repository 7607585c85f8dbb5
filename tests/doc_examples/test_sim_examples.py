# SPDX-License-Identifier: Apache-2.0
"""Run the documentation's kernel examples in the CUDA simulator."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytestmark = pytest.mark.sim


def test_quickstart_runs():
    from doc_examples.examples import quickstart

    result, expected = quickstart.run()
    np.testing.assert_array_equal(result, expected, strict=True)


@pytest.mark.parametrize(
    ("threads", "warp_scans", "expected"),
    [
        (16, False, 16),
        (32, False, 32),
        (62, False, 31),
        (64, False, 32),
        (100, False, 25),
        (64, True, 32),
        (96, True, 32),
    ],
)
def test_who_calls(threads, warp_scans, expected):
    from doc_examples.examples import state_contract as sc

    calls = sc.who_called(threads, warp_scans)
    # callers are ranks 0 .. n-1, each called once
    np.testing.assert_array_equal(calls[:expected], 1)
    np.testing.assert_array_equal(calls[expected:], 0)
    assert sc.callers(threads, warp_scans) == expected
    if not warp_scans:
        assert sc.raking_threads(threads) == expected


def test_authoritative_state():
    from doc_examples.examples import state_contract as sc

    pairs = sc.run_running_max()
    assert len(pairs) == 2
    for got, want in pairs:
        np.testing.assert_array_equal(got, want)


def test_tile_io_examples():
    from doc_examples.examples import tile_io

    for run in (tile_io.run_copy, tile_io.run_partial, tile_io.run_vectorized):
        got, want = run()
        np.testing.assert_array_equal(got, want, err_msg=run.__name__)


def test_error_in_simulated_kernel():
    from doc_examples.examples import errors_demo
    from scan import PlanError

    with pytest.raises(PlanError) as info:
        errors_demo.forgot_the_state[1, 32](np.zeros(32, np.int32))
    # the simulator names the thread that raised first (any of the block's)
    assert re.match(
        r"tid=\[\d+, 0, 0\] ctaid=\[0, 0, 0\]: inclusive_sum: prefix_op=running_total is stateful",
        str(info.value),
    )


def test_guarded_side_effect():
    from doc_examples.examples import state_contract as sc

    totals, want = sc.run_per_tile_totals()
    np.testing.assert_array_equal(totals, want)


def test_reduce_examples():
    from doc_examples.examples import reduce

    got, want = reduce.run_norm()
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    got, want = reduce.run_argmax()
    np.testing.assert_array_equal(got, want)
    got, want = reduce.run_count()
    np.testing.assert_array_equal(got, want)


def test_neighbours_examples():
    from doc_examples.examples import neighbours

    got, want = neighbours.run_row_diff()
    np.testing.assert_array_equal(got, want)
    got, want = neighbours.run_run_ids()
    np.testing.assert_array_equal(got, want)


def test_launch_shape_kernel_runs():
    from doc_examples.examples import launch_shape

    result, expected = launch_shape.run()
    np.testing.assert_array_equal(result, expected, strict=True)


def test_reverse_examples():
    from doc_examples.examples import reverse

    got, want = reverse.run_suffix()
    np.testing.assert_array_equal(got, want)
    got, want = reverse.run_backward()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_reverse_selective_backward_example():
    from doc_examples.examples import reverse

    got, want = reverse.run_selective_backward()  # h, dx and ddelta
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_half_precision_examples():
    pytest.importorskip("ml_dtypes", reason="bfloat16 needs ml_dtypes")
    from doc_examples.examples import half_precision as hp

    got, want = hp.run_bf16_cumsum()
    # float32 sums in CUB's order, then one rounding: within bfloat16's step of NumPy's
    scale = np.abs(want.astype(np.float32)).max(axis=1, keepdims=True)
    diff = np.abs(got.astype(np.float32) - want.astype(np.float32))
    assert np.all(diff <= 2.0**-7 * scale)
    turned, rotation = hp.run_rotation()
    np.testing.assert_allclose(turned, rotation, atol=1e-5)
    half, wide, exact = hp.run_half_sums()
    # float32 items: the exact sums, rounded once; float16 items: several steps off
    np.testing.assert_array_equal(wide, exact.astype(np.float16))
    assert np.abs(half.astype(np.float64) - exact).max() > 4 * 2.0**-8
