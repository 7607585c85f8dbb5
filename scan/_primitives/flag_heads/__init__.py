# SPDX-License-Identifier: Apache-2.0
"""Block head flags (``cub::BlockDiscontinuity::FlagHeads``).

``block.flag_heads(flags, items, *, op=None, carry=None)``: every thread of a
block passes its items (a local array, blocked arrangement) and a local array
of flags as long; ``flags[i]`` becomes 1 where item ``i`` starts a run (it
differs from the item before it, or ``op(previous, item)`` is true) and 0
elsewhere. The tile's first item is flagged, unless ``carry=`` (a one-item
local array) names the item before it, CUB's ``tile_predecessor_item``; with
``carry=`` every thread's ``carry[0]`` then becomes the tile's last item
(:mod:`scan._primitives._neighbours`).

The family's spec: calls, plan, checks, operand ABI, renderer, simulator
semantics and stubs, all in this folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

import statefn

from ..._codegen import CallbackDecl, render_unit, value_decl
from ..._errors import ScanTypeError
from ..._plan import (
    ArrayFact,
    Block,
    BlockPlan,
    as_array,
    digest,
    items_per_thread_of,
    plan_fields,
    provider_symbol,
    temp_mode,
)
from ..._spec import AbiOperand, BlockInputs, EntryPoint, Param, Primitive, c_parameters
from ..._vocab import TempMode, c_type
from .._neighbours import CARRY_PARAM, carry_lines, check_carry, check_items, user_or_builtin
from .._neighbours import neighbour_results as _neighbour_results
from ..block_scan import COMMON
from ._stubs import FUNCTIONS as STUBS

__all__ = ["CALLS", "OPERANDS", "SPEC", "FlagHeadsPlan", "render_flag_heads"]

CALLS = (
    EntryPoint(
        "flag_heads",
        "flag_heads",
        (
            Param("flags", "operand", keyword_only=False),
            Param("items", "operand", keyword_only=False),
            Param("op", "callable", None, callback="scan_op"),
            CARRY_PARAM,
            *COMMON,
        ),
    ),
)

#: The dtypes a flags array may have: bool or an integer.
FLAG_DTYPES = tuple(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
    )
)


@attrs.frozen
class FlagHeadsPlan(BlockPlan):
    """Everything a head-flagging call's generated code depends on.

    Attributes
    ----------
    function : str
        The entry point called (for messages).
    value_dtype : numpy.dtype
        The items' dtype.
    flag_dtype : numpy.dtype
        The flags' dtype (bool or an integer).
    block : tuple of int
    items_per_thread : int
    flag_op : statefn.ScanOperator or None
        The user's ``op(previous, item)`` (nonzero: a head); None for ``!=``.
    has_carry : bool
        Whether ``carry=`` gives the tile's predecessor and takes its last item.
    temp_storage : {"implicit", "caller"}
    auto_sync : bool
    """

    function: str
    value_dtype: np.dtype
    flag_dtype: np.dtype
    block: Block
    items_per_thread: int
    flag_op: statefn.ScanOperator | None
    has_carry: bool
    temp_storage: TempMode
    auto_sync: bool
    key: str = attrs.field(init=False, eq=False, repr=False)

    @key.default
    def _key(self) -> str:
        return digest("flag_heads", plan_fields(self))

    @property
    def symbol(self) -> str:
        """The ``extern "C"`` entry point of the provider generated for this plan."""
        return provider_symbol("flag_heads", self.key)

    @property
    def returns_value(self) -> bool:
        """The call writes ``flags`` (and ``carry``); it returns nothing."""
        return False


def plan_flag_heads(
    *,
    function: str,
    flags: Any,
    items: Any,
    op: object,
    carry: Any,
    temp_storage: ArrayFact | None,
    block: Block,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> FlagHeadsPlan:
    """Check one ``flag_heads`` call and build its plan."""
    f = function
    dtype = check_items(f, "items", items)
    ipt = items_per_thread_of(f, items, items_per_thread)
    if flags is None or not isinstance(flags, ArrayFact) or flags.ndim != 1:
        raise ScanTypeError(
            f"{f}: flags must be a 1-D local array as long as items (the first argument: "
            "flag_heads(flags, items)), e.g. cuda.local.array(items_per_thread, np.int32)"
        )
    if flags.dtype not in FLAG_DTYPES:
        raise ScanTypeError(
            f"{f}: flags has dtype {statefn.dtype_name(flags.dtype)}; flags are bool or "
            "integers (1 at a head, 0 elsewhere): allocate them with np.int32 or np.bool_, "
            "and pass them first: flag_heads(flags, items)"
        )
    if flags.length is not None and flags.length != ipt:
        raise ScanTypeError(
            f"{f}: flags has length {flags.length} but items hold {ipt} items per thread; "
            "give flags the items' length"
        )
    flag_op = user_or_builtin(f, op, None, "op=None (the default: a head where items differ)")
    return FlagHeadsPlan(
        function=f,
        value_dtype=dtype,
        flag_dtype=flags.dtype,
        block=block,
        items_per_thread=ipt,
        flag_op=flag_op,
        has_carry=check_carry(f, carry, dtype),
        temp_storage=temp_mode(f, temp_storage),
        auto_sync=auto_sync,
    )


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> FlagHeadsPlan:
    return plan_flag_heads(
        function=entry.key,
        flags=facts["flags"],
        items=facts["items"],
        op=facts["op"],
        carry=facts["carry"],
        temp_storage=as_array(entry.key, "temp_storage", facts["temp_storage"]),
        block=block,
        items_per_thread=facts["items_per_thread"],
        auto_sync=facts["auto_sync"],
    )


#: The provider's operands: temp storage (caller-owned mode), the flags, this
#: thread's items and ``carry``.
OPERANDS = (
    AbiOperand("temp", "array", param="temp_storage", when="caller_temp"),
    AbiOperand("flags", "array", param="flags"),
    AbiOperand("in", "input", param="items"),
    AbiOperand("carry", "input", param="carry", when="has_carry"),
)


# ---------------------------------------------------------------------------
# the provider


def _flag_type(dtype: np.dtype) -> str:
    return "bool" if dtype == np.dtype(np.bool_) else c_type(dtype)


def render_flag_heads(
    plan: FlagHeadsPlan,
    *,
    flag_callback: CallbackDecl | None = None,
    symbol: str | None = None,
    storage: str | None = None,
) -> str:
    """C++ source of a head-flagging call's provider.

    `flag_callback` is the lowered user operator (when the plan has one; its
    result, converted to the items' type, flags a head where nonzero);
    `symbol` and `storage` as in :func:`scan._primitives.block_scan._unit.scan_unit`.
    """
    n = plan.items_per_thread
    bx, by, bz = plan.block
    if flag_callback is None:
        test = "return a != b;"
    else:
        test = f"value_t r; {flag_callback.symbol}(&r, &a, &b); return r != value_t(0);"
    functor = (
        "struct flag_op_t {\n"
        "  __device__ __forceinline__ bool\n"
        f"  operator()(const value_t& a, const value_t& b) const {{ {test} }}\n"
        "};"
    )
    types = (
        f"using block_discontinuity_t = cub::BlockDiscontinuity<value_t, {bx}, {by}, {bz}>;\n"
        "using temp_storage_t = typename block_discontinuity_t::TempStorage;\n"
        f"using flag_t = {_flag_type(plan.flag_dtype)};\n" + functor
    )
    lines = [
        f"value_t (&input)[{n}] = *static_cast<value_t (*)[{n}]>(in);",
        f"flag_t (&head_flags)[{n}] = *static_cast<flag_t (*)[{n}]>(flags);",
    ]
    call = "block_discontinuity_t(temp_storage).FlagHeads(head_flags, input, flag_op_t{}"
    if plan.has_carry:
        before, after = carry_lines(plan.threads, n, plan.block)
        lines += [*before, call + ", carry_item);", *after]
    else:
        lines.append(call + ");")
    if plan.auto_sync:
        lines.append("__syncthreads(); // temp storage may be reused after this barrier")
    return render_unit(
        plan,
        header="block_discontinuity.cuh",
        callbacks=[] if flag_callback is None else [flag_callback],
        value=value_decl(plan.value_dtype),
        types=types,
        symbol=symbol,
        storage=storage,
        params=c_parameters(OPERANDS),
        comment=(
            f"Sets `flags` to 1 where an item of the block's tile ({n} items a thread, `in`) "
            "starts a run, 0 elsewhere; the tile's first item "
            + (
                "is compared with carry[0], and every thread's carry[0] becomes the tile's "
                "last item."
                if plan.has_carry
                else "is flagged."
            )
        ),
        body="\n".join("  " + line for line in lines),
    )


def _render(
    plan: FlagHeadsPlan, callbacks: Sequence[CallbackDecl], symbol: str | None, storage: str | None
) -> str:
    return render_flag_heads(
        plan, flag_callback=callbacks[0] if callbacks else None, symbol=symbol, storage=storage
    )


def _callbacks(plan: FlagHeadsPlan) -> list[Any]:
    return [] if plan.flag_op is None else [plan.flag_op]


def _shares_storage(plan: FlagHeadsPlan) -> bool:
    return plan.temp_storage == "implicit" and plan.auto_sync


def _describe(plan: FlagHeadsPlan) -> str:
    return plan.function + (" carry" if plan.has_carry else "")


def _layout_plan(
    primitive: str, dtype: np.dtype[Any], block: Block, items_per_thread: int, algorithm: str | None
) -> FlagHeadsPlan:
    if algorithm is not None:
        raise ScanTypeError(f"temp_storage({primitive!r}): flag_heads has no algorithm=; drop it")
    return plan_flag_heads(
        function=f"temp_storage({primitive!r})",
        flags=ArrayFact(dtype=np.int32, ndim=1, length=items_per_thread),
        items=ArrayFact(dtype=dtype, ndim=1, length=items_per_thread),
        op=None,
        carry=None,
        temp_storage=ArrayFact(dtype=np.uint8, ndim=1),
        block=block,
    )


# ---------------------------------------------------------------------------
# the simulator's semantics


def simulate(block: BlockInputs) -> list[Any]:
    """Each thread's writes: ``flags`` (1 at a head, 0 elsewhere) and ``carry``."""
    plan: FlagHeadsPlan = block.plan
    if plan.flag_op is None:

        def pair(previous: Any, item: Any) -> Any:
            return previous != item
    else:
        combine = block.combiner(plan.flag_op)

        def pair(previous: Any, item: Any) -> Any:
            return combine(previous, item) != 0

    return list(
        _neighbour_results(
            block, "items", plan.has_carry, lambda item: True, pair, "flags", plan.flag_dtype
        )
    )


#: The docstring of ``scan.block.flag_heads``.
DOCS: Mapping[str, str] = {
    "flag_heads": """Flags the items that start a run (``cub::BlockDiscontinuity::FlagHeads``).

    Every thread of the block calls it. ``flags[i]`` becomes 1 where
    ``items[i]`` differs from the item before it (``op(previous, item)``
    true, with ``op=``), 0 elsewhere; the item before thread ``t``'s first
    is thread ``t - 1``'s last (blocked arrangement, as :func:`load` gives).

    Parameters
    ----------
    flags : local array
        Where the flags go: bool or integers, as long as ``items``.
    items : local array
        This thread's items (real numbers: integers, float16, bfloat16,
        float32, float64).
    op : function, optional
        ``op(previous, item)``: a head where it returns true (nonzero); a
        ``@cuda.jit(device=True)`` function, a plain function or a lambda.
        Default: ``previous != item``.
    carry : local array, optional
        A one-item local array (``cuda.local.array(1, dtype)``): ``carry[0]``
        is the item before the tile's first (CUB's
        ``tile_predecessor_item``), and every thread's ``carry[0]`` becomes
        the tile's last item, so a tile loop flags a whole row. Without it
        the tile's first item is flagged. Set it in every thread before the
        first tile; thread 0's is the one read.
    temp_storage : shared uint8 array, optional
        Caller-owned temp storage (``temp_storage("flag_heads", ...)``);
        library-owned static shared memory by default.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's.
    items_per_thread : int, optional
        Only needed when ``items`` is not a local array of literal length.
    auto_sync : bool
        Insert the block barrier CUB requires before temp storage (and, with
        ``carry=``, the call's own slot for the tile's last item) is reused.
""",
}


SPEC = Primitive(
    family="flag_heads",
    calls=CALLS,
    plan_type=FlagHeadsPlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=_callbacks,
    shares_storage=_shares_storage,
    describe=_describe,
    layout_plan=_layout_plan,
    docs=DOCS,
    layout_names=("flag_heads",),
    stubs=STUBS,
    simulate=simulate,
)
