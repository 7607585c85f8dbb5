# SPDX-License-Identifier: Apache-2.0
"""The user callbacks of the host tests, each with a C++ definition behind the pointer ABI.

On a GPU a front end compiles a callback with Numba behind
``statefn.pointer_abi``'s symbol; on the host each callback the tests use has
a C++ definition here, written to compute what the Numba-compiled function
computes (Numba's integer results are at least 64 bits wide and are
converted to the state or value type on assignment, which wraps as the C++
conversions do; float32 arithmetic stays float32).

A definition is a body of statements that sets ``r`` (a ``value_t``) from
``agg`` (the aggregate, a ``value_t``) and ``s`` (``state_t&``, stateful
callbacks), or from ``a`` and ``b`` (scan operators). :func:`definitions`
emits every callback a kernel's plans call, once each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from cases import block_cases as bc

import statefn
from scan._codegen import value_decl
from scan._primitives import for_plan

__all__ = [
    "AFFINE",
    "PAIR",
    "compose",
    "definitions",
    "last",
    "register",
    "running_compose",
]

#: float32 (a, b) pairs: the map h -> a * h + b of a linear recurrence.
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
#: int64 (a, b) pairs: the same maps, exact (wrapping) for any association.
AFFINE = np.dtype([("a", np.int64), ("b", np.int64)], align=True)

_BODIES: dict[Any, str] = {}


def register(function: Callable[..., Any], body: str) -> Callable[..., Any]:
    """Give `function` (a callback's Python function) the C++ body `body`."""
    _BODIES[function] = body
    return function


def _compose(x: Any, y: Any) -> Any:
    """x first, then y: h -> y.a * (x.a * h + x.b) + y.b."""
    return (x.a * y.a, y.a * x.b + y.b)


def _last(a: Any, b: Any) -> Any:
    """Associative, not commutative: the right operand."""
    return b


def _running_compose(state: Any, block_aggregate: Any) -> Any:
    prefix = (state[0].a, state[0].b)
    state[0].a = prefix[0] * block_aggregate.a
    state[0].b = block_aggregate.a * prefix[1] + block_aggregate.b
    return prefix


_COMPOSE = "r.f0 = a.f0 * b.f0; r.f1 = b.f0 * a.f1 + b.f1;"
register(_compose, _COMPOSE)
register(_last, "r = b;")
register(
    _running_compose,
    "r.f0 = s.f0; r.f1 = s.f1; "
    "state_t n; n.f0 = s.f0 * agg.f0; n.f1 = agg.f0 * s.f1 + agg.f1; s = n;",
)

#: the record operator of the tests (x first, then y)
compose = statefn.scan_op(_compose)
#: the scalar operator that keeps its right operand
last = statefn.scan_op(_last)


def running_compose(state_dtype: Any) -> statefn.StatefulFunction[Any, Any]:
    """A stateful callback that composes the aggregates into its (record) state."""
    return statefn.stateful(np.dtype(state_dtype), name="running_compose")(_running_compose)


# the differential fuzzer's callbacks (tests/cases/block_cases.py)
_PREFIX = "const state_t prefix = s; "
_RETURN = " r = static_cast<value_t>(prefix);"
for fn, fold in [
    (bc._running_add, "prefix + agg"),
    (bc._running_mul, "prefix * agg"),
    (bc._running_min, "agg < prefix ? agg : prefix"),
    (bc._running_max, "prefix < agg ? agg : prefix"),
    (bc._running_and, "prefix & agg"),
    (bc._running_or, "prefix | agg"),
    (bc._running_xor, "prefix ^ agg"),
]:
    register(fn, f"{_PREFIX}s = static_cast<state_t>({fold});{_RETURN}")
register(bc._count_calls, "s = static_cast<state_t>(s + 1); r = static_cast<value_t>(agg - agg);")
register(bc._ten, "r = static_cast<value_t>(agg - agg + 10);")
register(getattr(bc.user_add, "py_func", bc.user_add), "r = static_cast<value_t>(a + b);")


def state_decl(value_dtype: np.dtype[Any], state_dtype: np.dtype[Any]) -> str:
    """``state_t``, declared after ``value_t`` (a complex dtype's struct once)."""
    if state_dtype.kind == "c" and state_dtype == value_dtype:
        return "using state_t = value_t;"
    return value_decl(state_dtype).replace("value_t", "state_t")


def _function(descriptor: Any) -> Any:
    op = descriptor.op
    return getattr(op, "py_func", op)


def _body(descriptor: Any) -> str:
    function = _function(descriptor)
    try:
        return _BODIES[function]
    except KeyError:
        raise KeyError(
            f"no C++ definition of callback {descriptor!r} for host execution: register one "
            "in tests/hostexec/corpus.py"
        ) from None


def definitions(plans: Sequence[Any]) -> str:
    """The C++ definitions of every callback `plans` call (each symbol once)."""
    out: list[str] = []
    seen: set[str] = set()
    for plan in plans:
        for descriptor in for_plan(plan).callbacks(plan):
            symbol, _ = statefn.pointer_abi(descriptor, plan.value_dtype)
            if symbol in seen:
                continue
            seen.add(symbol)
            space = f"hostexec_callback_{len(seen)}"
            types = [value_decl(plan.value_dtype)]
            kind = descriptor.kind
            if kind == "stateful":
                types.append(state_decl(plan.value_dtype, descriptor.state_dtype))
                params = "void* result, void* state, const void* aggregate"
                head = (
                    "  state_t& s = *static_cast<state_t*>(state);\n"
                    "  const value_t agg = *static_cast<const value_t*>(aggregate);\n"
                )
            elif kind == "stateless":
                params = "void* result, const void* aggregate"
                head = "  const value_t agg = *static_cast<const value_t*>(aggregate);\n"
            else:
                params = "void* result, const void* lhs, const void* rhs"
                head = (
                    "  const value_t a = *static_cast<const value_t*>(lhs);\n"
                    "  const value_t b = *static_cast<const value_t*>(rhs);\n"
                )
            out.append(
                f"namespace {space} {{\n" + "\n".join(types) + f"\n}}  // namespace {space}\n"
                f'extern "C" int {symbol}({params}) {{\n'
                f"  using namespace {space};\n" + head + "  value_t r;\n"
                f"  {_body(descriptor)}\n"
                "  *static_cast<value_t*>(result) = r;\n"
                "  return 0;\n}\n"
            )
    return "\n".join(out)
