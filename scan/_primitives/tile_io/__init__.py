# SPDX-License-Identifier: Apache-2.0
"""Tile I/O (``cub::BlockLoad``/``cub::BlockStore``): ``load`` and ``store``.

The family's calls, planner (:func:`._plan.plan_tile_io`), operand ABI,
renderer (:func:`scan._codegen.render_tile_io`) and storage behaviour. The
simulator moves tiles on a path of its own (it also tracks which items a
partial load left unfilled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ..._codegen import CallbackDecl
from ..._errors import ScanTypeError
from ..._plan import ArrayFact, Block, ZipFact, as_array, as_scalar, check_index
from ..._spec import AbiOperand, EntryPoint, Param, Primitive, c_parameters
from ..block_scan import COMMON
from ._plan import TileIOPlan, plan_tile_io
from ._sim import storage_floor, tile_io_call
from ._stubs import FUNCTIONS as STUBS
from ._unit import tile_io_unit

__all__ = ["CALLS", "OPERANDS", "SPEC", "io_params", "render_tile_io"]


def io_params(name: Literal["load", "store"]) -> tuple[Param, ...]:
    """A load's or store's parameters before its options (the block's, or a warp's)."""
    array = "src" if name == "load" else "dst"
    oob = (Param("oob_default", "operand", None),) if name == "load" else ()
    return (
        Param(array, "array", keyword_only=False),
        Param("offset", "index", keyword_only=False),
        Param("items", "operand", keyword_only=False),
        Param("valid_items", "index", None),
        *oob,
    )


def _io(name: Literal["load", "store"]) -> EntryPoint:
    # zipped stores: the record fields stored, one array each
    field = (Param("field", "literal", None),) if name == "store" else ()
    return EntryPoint(
        name, name, (*io_params(name), *field, Param("algorithm", "literal", None), *COMMON)
    )


CALLS = (_io("load"), _io("store"))


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> TileIOPlan:
    name = entry.key
    array_name = "src" if entry.kind == "load" else "dst"
    given = facts[array_name]
    array = given if isinstance(given, ZipFact) else as_array(name, array_name, given)
    if array is None:
        raise ScanTypeError(f"{name}: {array_name} must be an array")
    items = facts["items"]
    if items is None:
        raise ScanTypeError(f"{name}: items must be a local array")
    oob = as_scalar(name, "oob_default", facts.get("oob_default"))
    check_index(name, "valid_items", facts["valid_items"])
    check_index(name, "offset", facts["offset"])
    return plan_tile_io(
        function="load" if entry.kind == "load" else "store",
        array=array,
        items=items,
        algorithm=facts["algorithm"],
        oob_default=oob,
        temp_storage=as_array(name, "temp_storage", facts["temp_storage"]),
        block=block,
        items_per_thread=facts["items_per_thread"],
        auto_sync=facts["auto_sync"],
        field=facts.get("field"),
    )


#: The provider's operands: temp storage (caller-owned mode), the tile's first
#: item, how many items from there are valid, the out-of-range default (loads)
#: and this thread's items.
OPERANDS = (
    AbiOperand("temp", "array", param="temp_storage", when="caller_temp"),
    AbiOperand("ptr", "tile", param=("src", "dst"), offset="offset"),
    AbiOperand("valid", "tile_valid", param=("src", "dst"), offset="offset", count="valid_items"),
    AbiOperand("oob_default", "value", param="oob_default", when="has_oob_default", const=True),
    AbiOperand("items", "array", param="items"),
)


def render_tile_io(
    plan: TileIOPlan, *, symbol: str | None = None, storage: str | None = None
) -> str:
    """C++ source of a tile load or store provider (:func:`._unit.tile_io_unit`)."""
    return tile_io_unit(plan, symbol=symbol, storage=storage, params=c_parameters(OPERANDS))


def _render(
    plan: TileIOPlan, callbacks: Sequence[CallbackDecl], symbol: str | None, storage: str | None
) -> str:
    return render_tile_io(plan, symbol=symbol, storage=storage)


def _keyword_hint(function: str, name: str) -> str:
    if name == "field" and function == "load":
        return (
            " (field= picks the fields a store writes; a load from a tuple of arrays "
            "fills every field of the record items)"
        )
    return ""


def _shares_storage(plan: TileIOPlan) -> bool:
    return plan.temp_storage == "implicit" and plan.auto_sync and plan.uses_shared_memory


def _describe(plan: TileIOPlan) -> str:
    return plan.direction


def _layout_plan(
    primitive: str, dtype: np.dtype[Any], block: Block, items_per_thread: int, algorithm: str | None
) -> TileIOPlan:
    return plan_tile_io(
        function="store" if primitive == "store" else "load",
        array=ArrayFact(dtype=dtype, ndim=1),
        items=ArrayFact(dtype=dtype, ndim=1, length=items_per_thread),
        algorithm=algorithm,
        oob_default=None,
        temp_storage=ArrayFact(dtype=np.uint8, ndim=1),
        block=block,
    )


#: The docstrings of the family's functions in :mod:`scan.block`.
DOCS: Mapping[str, str] = {
    "load": """\
    Load one tile ``src[offset : offset + threads * len(items)]`` (``cub::BlockLoad``).

    Thread ``t`` receives items ``t * len(items) ... (t + 1) * len(items) - 1``
    of the tile (blocked arrangement) with every algorithm except ``"striped"``,
    which gives CUB's striped arrangement (item ``i`` of thread ``t`` is tile
    item ``i * threads + t``).

    Parameters
    ----------
    src : 1-D C-contiguous array, or a tuple of them
        Global (or shared) memory; index a row first for 2-D data. A tuple
        holds one array per field of record ``items``, in field order, each of
        its field's dtype (zipped tile I/O): each field is loaded from its
        array as a numeric load would load it, with no record array in
        between. The tile then ends at the shortest array.
    offset : int
        Index of the tile's first item in ``src``.
    items : local array
        Receives this thread's items; its length is the items per thread.
    valid_items : int, optional
        Number of items to read from ``offset`` on; defaults to (and is never
        more than) ``len(src) - offset``. A tile that runs past the end is
        guarded automatically.
    oob_default : scalar, record or tuple, optional
        Value given to items past the valid range (for records, a record or
        a tuple of one number per field). Without it those items keep the
        values they had before the load: pass the identity of your scan
        operator (e.g. 0 for sums) when a partial tile's aggregate matters.
    algorithm : str, optional
        CUB's ``BLOCK_LOAD_*`` algorithm: ``"direct"``, ``"striped"``,
        ``"vectorize"``, ``"transpose"``, ``"warp_transpose"`` or
        ``"warp_transpose_timesliced"``. Default: the one measured fastest
        for the block size, items per thread and item size (``"vectorize"``
        with 4 items of 4 bytes and 128 threads), else
        ``"warp_transpose"`` when the block size is a multiple of 32, else
        ``"transpose"``. For a tuple of arrays, the item size is the widest
        field's.
    temp_storage, threads, items_per_thread, auto_sync
        As in :func:`scan`. Zipped tile I/O owns its temp storage (no
        ``temp_storage=``).
    """,
    "store": """\
    Store one tile to ``dst[offset : offset + threads * len(items)]`` (``cub::BlockStore``).

    Items past ``len(dst)`` (or past ``valid_items``) are not written.
    Parameters as in :func:`load`, and:

    Parameters
    ----------
    dst : 1-D C-contiguous array, or a tuple of them
        A tuple holds one array per field of record ``items`` (or per field
        ``field=`` names), each of its field's dtype (zipped tile I/O); the
        tile then ends at the shortest array.
    field : str or tuple of str, optional
        Record ``items`` only: the field (or fields, in the order of the
        arrays of ``dst``) to store; ``dst`` is then an array (a tuple of
        arrays) of the field's dtype. Literal names, e.g. ``field="b"``.
    """,
}


SPEC = Primitive(
    family="tile_io",
    calls=CALLS,
    plan_type=TileIOPlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=lambda plan: [],
    shares_storage=_shares_storage,
    describe=_describe,
    layout_plan=_layout_plan,
    docs=DOCS,
    stubs=STUBS,
    layout_names=("load", "store"),
    keyword_hint=_keyword_hint,
    simulator=tile_io_call,
    moves_tiles=True,
    storage_floor=storage_floor,
)
