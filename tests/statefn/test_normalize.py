# SPDX-License-Identifier: Apache-2.0
"""The one normalising entry point: every accepted spelling, every refusal."""

from __future__ import annotations

import operator
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import statefn
from statefn import (
    NotCallableError,
    RoleError,
    ScanOperator,
    StatefulFunction,
    StatelessFunction,
    UnknownOperatorError,
    normalize,
)

ROOT = Path(__file__).resolve().parents[2]


def carry(state: Any, agg: Any) -> Any:
    return state[0]


def ident(agg: Any) -> Any:
    return agg


def maxop(a: Any, b: Any) -> Any:
    return a if a > b else b


STRINGS = {
    "+": "+",
    "*": "*",
    "min": "min",
    "max": "max",
    "&": "&",
    "|": "|",
    "^": "^",
    "add": "+",
    "sum": "+",
    "plus": "+",
    "mul": "*",
    "multiply": "*",
    "prod": "*",
    "minimum": "min",
    "maximum": "max",
    "bit_and": "&",
    "and_": "&",
    "bit_or": "|",
    "or_": "|",
    "bit_xor": "^",
    "xor": "^",
}

CALLABLES: list[tuple[object, str]] = [
    (operator.add, "+"),
    (operator.mul, "*"),
    (operator.and_, "&"),
    (operator.or_, "|"),
    (operator.xor, "^"),
    (min, "min"),
    (max, "max"),
    (np.add, "+"),
    (np.multiply, "*"),
    (np.minimum, "min"),
    (np.maximum, "max"),
    (np.bitwise_and, "&"),
    (np.bitwise_or, "|"),
    (np.bitwise_xor, "^"),
]


@pytest.mark.parametrize(("spelling", "canonical"), sorted(STRINGS.items()))
def test_string_spellings(spelling: str, canonical: str) -> None:
    op = normalize(spelling, role="scan_op")
    assert op.builtin == canonical
    assert op == ScanOperator(builtin=canonical)  # type: ignore[arg-type]


@pytest.mark.parametrize(("spelling", "canonical"), CALLABLES, ids=lambda x: str(x))
def test_callable_spellings(spelling: object, canonical: str) -> None:
    assert normalize(spelling, role="scan_op").builtin == canonical
    assert statefn.scan_op(spelling).builtin == canonical  # type: ignore[arg-type]


def test_unknown_string() -> None:
    with pytest.raises(
        UnknownOperatorError,
        match=r"^unknown built-in scan operator 'avg'; expected one of '\+', '\*', 'min', .*"
        r"'xor'\. For another operator pass a function op\(a, b\) instead\.$",
    ):
        normalize("avg", role="scan_op")


def test_user_function_becomes_scan_operator() -> None:
    op = normalize(maxop, role="scan_op")
    assert isinstance(op, ScanOperator)
    assert op.op is maxop
    assert normalize(op, role="scan_op") is op


def test_lambda_scan_operator() -> None:
    op = normalize(lambda a, b: a - b, role="scan_op")
    assert op(5, 3) == 2


def test_stateful_refused_as_scan_operator() -> None:
    f = statefn.stateful(np.int64)(carry)
    with pytest.raises(
        RoleError,
        match=r"^stateful callback \S+carry offered as a scan operator; expected a function "
        r"op\(a, b\) or a built-in such as '\+' \(scan operators carry no state\)\. Pass it as "
        r"prefix_op= with prefix_state=, or pass a plain binary function\.$",
    ):
        normalize(f, role="scan_op")


def test_stateless_refused_as_scan_operator() -> None:
    with pytest.raises(
        RoleError, match=r"^stateless callback \S+ident offered as a scan operator; expected"
    ):
        normalize(statefn.stateless(ident), role="scan_op")


def test_prefix_descriptors_returned_as_is() -> None:
    f = statefn.stateful(np.int64)(carry)
    g = statefn.stateless(ident)
    assert normalize(f, role="prefix") is f
    assert normalize(g, role="prefix") is g


def test_plain_function_becomes_stateless_prefix() -> None:
    d = normalize(ident, role="prefix")
    assert isinstance(d, StatelessFunction)
    assert d == StatelessFunction(ident)


def test_two_argument_function_as_prefix_hints_at_stateful() -> None:
    with pytest.raises(statefn.ArityError, match=re.escape("@statefn.stateful(state_dtype)")):
        normalize(carry, role="prefix")


def test_scan_operator_refused_as_prefix() -> None:
    with pytest.raises(
        RoleError,
        match=r"^ScanOperator\(builtin='\+', op=None, name=None\) is a scan operator, offered "
        r"as a prefix callback; expected a StatefulFunction or a function op\(block_aggregate\)\.",
    ):
        normalize(ScanOperator(builtin="+"), role="prefix")


def test_operator_string_refused_as_prefix() -> None:
    with pytest.raises(RoleError, match=r"^'min' names a scan operator, offered as a prefix"):
        normalize("min", role="prefix")


def test_other_string_refused_as_prefix() -> None:
    with pytest.raises(
        NotCallableError,
        match=r"^a prefix callback must be callable; got the string 'hello'\.",
    ):
        normalize("hello", role="prefix")


@pytest.mark.parametrize("role", ["prefix", "scan_op"])
def test_non_callable_refused(role: Any) -> None:
    with pytest.raises(NotCallableError, match=r"must be callable; .* got builtins\.int object"):
        normalize(42, role=role)


def test_bound_method_refused() -> None:
    class Holder:
        def op(self, agg: Any) -> Any:
            return agg

    with pytest.raises(NotCallableError, match=r"must be compilable by Numba"):
        normalize(Holder().op, role="prefix")


def test_unknown_role() -> None:
    with pytest.raises(ValueError, match=r"^role must be 'prefix' or 'scan_op'; got 'other'\.$"):
        normalize(ident, role="other")  # type: ignore[call-overload]


def test_numba_dispatcher_kept_as_op_but_fingerprinted_by_py_func() -> None:
    from numba import cuda

    def helper(agg: Any) -> Any:
        return agg + 1

    dispatcher = cuda.jit(device=True)(helper)  # no compilation happens here
    d = normalize(dispatcher, role="prefix")
    assert isinstance(d, StatelessFunction)
    assert d.op is dispatcher
    assert d.arity == 1
    assert d(np.int32(1)) == 2  # host call goes through py_func
    assert d.key == StatelessFunction(helper).key

    sop = normalize(cuda.jit(device=True)(maxop), role="scan_op")
    assert not sop.is_builtin
    f = statefn.stateful(np.int32)(cuda.jit(device=True)(carry))
    assert isinstance(f, StatefulFunction)
    with pytest.raises(statefn.ArityError, match=r"expected exactly 1 required positional"):
        normalize(cuda.jit(device=True)(maxop), role="prefix")


def test_simulator_fake_kernel_is_a_dispatcher() -> None:
    code = (
        "import statefn\n"
        "from numba import cuda\n"
        "def inc(agg):\n    return agg + 1\n"
        "d = statefn.normalize(cuda.jit(device=True)(inc), role='prefix')\n"
        "print(type(d).__name__, d(1), d.key == statefn.stateless(inc).key)\n"
    )
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["StatelessFunction", "2", "True"]
