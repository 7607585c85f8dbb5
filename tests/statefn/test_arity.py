# SPDX-License-Identifier: Apache-2.0
"""Arity rules checked at declaration, one exact message per rule."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import statefn
from statefn import ArityError, NotCallableError

HEAD_STATEFUL = r"stateful prefix callback \S+ cannot be called as op\(state, block_aggregate\): "


def test_not_callable() -> None:
    with pytest.raises(
        NotCallableError,
        match=r"^a stateful prefix callback must be callable; expected a Python function "
        r"\(def or lambda\) or a @cuda\.jit\(device=True\) function; got builtins\.int "
        r"object, which is not callable\. Pass the function itself",
    ):
        statefn.stateful(np.int64)(3)  # type: ignore[arg-type]


def test_callable_that_numba_cannot_compile() -> None:
    with pytest.raises(
        NotCallableError,
        match=r"must be compilable by Numba; .* got functools\.partial object, which Numba "
        r"cannot compile as a device function\. Wrap the call in a def",
    ):
        statefn.stateful(np.int64)(functools.partial(lambda a, b: a, 1))


def test_too_few_required() -> None:
    with pytest.raises(
        ArityError,
        match=HEAD_STATEFUL + r"expected exactly 2 required positional parameters; got 1 "
        r"\(state\)\. Parameters beyond those must have defaults\.$",
    ):

        @statefn.stateful(np.int64)
        def one(state):  # type: ignore[no-untyped-def]
            return state[0]


def test_too_many_required() -> None:
    with pytest.raises(ArityError, match=r"got 3 \(state, agg, extra\)"):
        statefn.stateful(np.int64)(lambda state, agg, extra: state)


def test_default_on_a_required_operand_is_refused() -> None:
    # the required count must match; a default on the aggregate does not make it optional
    with pytest.raises(ArityError, match=r"got 1 \(state\)"):
        statefn.stateful(np.int64)(lambda state, agg=0: state)


def test_extra_defaulted_parameters_are_allowed() -> None:
    f = statefn.stateful(np.int64)(lambda state, agg, scale=2, *, shift=1: state[0])
    assert f.arity == 2


def test_varargs_refused() -> None:
    with pytest.raises(
        ArityError,
        match=HEAD_STATEFUL + r"it takes \*rest; expected exactly 2 positional parameters "
        r"\(the ABI passes a fixed number of operands\)\. Name the parameters instead\.$",
    ):
        statefn.stateful(np.int64)(lambda state, *rest: state)


def test_varkw_refused() -> None:
    with pytest.raises(
        ArityError,
        match=HEAD_STATEFUL + r"it takes \*\*kw; expected no keyword catch-all \(Numba cannot "
        r"compile it and the ABI passes no keywords\)\. Remove it\.$",
    ):
        statefn.stateful(np.int64)(lambda state, agg, **kw: state)


def test_required_keyword_only_refused() -> None:
    with pytest.raises(
        ArityError,
        match=HEAD_STATEFUL + r"keyword-only parameter\(s\) k have no default; expected only "
        r"positional operands \(the ABI passes no keywords\)\. "
        r"Give them defaults or remove them\.$",
    ):
        statefn.stateful(np.int64)(lambda state, agg, *, k: state)


def test_stateless_with_two_parameters_hints_at_stateful() -> None:
    with pytest.raises(
        ArityError,
        match=r"^stateless prefix callback \S+ cannot be called as op\(block_aggregate\): "
        r"expected exactly 1 required positional parameter; got 2 \(state, agg\)\. .*"
        + re.escape("A callback with state is declared with @statefn.stateful(state_dtype)."),
    ):
        statefn.stateless(lambda state, agg: agg)


def test_scan_op_arity() -> None:
    with pytest.raises(
        ArityError,
        match=r"^scan operator \S+ cannot be called as op\(a, b\): expected exactly 2 required "
        r"positional parameters; got 1 \(a\)\.",
    ):
        statefn.scan_op(lambda a: a)


def test_name_is_used_as_label() -> None:
    with pytest.raises(ArityError, match=r"^stateful prefix callback 'carry' cannot be called"):
        statefn.stateful(np.int64, name="carry")(lambda state: state)


def test_positional_only_parameters_count() -> None:
    def op(state, agg, /):  # type: ignore[no-untyped-def]
        return state[0]

    assert statefn.stateful(np.int64)(op).arity == 2


def test_functools_wraps_does_not_hide_the_real_signature() -> None:
    def inner(state, agg):  # type: ignore[no-untyped-def]
        return state[0]

    @functools.wraps(inner)
    def outer(*args):  # type: ignore[no-untyped-def]
        return inner(*args)

    with pytest.raises(ArityError, match=r"it takes \*args"):
        statefn.stateful(np.int64)(outer)
