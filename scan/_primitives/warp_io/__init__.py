# SPDX-License-Identifier: Apache-2.0
"""Warp tile I/O: ``scan.warp.load`` and ``scan.warp.store``.

Each logical warp (``lanes`` consecutive threads, as in the warp scans) moves
its own tile of ``lanes * items_per_thread`` items between an array and its
lanes' items, from an offset of its own (a warp's row, a warp's tile of a
row). The provider uses CUB's direct thread I/O (``cub::LoadDirectBlocked``,
``LoadDirectBlockedVectorized``, ``LoadDirectStriped`` and the stores): no
shared memory and no barrier, the warp's full tiles unguarded and a partial
tile guarded, with pointer arithmetic instead of the bounds-checked indexing
of a hand-written loop.

Algorithms (``algorithm=``):

``"direct"``
    Blocked: lane ``l`` moves items ``l * ipt`` to ``(l + 1) * ipt - 1``.
``"vectorize"`` (the default)
    Blocked, with vector accesses where the warp's tile is aligned for them
    (full tiles of numeric values; loads of records too); direct otherwise.
``"striped"``
    Warp-striped: item ``i`` of lane ``l`` is tile item ``i * lanes + l``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import attrs
import numpy as np

from ..._codegen import CallbackDecl, render_unit, value_decl
from ..._errors import PlanError, ScanTypeError
from ..._plan import (
    ArrayFact,
    Block,
    BlockPlan,
    Operand,
    ScalarFact,
    TupleFact,
    as_array,
    as_scalar,
    check_index,
    check_record_operand,
    digest,
    plan_fields,
    provider_symbol,
)
from ..._spec import AbiOperand, EntryPoint, Param, Primitive, c_parameters
from ..._vocab import widens
from ..tile_io import io_params
from ..tile_io._plan import check_tile_operands
from ..tile_io._stubs import WARP_FUNCTIONS
from ..tile_io._unit import conversion_decl, word_moves
from ..warp_scan import WARP_OPTIONS, check_lanes, warp_keyword_hint
from ._sim import warp_io_call

__all__ = ["ALGORITHMS", "CALLS", "OPERANDS", "SPEC", "WarpIOPlan", "plan_warp_io"]

#: The warp tile I/O algorithms; the first is the default.
ALGORITHMS = ("vectorize", "direct", "striped")


@attrs.frozen
class WarpIOPlan(BlockPlan):
    """Everything a warp load or store's generated code depends on.

    Attributes
    ----------
    direction : {"load", "store"}
    value_dtype : numpy.dtype
    block : tuple of int
    items_per_thread : int
    lanes : int
    algorithm : str
        One of :data:`ALGORITHMS`.
    has_oob_default : bool
        Loads only: out-of-range items receive a default value.
    array_dtypes : tuple of numpy.dtype or None
        ``(dtype,)`` of a float16 or bfloat16 array of float32 or float64
        items (a load widens exactly, a store rounds to nearest, ties to
        even), else None: the array has its items' dtype.
    """

    direction: Literal["load", "store"]
    value_dtype: np.dtype
    block: Block
    items_per_thread: int
    lanes: int
    algorithm: str
    has_oob_default: bool
    temp_storage: Literal["implicit"] = "implicit"
    array_dtypes: tuple[np.dtype, ...] | None = None
    key: str = attrs.field(init=False, eq=False, repr=False)
    KIND: ClassVar[str] = "warp_io"

    @key.default
    def _key(self) -> str:
        return digest(self.KIND, plan_fields(self))

    @property
    def function(self) -> str:
        """The entry point's key, for messages."""
        return f"warp.{self.direction}"

    @property
    def warp_tile(self) -> int:
        """Items one logical warp moves."""
        return self.lanes * self.items_per_thread

    @property
    def symbol(self) -> str:
        """The ``extern "C"`` entry point of the provider generated for this plan."""
        return provider_symbol(f"warp_{self.direction}", self.key)

    @property
    def returns_value(self) -> bool:
        """Tile I/O returns nothing."""
        return False

    @property
    def array_dtype(self) -> np.dtype:
        """The array's dtype: :attr:`value_dtype` unless it converts."""
        return self.array_dtypes[0] if self.array_dtypes is not None else self.value_dtype

    @property
    def vector_stores(self) -> int:
        """Items a vector store moves (CUB's ``StoreDirectBlockedVectorized``); 1: none."""
        if self.algorithm != "vectorize" or self.value_dtype.names is not None:
            return 1
        if self.array_dtype.itemsize > 4:
            return 1
        width = min(4, self.items_per_thread)
        power = width & (width - 1) == 0
        return width if power and self.items_per_thread % width == 0 else 1


def plan_warp_io(
    *,
    function: Literal["load", "store"],
    array: ArrayFact,
    items: Operand,
    algorithm: object,
    oob_default: ScalarFact | TupleFact | None,
    lanes: object,
    block: Block,
    items_per_thread: int | None = None,
) -> WarpIOPlan:
    """Check one ``warp.load``/``warp.store`` call and build its plan."""
    f = f"warp.{function}"
    lanes = check_lanes(f, lanes, block)
    value_dtype, ipt = check_tile_operands(f, array, items, items_per_thread)
    if algorithm is None:
        algorithm = ALGORITHMS[0]
    if algorithm not in ALGORITHMS:
        raise PlanError(
            f"{f}: algorithm must be one of {', '.join(map(repr, ALGORITHMS))} "
            f"(got {algorithm!r}); warp tile I/O moves items without shared memory"
        )
    if oob_default is not None and function == "store":
        raise PlanError(f"{f}: oob_default= only applies to load")
    if oob_default is not None:
        check_record_operand(f, "oob_default", oob_default, value_dtype)
    return WarpIOPlan(
        direction=function,
        value_dtype=value_dtype,
        block=block,
        items_per_thread=ipt,
        lanes=lanes,
        algorithm=str(algorithm),
        has_oob_default=oob_default is not None,
        array_dtypes=(array.dtype,) if widens(array.dtype, value_dtype) else None,
    )


# ---------------------------------------------------------------------------
# the family: scan.warp's load and store


def _io(name: Literal["load", "store"]) -> EntryPoint:
    options = (Param("algorithm", "literal", None), *WARP_OPTIONS)
    return EntryPoint(name, name, (*io_params(name), *options), module="warp")


CALLS = (_io("load"), _io("store"))


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> WarpIOPlan:
    name = entry.key
    array_name = "src" if entry.kind == "load" else "dst"
    array = as_array(name, array_name, facts[array_name])
    if array is None:
        raise ScanTypeError(f"{name}: {array_name} must be an array")
    items = facts["items"]
    if items is None:
        raise ScanTypeError(f"{name}: items must be a local array")
    check_index(name, "valid_items", facts["valid_items"])
    check_index(name, "offset", facts["offset"])
    return plan_warp_io(
        function="load" if entry.kind == "load" else "store",
        array=array,
        items=items,
        algorithm=facts["algorithm"],
        oob_default=as_scalar(name, "oob_default", facts.get("oob_default")),
        lanes=facts["lanes"],
        block=block,
        items_per_thread=facts["items_per_thread"],
    )


#: The provider's operands: the warp's tile's first item, how many items from
#: there are valid, the out-of-range default (loads) and this lane's items.
OPERANDS = (
    AbiOperand("ptr", "tile", param=("src", "dst"), offset="offset"),
    AbiOperand("valid", "tile_valid", param=("src", "dst"), offset="offset", count="valid_items"),
    AbiOperand("oob_default", "value", param="oob_default", when="has_oob_default", const=True),
    AbiOperand("items", "array", param="items"),
)


def _words(plan: WarpIOPlan) -> str:
    """A converting ``vectorize`` tile's accesses as 16-byte words (empty: not such a plan).

    CUB's vectorised accesses move ``__half`` and ``__nv_bfloat16`` items one
    by one (its vector types are built-in ones): where a lane's items are
    whole 16-byte words (8 or 16 half-precision items), they are moved as
    ``uint4`` words, and with direct accesses where the tile is not 16-byte
    aligned.
    """
    n = plan.items_per_thread
    nbytes = n * plan.array_dtype.itemsize
    if plan.array_dtypes is None or plan.algorithm != "vectorize" or nbytes % 16 != 0:
        return ""
    load = plan.direction == "load"
    move = " ".join(word_moves(load, f"p + lane * {n}", "memory_items", nbytes // 16))
    verb = "Load" if load else "Store"
    fallback = f"cub::{verb}DirectBlocked(lane, p, memory_items);"
    return (
        "if (reinterpret_cast<unsigned long long>(p) % 16 == 0) {\n"
        f"      {move}\n"
        f"    }} else {{\n      {fallback}\n    }}"
    )


def _body(plan: WarpIOPlan) -> list[str]:
    n, lanes = plan.items_per_thread, plan.lanes
    load = plan.direction == "load"
    convert = plan.array_dtypes is not None
    io_type = "memory_t" if convert else "value_t"
    buffer = "memory_items" if convert else "thread_items"
    lines = [
        f"  {io_type}* p = static_cast<{io_type}*>(ptr);",
        f"  value_t (&thread_items)[{n}] = *static_cast<value_t (*)[{n}]>(items);",
        f"  const int lane = cub::RowMajorTid({plan.block[0]}, {plan.block[1]}, "
        f"{plan.block[2]}) % {lanes};",
    ]
    verb = "Load" if load else "Store"
    striped = plan.algorithm == "striped"
    direct = f"cub::{verb}DirectStriped<{lanes}>" if striped else f"cub::{verb}DirectBlocked"
    words = _words(plan)
    if words:
        full = words
    elif load and plan.algorithm == "vectorize":
        # CUB's own alignment check: direct loads where the tile is not aligned
        full = f"cub::LoadDirectBlockedVectorized(lane, p, {buffer});"
    elif plan.vector_stores > 1:
        align = plan.vector_stores * plan.array_dtype.itemsize
        full = (
            f"if (reinterpret_cast<unsigned long long>(p) % {align} == 0) "
            f"cub::StoreDirectBlockedVectorized(lane, p, {buffer}); "
            f"else cub::StoreDirectBlocked(lane, p, {buffer});"
        )
    else:
        full = f"{direct}(lane, p, {buffer});"
    guard = "static_cast<int>(valid > 0 ? valid : 0)"
    oob = "*static_cast<const value_t*>(oob_default)"
    if convert and load:
        # each valid item widened on its own; the others keep their values (or get the default)
        index = f"i * {lanes} + lane" if striped else f"lane * {n} + i"
        fill = f" else thread_items[i] = {oob};" if plan.has_oob_default else ""
        partial = (
            f"for (int i = 0; i < {n}; ++i) {{ if ({index} < valid) "
            f"thread_items[i] = from_memory(p[{index}]);{fill} }}"
        )
        full = (
            f"memory_t memory_items[{n}];\n    {full}\n"
            f"    for (int i = 0; i < {n}; ++i) thread_items[i] = from_memory(memory_items[i]);"
        )
    elif load and plan.has_oob_default:
        partial = f"{direct}(lane, p, thread_items, {guard}, {oob});"
    else:
        partial = f"{direct}(lane, p, {buffer}, {guard});"
    if convert and not load:
        lines += [
            f"  memory_t memory_items[{n}];",
            f"  for (int i = 0; i < {n}; ++i) memory_items[i] = to_memory(thread_items[i]);",
        ]
    lines += [
        f"  if (valid >= {plan.warp_tile}) {{  // the warp's whole tile",
        f"    {full}",
        "  } else {  // a partial tile: only the valid items",
        f"    {partial}",
        "  }",
    ]
    return lines


def _render(
    plan: WarpIOPlan, callbacks: Sequence[CallbackDecl], symbol: str | None, storage: str | None
) -> str:
    return render_unit(
        plan,
        header=("block/block_load.cuh", "block/block_store.cuh"),
        callbacks=[],
        value=value_decl(plan.value_dtype)
        + ("\n" + conversion_decl(plan) if plan.array_dtypes is not None else ""),
        types="using temp_storage_t = cub::NullType;  // direct thread I/O: nothing shared",
        symbol=symbol,
        storage=storage,
        params=c_parameters(OPERANDS),
        comment=(
            f"{'Loads' if plan.direction == 'load' else 'Stores'} one logical warp's tile "
            f"({plan.lanes} lanes x {plan.items_per_thread} items, {plan.algorithm}) "
            f"{'from' if plan.direction == 'load' else 'to'} `ptr`, only its `valid` first items "
            "when it runs past them."
        ),
        body="\n".join(_body(plan)),
    )


#: The docstrings of the family's functions in :mod:`scan.warp`.
DOCS: Mapping[str, str] = {
    "load": """\
    Load each logical warp's tile ``src[offset : offset + lanes * len(items)]``.

    Every lane of a logical warp passes the same ``offset`` (its warp's own:
    a warp's row, a warp's tile of a row); lane ``l`` receives items
    ``l * len(items)`` to ``(l + 1) * len(items) - 1`` of the tile (blocked),
    or items ``i * lanes + l`` with ``algorithm="striped"``. A tile that runs
    past the end of ``src`` (or past ``valid_items``) is guarded; its items
    past the valid range receive ``oob_default``, or keep their values
    without it. No shared memory and no barrier.

    Parameters
    ----------
    src : 1-D C-contiguous array
        Global (or shared) memory; index a row first for 2-D data.
    offset : int
        Index of the warp's tile's first item in ``src``.
    items : local array
        Receives this lane's items; its length is the items per thread.
    valid_items : int, optional
        Number of items to read from ``offset`` on; defaults to (and is never
        more than) ``len(src) - offset``.
    oob_default : scalar, optional
        Value given to items past the valid range: the scan operator's
        identity (0 for sums) when a partial tile's aggregate matters.
    algorithm : {"vectorize", "direct", "striped"}, optional
        ``"vectorize"`` (the default): blocked, with vector loads where the
        tile is aligned for them; ``"direct"``: blocked, item by item;
        ``"striped"``: warp-striped.
    lanes, threads, items_per_thread
        As in :func:`scan`.
    """,
    "store": """\
    Store each logical warp's tile to ``dst[offset : offset + lanes * len(items)]``.

    Items past ``len(dst)`` (or past ``valid_items``) are not written.
    Parameters as in :func:`load`; ``"vectorize"`` uses vector stores for
    numeric items of at most 4 bytes where the tile is aligned for them.
    """,
}


SPEC = Primitive(
    family="warp_io",
    calls=CALLS,
    plan_type=WarpIOPlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=lambda plan: [],
    shares_storage=lambda plan: False,  # nothing shared, no barrier
    describe=lambda plan: plan.function,
    docs=DOCS,
    stubs=WARP_FUNCTIONS,
    keyword_hint=warp_keyword_hint,
    simulator=warp_io_call,
    moves_tiles=True,
)
