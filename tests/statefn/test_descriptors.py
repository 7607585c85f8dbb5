# SPDX-License-Identifier: Apache-2.0
"""Descriptor construction, state dtypes, equality, copies and host calls."""

from __future__ import annotations

import re
from typing import Any

import attrs
import numpy as np
import pytest

import statefn
from statefn import ScanOperator, StateDtypeError, StatefulFunction, StatelessFunction

ALLOWED = (
    "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, "
    "complex64, complex128, bfloat16 (ml_dtypes.bfloat16)"
)
FIELDS = "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64"


def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def double(block_aggregate: Any) -> Any:
    return block_aggregate * 2


def add(a: Any, b: Any) -> Any:
    return a + b


# ------------------------------------------------------------------ state dtypes


def test_state_dtypes_are_the_numeric_ones() -> None:
    assert [dt.name for dt in statefn.STATE_DTYPES] == ALLOWED.split(", ")[:-1]
    assert [dt.name for dt in statefn.RECORD_FIELD_DTYPES] == FIELDS.split(", ")
    assert set(statefn.RECORD_FIELD_DTYPES) < set(statefn.STATE_DTYPES)


@pytest.mark.parametrize("dtype", [np.float16, np.complex64, np.complex128])
def test_half_and_complex_states_are_declared(dtype: Any) -> None:
    f = StatefulFunction(running_total, dtype)
    assert f.state_dtype == np.dtype(dtype)
    assert statefn.dtype_key(f.state_dtype) == np.dtype(dtype).str


def test_bfloat16_state_is_ml_dtypes_bfloat16() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for spelling in (ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16), "bfloat16"):
        f = StatefulFunction(running_total, spelling)
        assert f.state_dtype == np.dtype(ml_dtypes.bfloat16)
        assert attrs.evolve(f).state_dtype == f.state_dtype
    assert StatefulFunction(running_total, ml_dtypes.bfloat16).key != (
        StatefulFunction(running_total, np.float16).key
    )


def test_bfloat16_has_a_key_of_its_own() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert bf16.str == "<V2"  # any two bytes: why the key cannot be dt.str
    assert statefn.dtype_key(bf16) == "bfloat16"
    assert statefn.dtype_key(np.dtype("V2")) != "bfloat16"
    assert statefn.dtype_name(bf16) == "bfloat16"


@pytest.mark.parametrize("spelling", [np.int64, "int64", "i8", np.dtype("i8"), "q", int])
def test_every_numpy_spelling_is_canonicalised(spelling: Any) -> None:
    f = StatefulFunction(running_total, spelling)
    assert f.state_dtype is statefn.STATE_DTYPES[3]
    assert attrs.evolve(f).state_dtype is f.state_dtype  # the converter is idempotent


@pytest.mark.parametrize(
    ("spelling", "shown", "why"),
    [
        (bool, "bool", ""),
        (np.clongdouble, str(np.dtype(np.clongdouble)), ""),
        (object, "object", ""),
        ("U3", "<U3", ""),
        ("S4", "|S4", ""),
        ("M8[ns]", "datetime64[ns]", ""),
        (("i4", (2,)), "('<i4', (2,))", " (a state is one item per thread, not a sub-array)"),
    ],
)
def test_unsupported_state_dtypes_are_refused(spelling: Any, shown: str, why: str) -> None:
    message = (
        f"state dtype {shown} is not supported{why}; expected one of {ALLOWED}. "
        "Use one numeric item (for a flag, uint8)."
    )
    with pytest.raises(StateDtypeError, match=f"^{re.escape(message)}$"):
        statefn.stateful(spelling)


def test_non_native_byte_order_refused() -> None:
    swapped = ">i8" if np.dtype("i8").byteorder in "=<" else "<i8"
    with pytest.raises(
        StateDtypeError,
        match=rf"^state dtype {swapped} has non-native byte order; expected a native-order "
        rf"dtype, one of {re.escape(ALLOWED)}\. Use int64 instead\.$",
    ):
        statefn.stateful(swapped)


def test_not_a_dtype_refused() -> None:
    with pytest.raises(
        StateDtypeError,
        match=r"^state dtype 'int65' is not a NumPy dtype \(data type 'int65' not understood\); "
        rf"expected one of {re.escape(ALLOWED)}\. Pass a NumPy dtype such as np\.int64\.$",
    ):
        statefn.stateful("int65")


def test_none_refused_instead_of_meaning_float64() -> None:
    with pytest.raises(StateDtypeError, match=r"^state dtype must be given; .* got None\."):
        statefn.stateful(None)


def test_errors_subclass_builtins() -> None:
    assert issubclass(StateDtypeError, TypeError)
    assert issubclass(statefn.UnknownOperatorError, ValueError)
    for err in (
        statefn.ArityError,
        statefn.NotCallableError,
        statefn.RoleError,
        statefn.CallbackCompileError,
    ):
        assert issubclass(err, statefn.StatefnError)
        assert issubclass(err, TypeError)


# -------------------------------------------------------------------- stateful


def test_stateful_decorator_builds_descriptor() -> None:
    f = statefn.stateful(np.int64, name="carry")(running_total)
    assert isinstance(f, StatefulFunction)
    assert f.op is running_total
    assert f.state_dtype == np.dtype(np.int64)
    assert f.name == "carry"
    assert f.arity == 2
    assert f.kind == "stateful"
    assert re.fullmatch(r"[0-9a-f]{64}", f.key)


def test_stateful_host_call_forwards_to_op() -> None:
    f = statefn.stateful(np.int64)(running_total)
    state = np.zeros(1, np.int64)
    assert f(state, np.int64(5)) == 0
    assert f(state, np.int64(7)) == 5
    assert state[0] == 12


def test_descriptors_are_frozen_and_slotted() -> None:
    f = statefn.stateful(np.int64)(running_total)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        f.name = "x"  # type: ignore[misc]
    assert not hasattr(f, "__dict__")


def test_equal_descriptors_built_separately_compare_equal() -> None:
    a = StatefulFunction(running_total, np.int64)
    b = statefn.stateful("i8")(running_total)
    assert a == b
    assert hash(a) == hash(b)
    assert {a: 1}[b] == 1


def test_field_changes_change_equality() -> None:
    f = StatefulFunction(running_total, np.int64)
    assert f.with_name("carry") != f
    assert f.with_name("carry").name == "carry"
    assert f.with_state_dtype("f8") != f
    assert f.with_state_dtype("f8").state_dtype == np.dtype(np.float64)
    assert f.with_state_dtype(np.int64) == f
    assert f != StatelessFunction(double)


def test_with_state_dtype_validates_again() -> None:
    f = StatefulFunction(running_total, np.int64)
    with pytest.raises(StateDtypeError, match="state dtype bool is not supported"):
        f.with_state_dtype(bool)


def test_generic_subscription() -> None:
    alias = StatefulFunction[np.int64, np.int32]
    assert alias(running_total, np.int64) == StatefulFunction(running_total, np.int64)


def test_repr_has_no_addresses() -> None:
    text = repr(StatefulFunction(running_total, np.int64, "carry"))
    assert "0x" not in text
    assert text == (
        f"StatefulFunction(op={__name__}.running_total, state_dtype=dtype('int64'), name='carry')"
    )


def test_name_must_be_a_string() -> None:
    with pytest.raises(TypeError, match=r"^'name' must be a str or None; got int\."):
        StatelessFunction(double, 3)  # type: ignore[arg-type]


# ------------------------------------------------------------------- stateless


def test_stateless_bare_and_called() -> None:
    bare = statefn.stateless(double)
    called = statefn.stateless(name="twice")(double)
    assert isinstance(bare, StatelessFunction)
    assert bare.arity == 1
    assert called.name == "twice"
    assert bare(np.int32(4)) == 8
    assert bare != called


# ---------------------------------------------------------------- scan operator


@pytest.mark.parametrize(
    ("builtin", "a", "b", "expected"),
    [
        ("+", 3, 4, 7),
        ("*", 3, 4, 12),
        ("min", 3, 4, 3),
        ("max", 3, 4, 4),
        ("&", 6, 3, 2),
        ("|", 6, 3, 7),
        ("^", 6, 3, 5),
    ],
)
def test_builtin_host_semantics(builtin: str, a: int, b: int, expected: int) -> None:
    op = ScanOperator(builtin=builtin)  # type: ignore[arg-type]
    assert op.is_builtin
    assert op.is_sum == (builtin == "+")
    assert op(np.int32(a), np.int32(b)) == expected
    assert op.arity == 2


def test_builtin_numpy_semantics_wrap_like_numpy() -> None:
    assert ScanOperator(builtin="+")(np.int8(127), np.int8(1)) == np.int8(-128)
    assert np.isnan(ScanOperator(builtin="min")(np.float32("nan"), np.float32(1)))


def test_builtin_key_depends_only_on_canonical_string() -> None:
    a = ScanOperator(builtin="add")
    b = ScanOperator(builtin="+", name="sum")
    assert a.builtin == "+"
    assert a == b
    assert a.key == b.key
    assert a != ScanOperator(builtin="*")


def test_user_scan_operator() -> None:
    op = statefn.scan_op(add)
    assert not op.is_builtin
    assert not op.is_sum
    assert op(2, 3) == 5
    assert statefn.scan_op(name="plus")(add).name == "plus"


def test_scan_operator_needs_exactly_one_of_builtin_and_op() -> None:
    with pytest.raises(
        TypeError, match=r"^ScanOperator takes exactly one of builtin= and op=; got neither\."
    ):
        ScanOperator()
    with pytest.raises(TypeError, match=r"exactly one of builtin= and op=; got both\."):
        ScanOperator(builtin="+", op=add)


def test_builtin_callable_as_user_op_refused() -> None:
    import operator

    with pytest.raises(
        statefn.RoleError,
        match=r"^_operator\.add is a built-in scan operator; expected it as "
        r"ScanOperator\(builtin='\+'\) \(CUB supplies it\), not as a user op\.",
    ):
        ScanOperator(op=operator.add)
