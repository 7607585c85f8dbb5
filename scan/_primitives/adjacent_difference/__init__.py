# SPDX-License-Identifier: Apache-2.0
"""Block adjacent difference (``cub::BlockAdjacentDifference::SubtractLeft``).

``block.adjacent_difference(items, out=None, *, op="-", carry=None)``: every
thread of a block passes its items (a local array, blocked arrangement), and
``out[i]`` becomes ``op(items[i], item before it)``. The tile's first item has
no item before it: it is copied unchanged, unless ``carry=`` (a one-item local
array) names it, CUB's ``tile_predecessor_item``; with ``carry=`` every
thread's ``carry[0]`` then becomes the tile's last item, so a tile loop
differences a whole row (:mod:`scan._primitives._neighbours`). ``out`` may
be ``items`` itself (the default).

The family's spec: calls, plan, checks, operand ABI, renderer, simulator
semantics and stubs, all in this folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

import statefn

from ..._codegen import CallbackDecl, functor_calling, render_unit, value_decl
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
from ..._vocab import TempMode
from .._neighbours import CARRY_PARAM, carry_lines, check_carry, check_items, user_or_builtin
from .._neighbours import neighbour_results as _neighbour_results
from ..block_scan import COMMON
from ._stubs import FUNCTIONS as STUBS

__all__ = ["CALLS", "OPERANDS", "SPEC", "AdjacentDifferencePlan", "render_adjacent_difference"]

CALLS = (
    EntryPoint(
        "adjacent_difference",
        "adjacent_difference",
        (
            Param("items", "operand", keyword_only=False),
            Param("out", "operand", None, keyword_only=False),
            Param("op", "callable", "-", callback="scan_op"),
            CARRY_PARAM,
            *COMMON,
        ),
    ),
)


@attrs.frozen
class AdjacentDifferencePlan(BlockPlan):
    """Everything an adjacent difference's generated code depends on.

    Attributes
    ----------
    function : str
        The entry point called (for messages).
    value_dtype : numpy.dtype
        The items' (and the results') dtype.
    block : tuple of int
    items_per_thread : int
    difference_op : statefn.ScanOperator or None
        The user's ``op(a, b)``; None for ``"-"`` (``a - b``).
    has_carry : bool
        Whether ``carry=`` gives the tile's predecessor and takes its last item.
    temp_storage : {"implicit", "caller"}
    auto_sync : bool
    """

    function: str
    value_dtype: np.dtype
    block: Block
    items_per_thread: int
    difference_op: statefn.ScanOperator | None
    has_carry: bool
    temp_storage: TempMode
    auto_sync: bool
    key: str = attrs.field(init=False, eq=False, repr=False)

    @key.default
    def _key(self) -> str:
        return digest("adjacent_difference", plan_fields(self))

    @property
    def symbol(self) -> str:
        """The ``extern "C"`` entry point of the provider generated for this plan."""
        return provider_symbol("adjacent_difference", self.key)

    @property
    def returns_value(self) -> bool:
        """The call writes ``out`` (and ``carry``); it returns nothing."""
        return False


def plan_adjacent_difference(
    *,
    function: str,
    items: Any,
    out: Any,
    op: object,
    carry: Any,
    temp_storage: ArrayFact | None,
    block: Block,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> AdjacentDifferencePlan:
    """Check one ``adjacent_difference`` call and build its plan."""
    f = function
    dtype = check_items(f, "items", items)
    ipt = items_per_thread_of(f, items, items_per_thread)
    if out is not None:
        if not isinstance(out, ArrayFact) or out.ndim != 1:
            raise ScanTypeError(f"{f}: out must be a 1-D local array like items (or left out)")
        if out.dtype != dtype:
            raise ScanTypeError(
                f"{f}: out has dtype {statefn.dtype_name(out.dtype)} but items have "
                f"{statefn.dtype_name(dtype)}; the differences have the items' dtype: pass "
                "an out of that dtype, or convert after the call"
            )
        if out.length is not None and out.length != ipt:
            raise ScanTypeError(
                f"{f}: out has length {out.length} but items hold {ipt} items per thread; "
                "give out the items' length"
            )
    difference_op = user_or_builtin(f, op, "-", 'op="-" (the default: items[i] - previous)')
    return AdjacentDifferencePlan(
        function=f,
        value_dtype=dtype,
        block=block,
        items_per_thread=ipt,
        difference_op=difference_op,
        has_carry=check_carry(f, carry, dtype),
        temp_storage=temp_mode(f, temp_storage),
        auto_sync=auto_sync,
    )


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> AdjacentDifferencePlan:
    return plan_adjacent_difference(
        function=entry.key,
        items=facts["items"],
        out=facts["out"],
        op=facts["op"],
        carry=facts["carry"],
        temp_storage=as_array(entry.key, "temp_storage", facts["temp_storage"]),
        block=block,
        items_per_thread=facts["items_per_thread"],
        auto_sync=facts["auto_sync"],
    )


#: The provider's operands: temp storage (caller-owned mode), this thread's
#: items, where the differences go (``out``, else the items), and ``carry``.
OPERANDS = (
    AbiOperand("temp", "array", param="temp_storage", when="caller_temp"),
    AbiOperand("in", "input", param="items"),
    AbiOperand("out", "output", param="out", alias="items"),
    AbiOperand("carry", "input", param="carry", when="has_carry"),
)


# ---------------------------------------------------------------------------
# the provider


def render_adjacent_difference(
    plan: AdjacentDifferencePlan,
    *,
    difference_callback: CallbackDecl | None = None,
    symbol: str | None = None,
    storage: str | None = None,
) -> str:
    """C++ source of an adjacent difference's provider.

    `difference_callback` is the lowered user operator (when the plan has
    one); `symbol` and `storage` as in :func:`scan._primitives.block_scan._unit.scan_unit`.
    """
    n = plan.items_per_thread
    bx, by, bz = plan.block
    if difference_callback is None:
        functor = (
            "struct difference_op_t {\n"
            "  __device__ __forceinline__ value_t\n"
            "  operator()(const value_t& a, const value_t& b) const { return a - b; }\n"
            "};"
        )
    else:
        functor = functor_calling("difference_op_t", difference_callback)
    types = (
        f"using block_adjacent_t = cub::BlockAdjacentDifference<value_t, {bx}, {by}, {bz}>;\n"
        "using temp_storage_t = typename block_adjacent_t::TempStorage;\n" + functor
    )
    lines = [
        f"value_t (&input)[{n}] = *static_cast<value_t (*)[{n}]>(in);",
        f"value_t (&output)[{n}] = *static_cast<value_t (*)[{n}]>(out);",
    ]
    call = "block_adjacent_t(temp_storage).SubtractLeft(input, output, difference_op_t{}"
    if plan.has_carry:
        before, after = carry_lines(plan.threads, n, plan.block)
        lines += [*before, call + ", carry_item);", *after]
    else:
        lines.append(call + ");")
    if plan.auto_sync:
        lines.append("__syncthreads(); // temp storage may be reused after this barrier")
    return render_unit(
        plan,
        header="block_adjacent_difference.cuh",
        callbacks=[] if difference_callback is None else [difference_callback],
        value=value_decl(plan.value_dtype),
        types=types,
        symbol=symbol,
        storage=storage,
        params=c_parameters(OPERANDS),
        comment=(
            f"Writes op(item, the item before it) of the block's tile ({n} items a thread, "
            "`in`) to `out`; the tile's first item "
            + (
                "takes carry[0] as the item before it, and every thread's carry[0] "
                "becomes the tile's last item."
                if plan.has_carry
                else "is copied unchanged."
            )
        ),
        body="\n".join("  " + line for line in lines),
    )


def _render(
    plan: AdjacentDifferencePlan,
    callbacks: Sequence[CallbackDecl],
    symbol: str | None,
    storage: str | None,
) -> str:
    return render_adjacent_difference(
        plan,
        difference_callback=callbacks[0] if callbacks else None,
        symbol=symbol,
        storage=storage,
    )


def _callbacks(plan: AdjacentDifferencePlan) -> list[Any]:
    return [] if plan.difference_op is None else [plan.difference_op]


def _shares_storage(plan: AdjacentDifferencePlan) -> bool:
    return plan.temp_storage == "implicit" and plan.auto_sync


def _describe(plan: AdjacentDifferencePlan) -> str:
    return plan.function + (" carry" if plan.has_carry else "")


def _layout_plan(
    primitive: str, dtype: np.dtype[Any], block: Block, items_per_thread: int, algorithm: str | None
) -> AdjacentDifferencePlan:
    if algorithm is not None:
        raise ScanTypeError(
            f"temp_storage({primitive!r}): adjacent_difference has no algorithm=; drop it"
        )
    return plan_adjacent_difference(
        function=f"temp_storage({primitive!r})",
        items=ArrayFact(dtype=dtype, ndim=1, length=items_per_thread),
        out=None,
        op="-",
        carry=None,
        temp_storage=ArrayFact(dtype=np.uint8, ndim=1),
        block=block,
    )


# ---------------------------------------------------------------------------
# the simulator's semantics


def simulate(block: BlockInputs) -> list[Any]:
    """Each thread's writes: ``out`` (named ``items`` when not passed) and ``carry``.

    ``op(item, previous)`` in the items' dtype (``a - b`` wraps integers as
    the GPU does); the tile's first item copied, or differenced from thread
    0's ``carry[0]``.
    """
    plan: AdjacentDifferencePlan = block.plan
    dtype = plan.value_dtype
    if plan.difference_op is None:

        def pair(previous: Any, item: Any) -> Any:
            return dtype.type(item - previous)
    else:
        combine = block.combiner(plan.difference_op)

        def pair(previous: Any, item: Any) -> Any:
            return combine(item, previous)

    return list(
        _neighbour_results(block, "items", plan.has_carry, lambda item: item, pair, "out", dtype)
    )


#: The docstring of ``scan.block.adjacent_difference``.
DOCS: Mapping[str, str] = {
    "adjacent_difference": """Differences of each item and the one before it
    (``cub::BlockAdjacentDifference::SubtractLeft``).

    Every thread of the block calls it. ``out[i] = op(items[i], previous)``,
    where the item before thread ``t``'s first is thread ``t - 1``'s last
    (blocked arrangement, as :func:`load` gives). ``out`` may be ``items``.

    Parameters
    ----------
    items : local array
        This thread's items (real numbers: integers, float16, bfloat16,
        float32, float64).
    out : local array, optional
        Where the differences go, of the items' dtype and length; default
        ``items`` (in place).
    op : "-" or function
        ``"-"`` (default): ``a - b`` in the items' dtype (integers wrap). Or a
        binary function ``op(a, b)`` (``@cuda.jit(device=True)``, a plain
        function or a lambda) of the item and the one before it, returning
        a number of the items' dtype.
    carry : local array, optional
        A one-item local array (``cuda.local.array(1, dtype)``): ``carry[0]``
        is the item before the tile's first (CUB's
        ``tile_predecessor_item``), and every thread's ``carry[0]`` becomes
        the tile's last item, so a tile loop differences a whole row. Without
        it the tile's first item is copied unchanged. Set it in every thread
        before the first tile; thread 0's is the one read.
    temp_storage : shared uint8 array, optional
        Caller-owned temp storage (``temp_storage("adjacent_difference", ...)``);
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
    family="adjacent_difference",
    calls=CALLS,
    plan_type=AdjacentDifferencePlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=_callbacks,
    shares_storage=_shares_storage,
    describe=_describe,
    layout_plan=_layout_plan,
    docs=DOCS,
    layout_names=("adjacent_difference",),
    stubs=STUBS,
    simulate=simulate,
)
