# SPDX-License-Identifier: Apache-2.0
"""A stateful callback's state dtype must hold the values' aggregate exactly.

A state narrower than the values (or an integer state for float values, or a
sign the values do not have) would truncate the prefix the callback carries,
silently: an int64 state summing float32 items gives 89.2 where the sum is
90.0. The plan refuses it; wider states of the same kind, and states that
hold every value exactly, are accepted. Records are checked field by field
when the state and the values have the same field names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.plans import scan_plan
from numba import cuda

import scan
import statefn
from scan import ScanTypeError, block
from scan._plan import ArrayFact, ScalarFact
from scan._primitives.block_scan._plan import ScanPlan


def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _callback(state_dtype: Any) -> statefn.StatefulFunction[Any, Any]:
    return statefn.stateful(np.dtype(state_dtype), name="running_total")(running_total)


def _plan(state: Any, values: Any, **over: Any) -> ScanPlan:
    return scan_plan(
        values=ArrayFact(np.dtype(values), 1, 4),
        prefix_op=_callback(state),
        prefix_state=ArrayFact(np.dtype(state), 1, 1),
        **over,
    )


def _message(state: str, values: str, why: str) -> str:
    return (
        f"inclusive_sum: prefix_op=running_total declares state dtype {state}, which cannot "
        f"hold the aggregate of {values} values: {why}; declare the callback with a state "
        f"dtype that holds the values, e.g. @statefn.stateful(np.{values}), or cast the "
        "values to the state's dtype before the scan"
    )


# (state, values, why)
REFUSED = [
    ("int64", "float32", "an integer state drops the fraction of a float32 aggregate"),
    ("int32", "float64", "an integer state drops the fraction of a float64 aggregate"),
    ("uint64", "float32", "an integer state drops the fraction of a float32 aggregate"),
    ("int32", "int64", "int32 is narrower than int64"),
    ("int8", "int16", "int8 is narrower than int16"),
    ("uint16", "uint32", "uint16 is narrower than uint32"),
    ("float32", "float64", "float32 is narrower than float64"),
    ("uint32", "int32", "an unsigned state cannot hold negative int32 aggregates"),
    ("uint64", "int8", "an unsigned state cannot hold negative int8 aggregates"),
    ("int32", "uint32", "int32 cannot hold uint32 values of 2**31 and more"),
    ("int64", "uint64", "int64 cannot hold uint64 values of 2**63 and more"),
    ("int8", "uint8", "int8 cannot hold uint8 values of 2**7 and more"),
    (
        "float32",
        "int32",
        "float32 holds integers exactly only up to 2**24, and int32 values reach 2**31",
    ),
    (
        "float32",
        "uint32",
        "float32 holds integers exactly only up to 2**24, and uint32 values reach 2**32",
    ),
    (
        "float64",
        "int64",
        "float64 holds integers exactly only up to 2**53, and int64 values reach 2**63",
    ),
    (
        "float64",
        "uint64",
        "float64 holds integers exactly only up to 2**53, and uint64 values reach 2**64",
    ),
]

# (state, values): the same dtype, wider of the same kind, a signed state wider
# than unsigned values, a float state whose significand holds every value
ACCEPTED = [
    *((d.name, d.name) for d in statefn.STATE_DTYPES),
    ("int64", "int32"),
    ("int16", "int8"),
    ("uint64", "uint8"),
    ("float64", "float32"),
    ("int64", "uint32"),
    ("int16", "uint8"),
    ("float64", "int32"),
    ("float64", "uint32"),
    ("float32", "int16"),
    ("float32", "uint16"),
    ("float32", "int8"),
]


@pytest.mark.parametrize(("state", "values", "why"), REFUSED)
def test_state_that_cannot_hold_the_values_is_refused(state: str, values: str, why: str) -> None:
    with pytest.raises(ScanTypeError) as info:
        _plan(state, values)
    assert str(info.value) == _message(state, values, why)


@pytest.mark.parametrize(("state", "values"), ACCEPTED)
def test_state_that_holds_the_values_is_accepted(state: str, values: str) -> None:
    plan = _plan(state, values)
    assert plan.state_dtype == np.dtype(state)
    assert plan.value_dtype == np.dtype(values)


def test_scalar_values_and_every_scan_form_are_checked() -> None:
    with pytest.raises(ScanTypeError, match="cannot hold the aggregate of float32 values"):
        scan_plan(
            values=ScalarFact(np.float32),
            prefix_op=_callback("int64"),
            prefix_state=ArrayFact(np.int64, 1, 1),
        )
    with pytest.raises(ScanTypeError, match="cannot hold the aggregate of float64 values"):
        _plan("float32", "float64", function="exclusive_scan", mode="exclusive", scan_op="max")


def test_a_wrong_state_array_is_reported_first() -> None:
    # the array's dtype is the nearer mistake: it must match the declaration
    with pytest.raises(ScanTypeError, match="prefix_state has dtype int32 but the callback"):
        scan_plan(
            values=ArrayFact(np.float32, 1, 4),
            prefix_op=_callback("int64"),
            prefix_state=ArrayFact(np.int32, 1, 1),
        )


PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def _record_plan(state: np.dtype, values: np.dtype) -> ScanPlan:
    def carry(state: Any, block_aggregate: Any) -> Any:
        return (state[0].a, state[0].b)

    def compose(x: Any, y: Any) -> Any:
        return (x.a * y.a, y.a * x.b + y.b)

    return scan_plan(
        function="inclusive_scan",
        scan_op=compose,
        values=ArrayFact(values, 1, 4),
        prefix_op=statefn.stateful(state, name="carry")(carry),
        prefix_state=ArrayFact(state, 1, 1),
    )


def test_record_state_is_checked_field_by_field() -> None:
    state = np.dtype([("a", np.float32), ("b", np.int32)], align=True)
    with pytest.raises(ScanTypeError) as info:
        _record_plan(state, PAIR)
    assert str(info.value) == (
        "inclusive_scan: prefix_op=carry declares state dtype record(a: float32, b: int32), "
        "whose field b (int32) cannot hold the field b (float32) of the values' aggregate: an "
        "integer state drops the fraction of a float32 aggregate; declare the callback with a "
        "state dtype that holds the values, e.g. @statefn.stateful(<the values' record "
        "dtype>), or cast the values to the state's dtype before the scan"
    )


@pytest.mark.parametrize(
    "state",
    [
        PAIR,
        # wider fields
        np.dtype([("a", np.float64), ("b", np.float64)], align=True),
        # the same names in another order
        np.dtype([("b", np.float64), ("a", np.float32)], align=True),
        # other names: a state that carries something else is left alone
        np.dtype([("total", np.int32), ("n", np.int32)], align=True),
        np.dtype([("a", np.int32), ("b", np.int32), ("n", np.int32)], align=True),
    ],
)
def test_record_states_that_hold_or_differ_are_accepted(state: np.dtype) -> None:
    assert _record_plan(state, PAIR).state_dtype == state


def test_record_state_beside_numeric_values_is_left_alone() -> None:
    state = np.dtype([("total", np.int64), ("n", np.int32)], align=True)
    plan = scan_plan(
        function="inclusive_scan",
        values=ArrayFact(np.float32, 1, 4),
        prefix_op=statefn.stateful(state, name="carry")(running_total),
        prefix_state=ArrayFact(state, 1, 1),
    )
    assert plan.state_dtype == state


truncating_total = _callback("int64")


def float_row_cumsum(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.float32)
    for base in range(0, src.shape[0], 128 * 4):
        block.load(src, base, items)
        block.inclusive_sum(items, items, prefix_op=truncating_total, prefix_state=state)
        block.store(dst, base, items)


def test_scan_compile_refuses_it() -> None:
    with pytest.raises(ScanTypeError) as info:
        scan.compile(
            cuda.jit(float_row_cumsum), "void(float32[::1], float32[::1])", cc=(9, 0), block=128
        )
    got = str(getattr(info.value, "rejection", info.value))
    assert got == _message(
        "int64", "float32", "an integer state drops the fraction of a float32 aggregate"
    )


def count_calls(state: Any, block_aggregate: Any) -> Any:
    state[0] = state[0] + 1  # counts tiles: the aggregate never reaches the state
    return block_aggregate - block_aggregate


def carry_and_count(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate if block_aggregate > 0 else prefix + 1
    return prefix


@pytest.mark.parametrize(
    ("state", "values"), [("int32", "float32"), ("int32", "int64"), ("uint8", "float64")]
)
def test_a_state_that_only_counts_is_accepted(state: str, values: str) -> None:
    counter = statefn.stateful(np.dtype(state), name="count_calls")(count_calls)
    plan = scan_plan(
        values=ArrayFact(np.dtype(values), 1, 4),
        prefix_op=counter,
        prefix_state=ArrayFact(np.dtype(state), 1, 1),
    )
    assert plan.prefix_op == counter


def test_a_state_that_carries_the_aggregate_on_some_path_is_refused() -> None:
    carrier = statefn.stateful(np.int32, name="carry_and_count")(carry_and_count)
    with pytest.raises(ScanTypeError, match="an integer state drops the fraction"):
        scan_plan(
            values=ArrayFact(np.float32, 1, 4),
            prefix_op=carrier,
            prefix_state=ArrayFact(np.int32, 1, 1),
        )
