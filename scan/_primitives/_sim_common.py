# SPDX-License-Identifier: Apache-2.0
"""What the simulator engine and the families' own simulations share.

The engine (``scan._numba_cuda._sim``) runs every family's calls in numba's
CUDA simulator; a family whose semantics need more than a block-wide function
(:attr:`scan._spec.Primitive.simulate`) gives its own simulation
(``scan._primitives.<family>._sim``, :attr:`scan._spec.Primitive.simulator`),
which reaches the engine through :class:`scan._spec.SimEngine`. Both use the
helpers here: values in the value type, a call's per-block record, and the
codes that record where a local array's items came from. Nothing here imports
Numba.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import statefn

from .._errors import PlanError, ScanTypeError
from .._plan import check_operand_range

__all__ = [
    "CONTRACT_ENV",
    "DERIVED",
    "IN_CALLBACK",
    "LEFTOVER",
    "LOADED",
    "NEVER",
    "WRITTEN",
    "CallRecord",
    "bad_items",
    "cast",
    "integer",
    "record_fields",
    "result",
    "same_plan",
    "scalar_operand",
]

#: Set to ``off`` to run kernels that break the state contract on purpose
#: (state initialised differently per thread, scans over items no load filled).
CONTRACT_ENV = "STATEFN_SCAN_SIM_CONTRACT"

#: Set on a simulated thread while it runs a prefix callback (its writes to the
#: state are the callback's, not a new pass's).
IN_CALLBACK = "_scan_in_callback"

#: Where a local array's items came from (one code per item, its ``origin``):
#: never written, written, loaded by a tile load, left over from an earlier
#: tile by a partial load, or written with a value computed from (or chosen by
#: a comparison of) an item no load filled.
NEVER, WRITTEN, LOADED, LEFTOVER, DERIVED = 0, 1, 2, 3, 4


class CallRecord:
    """One call of one block (or logical warp): the threads met so far, and its outcome.

    The engine's rendezvous fills :attr:`plans` and counts :attr:`arrived`;
    the thread that completes the call sets :attr:`computed` (or
    :attr:`error`, which every thread re-raises); :attr:`left` counts the
    threads done with it.
    """

    def __init__(self, function: str, threads: int) -> None:
        self.function = function
        self.threads = threads
        self.cond = threading.Condition()
        self.arrived = 0
        self.mismatch: str | None = None
        self.plans: list[Any] = [None] * threads
        self.computed = False
        # an exception raised by the call's shared work or by a callback; every
        # thread re-raises it, so the simulator reports it whichever thread it
        # looks at first
        self.error: BaseException | None = None
        self.left = 0


def cast(value: Any, dtype: np.dtype[Any]) -> Any:
    """*value* as a NumPy scalar of *dtype*, converting as C++ would (integers wrap).

    A record is built field by field from a tuple (or copied from a record).
    """
    if dtype.names is not None:
        fields = statefn.record_fields(dtype)
        out = np.zeros((), dtype=dtype)
        for f, item in zip(fields, tuple(value), strict=True):
            out[f.name] = cast(item, f.dtype)
        return out[()]
    if type(value) is dtype.type:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        bits = dtype.itemsize * 8
        value &= (1 << bits) - 1
        if dtype.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
        return dtype.type(value)
    return np.asarray(value).astype(dtype)[()]


def scalar_operand(function: str, what: str, value: Any, dtype: np.dtype[Any]) -> Any:
    """A scalar operand (``oob_default=``, ``initial_value=``) as a value of *dtype*.

    A number outside the range of half-precision values is refused as the
    compiler refuses a constant (:func:`scan._plan.check_operand_range`).
    """
    if not isinstance(value, tuple):
        check_operand_range(function, what, value, np.asarray(value).dtype, dtype)
    return cast(value, dtype)


def record_fields(value: Any, tup: Any) -> Any:
    """A record as the named tuple callbacks see, its fields NumPy scalars of their types."""
    return tup(*(value[i] for i in range(len(tup._fields))))


def _returned(value: Any, dtype: np.dtype[Any]) -> str | None:
    """What a callback returned that cannot be a value of *dtype* (:func:`statefn.result_error`)."""
    if value is None:
        return "none"
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, np.void):
        return "record"
    if dtype.names is not None:
        if not isinstance(value, tuple):
            return f"a value of type {type(value).__name__}"
        if len(value) != len(dtype.names):
            return f"a tuple of {len(value)} items"
    elif isinstance(value, tuple | list | dict | str | bytes):
        return f"a value of type {type(value).__name__}"
    elif dtype.kind != "c" and isinstance(value, complex | np.complexfloating):
        return f"complex:{np.asarray(value).dtype}"
    return None


def result(descriptor: Any, value: Any, dtype: np.dtype[Any]) -> Any:
    """*value*, which the callback *descriptor* returned, if it can be a value of *dtype*.

    Refused otherwise with the compiler's words, the callback's ``def`` line
    in the message and no traceback of the simulator's own.
    """
    returned = _returned(value, dtype)
    if returned is None:
        return value
    raise statefn.result_error(descriptor, returned, dtype).with_traceback(None) from None


def integer(function: str, name: str, value: Any) -> int:
    """An integer argument (an offset, a tile index) as an int; refuses anything else."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return int(value)
    raise ScanTypeError(f"{function}: {name} must be an integer (got {type(value).__name__})")


def same_plan(plans: list[Any], first_rank: int = 0, group: str = "a block") -> Any:
    """The first thread's plan, once every thread's is equal to it (else the call is refused).

    `plans` are those of linear threads `first_rank` on: the block's, or a logical warp's.
    """
    plan = plans[0]
    assert plan is not None
    for rank, other in enumerate(plans):
        if other is not plan and other != plan:
            raise PlanError(
                f"{plan.function}: thread {first_rank + rank} called it with other operand "
                f"types or options than thread {first_rank}; every thread of {group} must "
                "make the same call"
            )
    return plan


def bad_items(values: Any, items: int) -> tuple[int, int] | None:
    """(item, origin) of the first item a call reads that was never written or is left over."""
    origin = getattr(values, "origin", None)
    if origin is None:
        return None
    for i in range(min(items, len(origin))):
        if origin[i] in (NEVER, LEFTOVER, DERIVED):
            return i, int(origin[i])
    return None
