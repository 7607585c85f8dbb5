# SPDX-License-Identifier: Apache-2.0
"""Every shape of a scan call, for tests that compile a family's providers.

:data:`CALL_SHAPES` lists (dtype, items, mode, operator, extra operand) over both
modes, a sum and an operator, one and four items a thread, and no extra operand,
an initial value, an aggregate output or a stateful prefix callback (exclusive
scans with an operator always have a seed). :func:`call_facts` turns one into
the planner's keyword arguments and the callback declaration its provider calls.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import statefn
from scan._codegen import CallbackDecl
from scan._plan import ArrayFact, ScalarFact

CALL_SHAPES = [
    (dtype, items, mode, op, extra)
    for dtype, items, mode, op, extra in itertools.product(
        ("int32", "float32"),
        (1, 4),
        ("inclusive", "exclusive"),
        ("+", "max"),
        ("none", "initial", "aggregate", "prefix"),
    )
    if not (mode == "exclusive" and op == "max" and extra in ("none", "aggregate"))
]

#: the provider's prefix callback, declared (the tests compile, they do not link)
PREFIX_DECL = CallbackDecl(
    symbol="cb", c_decl='extern "C" __device__ int cb(void*, void*, const void*);'
)


@statefn.stateful(np.int64)
def int_total(state: Any, aggregate: Any) -> Any:
    carried = state[0]
    state[0] = carried + aggregate
    return carried


@statefn.stateful(np.float32)
def float_total(state: Any, aggregate: Any) -> Any:
    carried = state[0]
    state[0] = carried + aggregate
    return carried


def call_facts(
    dtype: str, items: int, mode: str, op: str, extra: str, *, aggregate: str
) -> tuple[dict[str, Any], CallbackDecl | None]:
    """The planner's arguments for one shape, and the prefix callback's declaration.

    `aggregate` names the planner's aggregate-output argument.
    """
    dt = np.dtype(dtype)
    kwargs: dict[str, Any] = {"values": ArrayFact(dt, 1, items), "mode": mode, "scan_op": op}
    if extra == "initial":
        kwargs["initial_value"] = ScalarFact(dt)
    elif extra == "aggregate":
        kwargs[aggregate] = ArrayFact(dt, 1, 1)
    elif extra == "prefix":
        kwargs["prefix_op"] = int_total if dtype == "int32" else float_total
        kwargs["prefix_state"] = ArrayFact(np.int64 if dtype == "int32" else np.float32, 1, 1)
    return kwargs, PREFIX_DECL if extra == "prefix" else None
