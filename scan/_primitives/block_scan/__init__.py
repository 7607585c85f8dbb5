# SPDX-License-Identifier: Apache-2.0
"""Block scans (``cub::BlockScan``): ``scan``, the two sums and the two scans with an operator.

The family's calls, planner (:func:`._plan.plan_scan`), operand ABI,
renderer (:func:`scan._codegen.render_scan`) and storage behaviour. The
simulator runs scans on a path of its own (the prefix callback's protocol:
the first warp's lanes call it in turn, each with its own state).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ..._codegen import CallbackDecl
from ..._errors import ScanTypeError
from ..._plan import ArrayFact, Block, as_array, as_scalar
from ..._spec import AbiOperand, EntryPoint, Param, Primitive, Role, c_parameters
from ._plan import ScanLikePlan, ScanPlan, plan_scan
from ._sim import scan_call
from ._stubs import FUNCTIONS as STUBS
from ._unit import callback_barrier_suffices, scan_unit

__all__ = [
    "CALLS",
    "COMMON",
    "OPERANDS",
    "SPEC",
    "render_scan",
    "scan_callbacks",
    "scan_calls",
    "scan_facts",
    "split_callbacks",
]

_REQUIRED = inspect.Parameter.empty


def _p(name: str, role: Role, default: Any = None) -> Param:
    return Param(name, role, default)


_OPERANDS = (Param("values", "operand", keyword_only=False), Param("out", "operand", None, False))
#: the options every block primitive takes, last
COMMON = (
    _p("temp_storage", "array"),
    _p("threads", "literal"),
    _p("items_per_thread", "literal"),
    _p("auto_sync", "literal", True),
)
_ALGORITHM = _p("algorithm", "literal")
#: the scans' last parameter: scan the tile from its end
_REVERSE = Param("reverse", "literal", False)
#: the tile of a look-back scan (prefix_op=scan.lookback): the block's linear index by default
_TILE = _p("tile", "index")


def scan_calls(
    aggregate: str, options: tuple[Param, ...], module: Literal["block", "warp"] = "block"
) -> tuple[EntryPoint, ...]:
    """A module's five scan calls: the values, the operator (``scan``'s ``mode=``), the
    prefix callback and its state, the aggregate output named `aggregate`, then `options`."""
    prefix = (
        Param("prefix_op", "callable", None, callback="prefix"),
        _p("prefix_state", "array"),
        _p(aggregate, "array"),
    )
    seed = _p("initial_value", "operand")

    def operator_scan(name: str, mode: Literal["inclusive", "exclusive"]) -> EntryPoint:
        scan_op = Param("scan_op", "callable", _REQUIRED, callback="scan_op")
        params = (*_OPERANDS, scan_op, seed, *prefix, *options)
        return EntryPoint(name, "scan", params, mode, module=module)

    def scan_sum(name: str, mode: Literal["inclusive", "exclusive"]) -> EntryPoint:
        params = (*_OPERANDS, *prefix, *options)
        return EntryPoint(name, "scan", params, mode, sum=True, module=module)

    mode = _p("mode", "literal", _REQUIRED)
    any_op = Param("scan_op", "callable", "+", callback="scan_op")
    return (
        EntryPoint(
            "scan", "scan", (*_OPERANDS, mode, any_op, seed, *prefix, *options), module=module
        ),
        scan_sum("inclusive_sum", "inclusive"),
        scan_sum("exclusive_sum", "exclusive"),
        operator_scan("inclusive_scan", "inclusive"),
        operator_scan("exclusive_scan", "exclusive"),
    )


CALLS = scan_calls("block_aggregate", (_ALGORITHM, *COMMON, _REVERSE, _TILE))


def scan_facts(entry: EntryPoint, facts: Mapping[str, Any]) -> dict[str, Any]:
    """The planner arguments every scan call has (values to prefix state), from its facts."""
    name = entry.key
    values = facts["values"]
    if values is None:
        raise ScanTypeError(f"{name}: values is required")
    scan_op = "+" if entry.sum else facts["scan_op"]
    return {
        "function": name,
        "values": values,
        "out": facts["out"],
        "mode": entry.mode or facts["mode"],
        "scan_op": "+" if scan_op is None else scan_op,
        "initial_value": as_scalar(name, "initial_value", facts.get("initial_value")),
        "prefix_op": facts["prefix_op"],
        "prefix_state": as_array(name, "prefix_state", facts["prefix_state"]),
    }


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> ScanPlan:
    name = entry.key
    return plan_scan(
        **scan_facts(entry, facts),
        block_aggregate=as_array(name, "block_aggregate", facts["block_aggregate"]),
        algorithm=facts["algorithm"],
        temp_storage=as_array(name, "temp_storage", facts["temp_storage"]),
        block=block,
        items_per_thread=facts["items_per_thread"],
        auto_sync=facts["auto_sync"],
        reverse=facts["reverse"],
        tile=facts["tile"],
    )


#: The provider's operands: temp storage (caller-owned mode), the values, the
#: output, the initial value, the prefix callback's state, the block
#: aggregate output, and a look-back scan's tile status (its bytes) and tile
#: index (-1: the block's linear index); unused ones are null (0).
OPERANDS = (
    AbiOperand("temp", "array", param="temp_storage", when="caller_temp"),
    AbiOperand("in", "input", param="values"),
    AbiOperand("out", "output", param="out", alias="values"),
    AbiOperand(
        "initial_value", "value", param="initial_value", when="has_initial_value", const=True
    ),
    AbiOperand("state", "array", param="prefix_state", when="stateful"),
    AbiOperand("block_aggregate", "array", param="block_aggregate", when="has_block_aggregate"),
    AbiOperand("status", "array", param="prefix_state", when="lookback"),
    AbiOperand("status_bytes", "nbytes", param="prefix_state", when="lookback"),
    AbiOperand("tile", "count", param="tile", when="lookback", absent=-1),
)


def scan_callbacks(plan: ScanLikePlan) -> list[Any]:
    """The user callables a scan's provider calls: its operator (unless built in), its prefix."""
    users: list[Any] = []
    if not plan.scan_op.is_builtin:
        users.append(plan.scan_op)
    if plan.prefix_op is not None:
        users.append(plan.prefix_op)
    return users


def split_callbacks(
    plan: ScanLikePlan, callbacks: Sequence[CallbackDecl]
) -> tuple[CallbackDecl | None, CallbackDecl | None]:
    """The declarations of :func:`scan_callbacks`' callables: (operator's, prefix's)."""
    found = iter(callbacks)
    scan_cb = None if plan.scan_op.is_builtin else next(found)
    prefix_cb = None if plan.prefix_op is None else next(found)
    return scan_cb, prefix_cb


def render_scan(
    plan: ScanPlan,
    *,
    scan_callback: CallbackDecl | None = None,
    prefix_callback: CallbackDecl | None = None,
    symbol: str | None = None,
    storage: str | None = None,
) -> str:
    """C++ source of a block scan's provider (:func:`._unit.scan_unit`)."""
    return scan_unit(
        plan,
        scan_callback=scan_callback,
        prefix_callback=prefix_callback,
        symbol=symbol,
        storage=storage,
        params=c_parameters(OPERANDS),
    )


def _render(
    plan: ScanPlan, callbacks: Sequence[CallbackDecl], symbol: str | None, storage: str | None
) -> str:
    scan_cb, prefix_cb = split_callbacks(plan, callbacks)
    return render_scan(
        plan, scan_callback=scan_cb, prefix_callback=prefix_cb, symbol=symbol, storage=storage
    )


def _shares_storage(plan: ScanPlan) -> bool:
    # a scan whose trailing barrier CUB's callback barrier replaces keeps its own
    return (
        plan.temp_storage == "implicit" and plan.auto_sync and not callback_barrier_suffices(plan)
    )


def _describe(plan: ScanPlan) -> str:
    return plan.function


def _layout_operator(a: Any, b: Any) -> Any:
    """The scan operator of record layout queries (declared, never compiled)."""
    return a


def _layout_plan(
    primitive: str, dtype: np.dtype[Any], block: Block, items_per_thread: int, algorithm: str | None
) -> ScanPlan:
    record = np.dtype(dtype).names is not None
    return plan_scan(
        function=f"temp_storage({primitive!r})",
        values=ArrayFact(dtype=dtype, ndim=1, length=items_per_thread),
        out=None,
        mode="inclusive",
        # records have no built-in operator; the layout does not depend on it
        scan_op=_layout_operator if record else "+",
        initial_value=None,
        prefix_op=None,
        prefix_state=None,
        block_aggregate=None,
        algorithm=algorithm,
        temp_storage=ArrayFact(dtype=np.uint8, ndim=1),
        block=block,
    )


#: The docstrings of the family's functions in :mod:`scan.block`.
DOCS: Mapping[str, str] = {
    "scan": """\
    Block-wide scan with any operator (``cub::BlockScan``).

    Parameters
    ----------
    values : scalar or local array
        This thread's item, or its items (the array length is the number of
        items per thread, in blocked arrangement).
    out : local array, optional
        Where an array scan writes; defaults to ``values`` (in place).
    mode : {"inclusive", "exclusive"}
        Literal string.
    scan_op : str, callable or statefn.ScanOperator
        ``"+" "*" "min" "max" "&" "|" "^"``, their ``operator``/NumPy
        spellings, or a binary ``@cuda.jit(device=True)`` function.
    initial_value : scalar, optional
        Seeds the scan; required for exclusive scans with a non-sum operator
        unless ``prefix_op`` is given. Cannot be combined with ``prefix_op``.
    prefix_op : StatefulFunction, StatelessFunction, device function or scan.lookback, optional
        Called with the block aggregate by the first warp; thread 0's return
        value seeds the scan. ``scan.lookback`` makes the prefix the
        combination of every earlier tile of ``prefix_state``, across blocks
        (decoupled look-back; see the cross-block docs).
    prefix_state : local array of one item, or a tile status, optional
        The state of a stateful ``prefix_op``; its dtype must equal the
        callback's declared state dtype. With ``scan.lookback``: a status
        from ``scan.tile_status(tiles, dtype)`` (or one row of it).
    block_aggregate : local array of one item, optional
        Receives the block-wide aggregate. Cannot be combined with
        ``prefix_op`` (the callback receives it instead).
    algorithm : {"raking", "raking_memoize", "warp_scans"}, optional
        CUB's ``BLOCK_SCAN_*`` algorithm; ``warp_scans`` needs a block size
        that is a multiple of 32. Without it, the one measured fastest for
        the block size, items per thread and item size (see the defaults
        table in the performance docs; ``raking`` where none was measured;
        reverse scans have a table of their own where they were measured).
    temp_storage : shared uint8 array, optional
        Caller-owned temp storage (see :func:`temp_storage`); library-owned
        static shared memory by default.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's.
    items_per_thread : int, optional
        Only needed when ``values`` is not a local array of literal length.
    auto_sync : bool
        Insert the block barrier CUB requires before temp storage is reused.
    reverse : bool
        Literal. Scan the tile from its end: each item's result combines it
        with the items after it, ``initial_value`` seeds from the right and
        ``prefix_op`` carries the suffix of the tiles to the right (it
        receives the tile's aggregate, its items in order). Each thread's
        share of the block scan crosses shared memory to the mirrored thread
        and back: ``2 * threads * itemsize`` bytes, at most 32 KiB.
    tile : int, optional
        With ``prefix_op=scan.lookback``: the tile this scan is, in the
        status; the block's linear index by default. Tile ``t`` waits for
        tiles ``0 .. t-1``, so tiles must be numbered in the order the
        blocks start (blockIdx.x along a row).

    Any other keyword is refused with a message naming the right one (e.g. the
    retired ``block_prefix_callback_op=``).

    Returns
    -------
    scalar or None
        The scanned value for scalar ``values``; None for arrays.
    """,
    "inclusive_sum": """\
    Block-wide inclusive prefix sum. Parameters as in :func:`scan`.""",
    "exclusive_sum": """\
    Block-wide exclusive prefix sum (thread 0's first output is 0, or the prefix).

    Parameters as in :func:`scan`.
    """,
    "inclusive_scan": """\
    Block-wide inclusive scan with ``scan_op``. Parameters as in :func:`scan`.""",
    "exclusive_scan": """\
    Block-wide exclusive scan with ``scan_op``. Parameters as in :func:`scan`.

    A non-sum operator needs ``initial_value`` or ``prefix_op``.
    """,
}


SPEC = Primitive(
    family="scan",
    calls=CALLS,
    plan_type=ScanPlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=scan_callbacks,
    shares_storage=_shares_storage,
    describe=_describe,
    layout_plan=_layout_plan,
    docs=DOCS,
    stubs=STUBS,
    layout_names=("scan",),
    returns="values",
    simulator=scan_call,
)
