# SPDX-License-Identifier: Apache-2.0
"""Warp scans (``cub::WarpScan``) with several items a thread and a per-warp prefix callback.

The plan (:class:`WarpScanPlan`, :func:`plan_warp_scan`) and the provider's
C++ (:func:`render_warp_scan`) of ``scan.warp``'s scans. A logical warp is
``lanes`` consecutive threads (a power of two, at most 32) of a hardware warp;
each scans its own tile: ``lanes * items_per_thread`` items, lane ``l``
holding items ``l * items .. (l + 1) * items - 1``.

CUB's ``WarpScan`` takes one item a thread and no prefix callback. The
provider does what ``BlockScan`` does for several items: each thread reduces
its items (``cub::ThreadReduce``), the warp scans the totals (the one-item
``WarpScan`` call, which also gives the warp aggregate), and each thread scans
its items from the prefix it got. A prefix callback is called by every lane
of the logical warp with the warp aggregate, each lane with its own state
copy, and lane 0's return seeds the warp's scan (``WarpScan::Broadcast``):
CUB's block contract with the logical warp in place of the block's first
warp. Shuffles need no shared memory, so there is no temp storage and no
barrier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

import statefn

from ..._codegen import CallbackDecl, operator_functor, prefix_functor, render_unit, value_decl
from ..._errors import PlanError, ScanTypeError
from ..._lookback import Lookback
from ..._plan import ArrayFact, Block, Operand, ScalarFact, TupleFact, as_array
from ..._spec import AbiOperand, EntryPoint, Param, Primitive, c_parameters
from ..._vocab import Mode, TempMode
from .. import block_scan
from ..block_scan._plan import PrefixOp, ScanLikePlan, plan_scan, scan_key_field
from ..block_scan._stubs import WARP_FUNCTIONS
from ._sim import warp_scan_call

__all__ = [
    "CALLS",
    "LANES",
    "OPERANDS",
    "SPEC",
    "WARP_OPTIONS",
    "WarpScanPlan",
    "check_lanes",
    "plan_warp_scan",
    "render_warp_scan",
    "warp_keyword_hint",
]

#: The logical warp sizes: CUB's shuffle-based warp scans need a power of two.
LANES = (1, 2, 4, 8, 16, 32)


@attrs.frozen
class WarpScanPlan(ScanLikePlan):
    """Everything a warp scan's generated code depends on.

    Attributes
    ----------
    function : str
        The entry point's key (``warp.inclusive_sum``, ...), for messages.
    value_dtype : numpy.dtype
    block : tuple of int
        The launch's block shape (the logical warps are numbered in it).
    items_per_thread : int
    scalar : bool
    mode : {"inclusive", "exclusive"}
    scan_op : statefn.ScanOperator
    has_initial_value : bool
    prefix_op : statefn.StatefulFunction or statefn.StatelessFunction or None
        Called by every lane of the logical warp with the warp aggregate;
        lane 0's return seeds the warp's scan.
    has_warp_aggregate : bool
    lanes : int
        Threads a logical warp (a power of two, at most 32).
    """

    function: str
    value_dtype: np.dtype
    block: Block
    items_per_thread: int
    scalar: bool
    mode: Mode
    scan_op: statefn.ScanOperator
    has_initial_value: bool
    prefix_op: PrefixOp | None
    has_warp_aggregate: bool
    lanes: int
    temp_storage: TempMode = "implicit"
    key: str = scan_key_field()
    KIND: ClassVar[str] = "warp_scan"

    @property
    def warps(self) -> int:
        """Logical warps a block."""
        return self.threads // self.lanes

    @property
    def sum_path(self) -> bool:
        """Whether CUB's sum methods serve the call (``+`` and no initial value)."""
        return self.scan_op.is_sum and not self.has_initial_value


#: The block scans' options that warp scans do not take.
_BLOCK_ONLY = ("algorithm", "temp_storage", "auto_sync", "reverse", "block_aggregate", "tile")


def warp_keyword_hint(function: str, name: str) -> str:
    """Why warp call `function` takes no keyword `name` that block calls take (or "")."""
    if name == "block_aggregate":
        return " (a warp scan writes its warp's aggregate to warp_aggregate=)"
    if name == "field":
        return (
            " (zipped tile I/O is scan.block.load's and scan.block.store's; a warp "
            "store writes whole items)"
        )
    if name in _BLOCK_ONLY:
        return (
            f" ({name}= is an option of scan.block's scans; warp scans shuffle within "
            "each logical warp: no algorithm, temp storage, barrier, reverse or tile)"
        )
    return ""


def check_lanes(f: str, lanes: object, block: Block) -> int:
    """The logical warp size of call `f` (32 when None), once the block holds whole warps of it."""
    if lanes is None:
        lanes = 32
    if isinstance(lanes, bool) or not isinstance(lanes, int | np.integer) or lanes not in LANES:
        raise PlanError(
            f"{f}: lanes= must be a literal power of two from 1 to 32 (got {lanes!r}); CUB's "
            "warp primitives work within power-of-two logical warps"
        )
    threads = block[0] * block[1] * block[2]
    if threads % int(lanes):
        fits = min(threads & -threads, 32)  # the largest power of two dividing it
        raise PlanError(
            f"{f}: the block has {threads} threads, not a multiple of lanes={lanes}: the last "
            f"logical warp would be missing lanes; launch a multiple of {lanes} threads, or "
            f"pass lanes={fits} (it divides {threads})"
        )
    return int(lanes)


def plan_warp_scan(
    *,
    function: str,
    values: Operand,
    out: Operand | None,
    mode: str,
    scan_op: object,
    initial_value: ScalarFact | TupleFact | None,
    prefix_op: object,
    prefix_state: ArrayFact | None,
    warp_aggregate: ArrayFact | None,
    lanes: object,
    block: Block,
    items_per_thread: int | None = None,
) -> WarpScanPlan:
    """Check one warp-scan call and build its plan.

    The checks a block scan makes of the values, output, operator, initial
    value and prefix callback are made here too (:func:`..block_scan._plan.plan_scan`);
    then the warp's own.

    Raises
    ------
    PlanError, ScanTypeError, statefn.StatefnError
        For every call the library refuses, before any code is generated.
    """
    f = function
    lanes = check_lanes(f, lanes, block)
    if isinstance(prefix_op, Lookback):
        raise PlanError(
            f"{f}: prefix_op=scan.lookback is for block scans (scan.block), whose tiles are "
            "blocks; a warp scan's prefix comes from its own callback or initial value"
        )
    if mode == "exclusive" and initial_value is None and prefix_op is None:
        op = statefn.normalize(scan_op, role="scan_op")
        if not op.is_sum:
            raise PlanError(
                f"{f}: an exclusive scan with "
                f"scan_op={op.builtin or op.name or '<function>'!r} needs "
                "initial_value= or prefix_op=: each warp's lane 0 would have no first output "
                "(only sums have an identity CUB can use)"
            )
    if warp_aggregate is not None:
        if prefix_op is not None:
            raise PlanError(
                f"{f}: prefix_op= and warp_aggregate= cannot be combined: the callback receives "
                "the warp aggregate; read it there"
            )
        if not isinstance(warp_aggregate, ArrayFact) or warp_aggregate.ndim != 1:
            got = (
                f"{warp_aggregate.ndim}-D {warp_aggregate.dtype}"
                if isinstance(warp_aggregate, ArrayFact)
                else "a scalar"
            )
            raise ScanTypeError(
                f"{f}: warp_aggregate must be a 1-D local array of one item (got {got}); "
                "allocate it with cuda.local.array(1, dtype)"
            )
    scan = plan_scan(
        function=f,
        values=values,
        out=out,
        mode=mode,
        scan_op=scan_op,
        initial_value=initial_value,
        prefix_op=prefix_op,
        prefix_state=prefix_state,
        block_aggregate=None,
        algorithm="raking",
        temp_storage=None,
        block=block,
        items_per_thread=items_per_thread,
    )
    if warp_aggregate is not None and warp_aggregate.dtype != scan.value_dtype:
        raise ScanTypeError(
            f"{f}: warp_aggregate must be a 1-D array of the values' dtype {scan.value_dtype} "
            f"(got {warp_aggregate.dtype})"
        )
    return WarpScanPlan(
        function=f,
        value_dtype=scan.value_dtype,
        block=block,
        items_per_thread=scan.items_per_thread,
        scalar=scan.scalar,
        mode=scan.mode,
        scan_op=scan.scan_op,
        has_initial_value=scan.has_initial_value,
        prefix_op=scan.prefix_op,
        has_warp_aggregate=warp_aggregate is not None,
        lanes=lanes,
    )


def _functors(
    plan: WarpScanPlan, scan_cb: CallbackDecl | None, prefix_cb: CallbackDecl | None
) -> list[str]:
    out = [operator_functor("scan_op_t", plan.scan_op, scan_cb)]
    if prefix_cb is not None:
        out.append(
            "// every lane of the logical warp calls it, each with its own state copy\n"
            + prefix_functor(prefix_cb, stateful=plan.stateful, argument="aggregate")
        )
    return out


def _body(plan: WarpScanPlan) -> list[str]:
    n = plan.items_per_thread
    op = "::cuda::std::plus<>{}" if plan.sum_path else "scan_op_t{}"
    lines = [
        f"  value_t (&input)[{n}] = *static_cast<value_t (*)[{n}]>(in);",
        f"  value_t (&output)[{n}] = *static_cast<value_t (*)[{n}]>(out);",
        f"  const int rank = cub::RowMajorTid({plan.block[0]}, {plan.block[1]}, {plan.block[2]});",
        f"  warp_scan_t warp_scan(temp_storage[rank / {plan.lanes}]);",
        f"  const value_t thread_total = cub::ThreadReduce(input, {op});",
        "  value_t thread_prefix;",
    ]
    if plan.prefix_op is not None:
        # integer sums: lane 0's exclusive sum is 0, so every lane adds the prefix
        # (floats keep lane 0's prefix as it is: -0.0 + 0.0 would lose its sign)
        zero_first = plan.sum_path and plan.value_dtype.kind in "iu"
        scan = (
            "ExclusiveSum(thread_total, thread_prefix, aggregate)"
            if zero_first
            else f"ExclusiveScan(thread_total, thread_prefix, {op}, aggregate)"
        )
        combined = f"{op}(warp_prefix, thread_prefix)"
        lines += [
            "  value_t aggregate;",
            f"  warp_scan.{scan};",
            "  prefix_op_t prefix_op{state};",
            "  const value_t warp_prefix = warp_scan.Broadcast(prefix_op(aggregate), 0);",
            f"  thread_prefix = {combined};"
            if zero_first
            else f"  thread_prefix = rank % {plan.lanes} == 0 ? warp_prefix : {combined};",
        ]
        apply = "true"
    else:
        args = ["thread_total", "thread_prefix"]
        if plan.has_initial_value:
            args.append("*static_cast<const value_t*>(initial_value)")
        method = "ExclusiveSum" if plan.sum_path else "ExclusiveScan"
        if not plan.sum_path:
            args.append(op)
        if plan.has_warp_aggregate:
            args.append("*static_cast<value_t*>(warp_aggregate)")
        lines.append(f"  warp_scan.{method}({', '.join(args)});")
        always = plan.has_initial_value or (plan.sum_path and plan.mode == "exclusive")
        apply = "true" if always else f"rank % {plan.lanes} != 0"
    loop = f"for (int i = 1; i < {n}; ++i)"
    step = f"acc = {op}(acc, input[i]);"
    lines += [
        "  value_t acc = input[0];",
        f"  if ({apply}) acc = {op}(thread_prefix, acc);",
    ]
    if plan.mode == "inclusive":
        lines += [
            "  output[0] = acc;",
            "  #pragma unroll",
            f"  {loop} {{ {step} output[i] = acc; }}",
        ]
    else:
        # in place (output is input) each item is read before its slot is written
        lines += [
            "  output[0] = thread_prefix;",
            "  #pragma unroll",
            f"  {loop} {{ const value_t x = input[i]; output[i] = acc; acc = {op}(acc, x); }}",
        ]
    return lines


#: The provider's operands: the values, the output, the initial value, the
#: prefix callback's state and the warp aggregate output; unused ones are null.
OPERANDS = (
    *(op for op in block_scan.OPERANDS if op.name in ("in", "out", "initial_value", "state")),
    AbiOperand("warp_aggregate", "array", param="warp_aggregate", when="has_warp_aggregate"),
)


def render_warp_scan(
    plan: WarpScanPlan,
    *,
    scan_callback: CallbackDecl | None = None,
    prefix_callback: CallbackDecl | None = None,
    symbol: str | None = None,
    storage: str | None = None,
) -> str:
    """C++ source of a warp scan's provider."""
    types = [
        f"using warp_scan_t = cub::WarpScan<value_t, {plan.lanes}>;",
        "// one per logical warp; NullType (nothing stored) for the shuffle-based scans",
        f"using temp_storage_t = warp_scan_t::TempStorage[{plan.warps}];",
        *_functors(plan, scan_callback, prefix_callback),
    ]
    return render_unit(
        plan,
        header=("warp/warp_scan.cuh", "thread/thread_reduce.cuh"),
        callbacks=[c for c in (scan_callback, prefix_callback) if c is not None],
        value=value_decl(plan.value_dtype),
        types="\n".join(types),
        symbol=symbol,
        storage=storage,
        params=c_parameters(OPERANDS),
        comment=(
            f"Scans each logical warp's tile ({plan.lanes} lanes x {plan.items_per_thread} "
            "items) from `in` to `out`, seeded by the initial value or the prefix callback's "
            "return in lane 0; the warp aggregate to `warp_aggregate`."
        ),
        body="\n".join(_body(plan)),
    )


# ---------------------------------------------------------------------------
# the family: scan.warp's calls

#: the options every warp call takes, last
WARP_OPTIONS = (
    Param("lanes", "literal", 32),
    Param("threads", "literal", None),
    Param("items_per_thread", "literal", None),
)
CALLS = block_scan.scan_calls("warp_aggregate", WARP_OPTIONS, module="warp")


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> WarpScanPlan:
    name = entry.key
    return plan_warp_scan(
        **block_scan.scan_facts(entry, facts),
        warp_aggregate=as_array(name, "warp_aggregate", facts["warp_aggregate"]),
        lanes=facts["lanes"],
        block=block,
        items_per_thread=facts["items_per_thread"],
    )


def _render(
    plan: WarpScanPlan,
    callbacks: Sequence[CallbackDecl],
    symbol: str | None,
    storage: str | None,
) -> str:
    scan_cb, prefix_cb = block_scan.split_callbacks(plan, callbacks)
    return render_warp_scan(
        plan, scan_callback=scan_cb, prefix_callback=prefix_cb, symbol=symbol, storage=storage
    )


def _describe(plan: WarpScanPlan) -> str:
    return f"{plan.function} ({plan.lanes} lanes)"


#: The docstrings of the family's functions in :mod:`scan.warp`.
DOCS: Mapping[str, str] = {
    "scan": """\
    Scan within each logical warp, with any operator (``cub::WarpScan``).

    Every thread of the block calls it; each logical warp of ``lanes``
    consecutive threads (by linear thread index) scans its own tile of
    ``lanes * items_per_thread`` items, lane ``l`` holding items
    ``l * items_per_thread`` to ``(l + 1) * items_per_thread - 1``. There is
    no shared memory and no barrier: warps are independent.

    Parameters
    ----------
    values : scalar or local array
        This lane's item, or its items (the array length is the number of
        items per thread).
    out : local array, optional
        Where an array scan writes; defaults to ``values`` (in place).
    mode : {"inclusive", "exclusive"}
        Literal string.
    scan_op : str, callable or statefn.ScanOperator
        ``"+" "*" "min" "max" "&" "|" "^"``, their ``operator``/NumPy
        spellings, or a binary ``@cuda.jit(device=True)`` function.
    initial_value : scalar, optional
        Seeds each warp's scan (every lane passes the same value); required
        for exclusive scans with a non-sum operator unless ``prefix_op`` is
        given. Cannot be combined with ``prefix_op``.
    prefix_op : statefn.StatefulFunction, statefn.StatelessFunction or device function, optional
        Called by every lane of the logical warp with the warp's aggregate,
        each lane on its own ``prefix_state``; lane 0's return value seeds
        the warp's scan. A warp carries it from tile to tile.
    prefix_state : local array of one item, optional
        The state of a stateful ``prefix_op``; its dtype must equal the
        callback's declared state dtype.
    warp_aggregate : local array of one item, optional
        Receives the warp's aggregate, in every lane. Cannot be combined with
        ``prefix_op`` (the callback receives it instead).
    lanes : int
        Literal: threads per logical warp, a power of two from 1 to 32; the
        block's threads must be a multiple of it.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's.
    items_per_thread : int, optional
        Only needed when ``values`` is not a local array of literal length.

    Returns
    -------
    scalar or None
        The scanned value for scalar ``values``; None for arrays.
    """,
    "inclusive_sum": """\
    Inclusive prefix sum within each logical warp. Parameters as in :func:`scan`.""",
    "exclusive_sum": """\
    Exclusive prefix sum within each logical warp (lane 0's first output is 0, or the prefix).

    Parameters as in :func:`scan`.
    """,
    "inclusive_scan": """\
    Inclusive scan with ``scan_op`` within each logical warp. Parameters as in :func:`scan`.""",
    "exclusive_scan": """\
    Exclusive scan with ``scan_op`` within each logical warp. Parameters as in :func:`scan`.

    A non-sum operator needs ``initial_value`` or ``prefix_op``.
    """,
}


SPEC = Primitive(
    family="warp_scan",
    calls=CALLS,
    plan_type=WarpScanPlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=block_scan.scan_callbacks,
    shares_storage=lambda plan: False,  # shuffles: nothing shared, no barrier
    describe=_describe,
    docs=DOCS,
    stubs=WARP_FUNCTIONS,
    returns="values",
    keyword_hint=warp_keyword_hint,
    simulator=warp_scan_call,
)
