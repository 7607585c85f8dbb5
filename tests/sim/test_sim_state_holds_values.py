# SPDX-License-Identifier: Apache-2.0
"""The simulator refuses a state dtype that cannot hold the values, as the compiled path does.

Without the refusal, an int64 state carrying the running total of float32
items truncates it (89.2 where the sum is 90.0). The messages are those of
tests/scan/test_state_holds_values.py, prefixed with the thread and block.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import SIMULATOR
from numba import cuda

import statefn
from scan import ScanTypeError, block

pytestmark = pytest.mark.sim


def _running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _kernel(state_dtype, value_dtype):
    callback = statefn.stateful(np.dtype(state_dtype), name="running_total")(_running_total)
    state_type = np.dtype(state_dtype).type
    value_type = np.dtype(value_dtype).type

    @cuda.jit
    def row_cumsum(src, dst):
        state = cuda.local.array(1, state_type)
        state[0] = 0
        items = cuda.local.array(2, value_type)
        for base in range(0, src.shape[0], 64):
            block.load(src, base, items)
            block.inclusive_sum(items, items, prefix_op=callback, prefix_state=state)
            block.store(dst, base, items)

    return row_cumsum


def _run(state_dtype, value_dtype):
    src = (np.arange(128) % 7 + 0.25).astype(value_dtype)
    dst = np.zeros_like(src)
    _kernel(state_dtype, value_dtype)[1, 32](src, dst)
    return src, dst


@pytest.mark.parametrize(
    ("state", "values", "why"),
    [
        ("int64", "float32", "an integer state drops the fraction of a float32 aggregate"),
        ("float32", "float64", "float32 is narrower than float64"),
        ("int32", "int64", "int32 is narrower than int64"),
        ("uint32", "int32", "an unsigned state cannot hold negative int32 aggregates"),
    ],
)
def test_state_that_cannot_hold_the_values_is_refused(state, values, why):
    with pytest.raises(ScanTypeError) as info:
        _run(state, values)
    got = str(getattr(info.value, "rejection", info.value))
    if SIMULATOR:  # the simulator names the thread that raised
        assert re.fullmatch(r"tid=\[\d+, \d+, \d+\] ctaid=\[\d+, \d+, \d+\]: (.*)", got, re.S), got
        got = got.split(": ", 1)[1]
    assert got == (
        f"inclusive_sum: prefix_op=running_total declares state dtype {state}, which cannot "
        f"hold the aggregate of {values} values: {why}; declare the callback with a state "
        f"dtype that holds the values, e.g. @statefn.stateful(np.{values}), or cast the "
        "values to the state's dtype before the scan"
    )


@pytest.mark.parametrize(("state", "values"), [("float64", "float32"), ("int64", "int32")])
def test_wider_state_gives_the_exact_cumsum(state, values):
    src, dst = _run(state, values)
    np.testing.assert_array_equal(dst, np.cumsum(src.astype(np.float64)).astype(values))
