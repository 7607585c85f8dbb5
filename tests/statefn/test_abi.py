# SPDX-License-Identifier: Apache-2.0
"""The pointer ABI description: symbols, declarations and result errors, with no compiler.

Compiling callbacks behind this ABI is the front ends' work
(tests/scan/test_callback_lowering.py).
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import statefn
from statefn import CallbackCompileError, StateDtypeError

CC = (9, 0)


def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def test_symbol_and_declaration_of_each_kind() -> None:
    f = statefn.stateful(np.int64)(running_total)
    assert statefn.pointer_abi(f, np.int32) == (
        f"statefn_stateful_{f.key[:20]}_i4_i8",
        f'extern "C" __device__ int statefn_stateful_{f.key[:20]}_i4_i8'
        "(void* result, void* state, const void* aggregate);",
    )
    g = statefn.stateless(lambda agg: agg * 2)
    symbol, decl = statefn.pointer_abi(g, "f8")
    assert symbol == f"statefn_stateless_{g.key[:20]}_f8_none"
    assert decl.endswith(f"{symbol}(void* result, const void* aggregate);")
    h = statefn.scan_op(lambda a, b: a + b)
    symbol, decl = statefn.pointer_abi(h, "u4")
    assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", symbol)
    assert decl.endswith(f"{symbol}(void* result, const void* lhs, const void* rhs);")


def test_callback_abi_describes_the_request() -> None:
    f = statefn.stateful(np.int64, name="carry")(running_total)
    abi = statefn.callback_abi(f, "int32", cc=CC)
    assert (abi.symbol, abi.c_decl) == statefn.pointer_abi(f, np.int32)
    assert abi.kind == "stateful"
    assert abi.value_dtype == np.int32
    assert abi.state_dtype == np.int64
    assert abi.cc == CC
    assert abi.function is running_total
    assert abi.label == "'carry'"
    assert abi.key == (f.key, "stateful", "<i4", "i8", CC)
    unnamed = statefn.callback_abi(statefn.stateful(np.int64)(running_total), np.int32, cc=CC)
    assert unnamed.label == f"{__name__}.running_total"


def test_equal_requests_have_equal_keys() -> None:
    a = statefn.callback_abi(statefn.stateful(np.int64)(running_total), np.int16, cc=CC)
    b = statefn.callback_abi(statefn.stateful("i8")(running_total), "int16", cc=CC)
    assert a.key == b.key
    c = statefn.callback_abi(statefn.stateful(np.int64)(running_total), np.int16, cc=(8, 0))
    assert c.key != a.key


def test_unsupported_value_dtype() -> None:
    with pytest.raises(StateDtypeError, match=r"^value dtype bool is not supported; expected"):
        statefn.callback_abi(statefn.stateless(lambda agg: agg), bool, cc=CC)


def test_cc_must_be_explicit_pair() -> None:
    with pytest.raises(TypeError, match=r"^cc must be a \(major, minor\) tuple of ints"):
        statefn.callback_abi(statefn.stateless(lambda agg: agg), np.int32, cc="sm_90")  # type: ignore[arg-type]


def test_result_error_names_the_callback_and_the_fix() -> None:
    f = statefn.stateful(np.int64, name="carry")(running_total)
    err = statefn.result_error(f, "none", np.dtype(np.int32))
    assert isinstance(err, CallbackCompileError)
    text = str(err)
    assert text.startswith("stateful prefix callback 'carry' (")
    assert "returned None" in text
    assert "Return a number (converted to int32, the values' dtype) on every path" in text
    assert "def running_total(state: Any, block_aggregate: Any) -> Any:" in text


class _Type:
    pass


def test_result_kind_classifies_with_the_front_ends_types() -> None:
    class NoneType(_Type):
        pass

    class Optional(_Type):
        pass

    class Array(_Type):
        pass

    class Record(_Type):
        pass

    class BaseTuple(_Type):
        pass

    class Number(_Type):
        pass

    class Boolean(_Type):
        pass

    none = NoneType()
    types = SimpleNamespace(
        none=none,
        NoneType=NoneType,
        Optional=Optional,
        Array=Array,
        Record=Record,
        BaseTuple=BaseTuple,
        Number=Number,
        Boolean=Boolean,
    )
    assert statefn.result_kind(none, types, record=False) == "none"
    assert statefn.result_kind(Array(), types, record=False) == "array"
    assert statefn.result_kind(Record(), types, record=False) == "record"
    assert statefn.result_kind(Number(), types, record=False) is None
    assert statefn.result_kind(BaseTuple(), types, record=True) is None
    assert statefn.result_kind(Number(), types, record=True).startswith("a value of type")  # type: ignore[union-attr]
