# SPDX-License-Identifier: Apache-2.0
"""Callbacks whose results cannot be scan values, and the message each must raise.

Shared by the compiled tests (``tests/scan/test_callback_results.py``) and the
simulator's (``tests/sim/test_sim_callback_results.py``): both backends must
say exactly :func:`expected`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import statefn

HERE = Path(__file__)
TALLY = np.dtype([("total", np.int64), ("tiles", np.int32)], align=True)
_NUMBER = "a number (converted to int32, the values' dtype)"


def forgets_return(state: Any, block_aggregate: Any) -> Any:  # noqa: RET503 - the mistake
    prefix = state[0]
    if block_aggregate > 0:
        return prefix
    state[0] = prefix + block_aggregate  # this path ends without a return (aggregate <= 0)


def returns_state(state: Any, block_aggregate: Any) -> Any:
    state[0] += block_aggregate
    return state


def returns_record(state: Any, block_aggregate: Any) -> Any:
    return state[0]


def adds_without_return(a: Any, b: Any) -> None:
    a + b


#: case -> (callback as passed to the scan, its state dtype or None for a
#: scan operator, the function's name, the message before its location)
CASES: dict[str, tuple[Any, Any, str, str]] = {
    "no_return": (
        statefn.stateful(np.int64)(forgets_return),
        np.int64,
        "forgets_return",
        "stateful prefix callback {mod}.forgets_return returned None: it has no return "
        f"statement, or a path through it ends without one. Return {_NUMBER} on every path, "
        "e.g. return prefix.",
    ),
    "state_array": (
        statefn.stateful(np.int64)(returns_state),
        np.int64,
        "returns_state",
        "stateful prefix callback {mod}.returns_state returned an array (the state array "
        f"itself?). Return {_NUMBER}, e.g. state[0] or a number computed from it, not state.",
    ),
    "record": (
        statefn.stateful(TALLY)(returns_record),
        TALLY,
        "returns_record",
        "stateful prefix callback {mod}.returns_record returned a record (such as state[0] "
        f"of a record state). Return {_NUMBER}: one of its fields (state[0].total) or a "
        "number computed from them.",
    ),
    "scan_op_no_return": (
        adds_without_return,
        None,
        "adds_without_return",
        "scan operator {mod}.adds_without_return returned None: it has no return statement, "
        f"or a path through it ends without one. Return {_NUMBER} on every path, e.g. "
        "return a + b.",
    ),
}


def expected(case: str) -> str:
    """The message of *case*: what the callback returned, the fix, its def line."""
    _, _, name, message = CASES[case]
    lines = HERE.read_text().splitlines()
    number = next(i for i, text in enumerate(lines, 1) if text.startswith(f"def {name}("))
    where = f'  File "{HERE}", line {number}, in {name}\n    {lines[number - 1].strip()}'
    return message.format(mod=__name__) + "\n" + where
