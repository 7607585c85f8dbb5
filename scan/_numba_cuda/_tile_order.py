# SPDX-License-Identifier: Apache-2.0
"""Tile loops a GPU gets silently wrong, found by the simulator from where each tile came from.

A load records in its items array where the tile came from (:class:`Tile`:
the array, the offset, whether it was full, the tile's size and whose tile
it is, a block's or a logical warp's). A scan that carries a prefix from tile
to tile (``prefix_op=`` a stateful callback) records in its ``prefix_state``
the tile it scanned; the next carried scan on the same state (until kernel
code writes the state again: a new pass) compares its tile with that one:

* a forward scan's tiles must come in forward order, one tile apart (after a
  full tile); a reverse scan's (``reverse=True``, the carried suffix) in
  reverse order, one tile apart: a reverse scan on tiles walked from the
  row's start takes the suffix of the tiles to its *left*, and a step other
  than one tile skips or repeats items of the row;
* a warp scan's ``lanes=`` must be the ``lanes=`` of the warp load that
  filled its items, and a warp store's the ``lanes=`` of the warp scan that
  wrote them (a logical warp's tile is ``lanes x items per thread``).

A look-back scan records its tile's offset in the status, and tile ``t``'s
must lie after tile ``t - 1``'s (before it, in a reverse look-back, whose
tiles are numbered from the sequence's end).

:func:`different_arguments` words a load, store or scan whose offset (or
another index argument) differs between the threads that make it together,
and :func:`library_storage_floor` gives the least static shared memory a
call's library-owned temp storage takes in a compiled kernel (the simulator
refuses a kernel over the 48 KiB a kernel may declare, as the compiler does).

Items computed by kernel code (not loaded), tiles of different arrays and a
step of 0 (the same tile scanned again) are left alone.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from .._primitives import for_plan

__all__ = [
    "Tile",
    "array_key",
    "carried_scan_error",
    "different_arguments",
    "forget_carried",
    "library_storage_floor",
    "lookback_order_error",
    "store_lanes_error",
    "warp_lanes_error",
]


@attrs.frozen
class Tile:
    """Where a load's items came from.

    Attributes
    ----------
    array : tuple of int
        The array's (data address, length): one row of a 2-D array each.
    offset : int
        The tile's first item in the array.
    full : bool
        Whether every item of the tile was in the array (and in ``valid_items``).
    size : int
        The tile's items: the block's (``threads x items``) or a logical
        warp's (``lanes x items``).
    family : {"block", "warp"}
    lanes : int
        The logical warp's lanes (a block's tile: 0).
    """

    array: tuple[int, int]
    offset: int
    full: bool
    size: int
    family: str
    lanes: int = 0


@attrs.frozen
class _Carried:
    """The tile a carried scan last scanned on one ``prefix_state``."""

    tile: Tile
    reverse: bool


def array_key(array: np.ndarray[Any, Any]) -> tuple[int, int]:
    """An array's identity across calls: its data address and length."""
    return (int(array.__array_interface__["data"][0]), len(array))


def _loop(family: str) -> str:
    return "block.tiles" if family == "block" else "warp.tiles"


def carried_scan_error(plan: Any, values: Any, state: Any) -> str | None:
    """Why this carried scan's tile cannot follow the last one scanned on `state`, if it cannot.

    Records this tile on `state` (the thread's ``prefix_state`` array) either way.
    """
    tile = getattr(values, "tile_source", None)
    if tile is None or not hasattr(state, "carried"):
        return None
    reverse = bool(getattr(plan, "reverse", False))
    last: _Carried | None = state.carried
    state.carried = _Carried(tile, reverse)
    if last is None or last.tile.array != tile.array or last.reverse != reverse:
        return None
    step = tile.offset - last.tile.offset
    if step == 0:
        return None
    f = plan.function
    loop = _loop(tile.family)
    before, now = last.tile.offset, tile.offset
    if reverse and step > 0:
        return (
            f"{f}: reverse=True carries the suffix from each tile to the tile to its left, but "
            f"this thread's tiles come in forward order (offset {before}, then {now}): each "
            "tile takes the suffix of the tiles to its left; walk the tiles from the row's end "
            f"with for base in {loop}(n, items, reverse=True)"
        )
    if not reverse and step < 0:
        return (
            f"{f}: a forward scan carries the prefix from each tile to the tile to its right, "
            f"but this thread's tiles come in reverse order (offset {before}, then {now}): each "
            f"tile takes the prefix of the tiles to its right; walk the tiles with for base in "
            f"{loop}(n, items), or pass reverse=True to the scan for a suffix"
        )
    if abs(step) == tile.size or (not reverse and not last.tile.full):
        return None
    what = (
        f"a block's tile is {tile.size} items (threads x items per thread)"
        if tile.family == "block"
        else f"a logical warp's tile is {tile.size} items (lanes={tile.lanes} x items per thread)"
    )
    gap = abs(step) - tile.size
    effect = (
        f"{gap} items between the two tiles are in neither"
        if gap > 0
        else f"{-gap} items are in both tiles"
    )
    return (
        f"{f}: this thread's tiles start at offset {before} and then {now}, a step of {step} "
        f"items, but {what}: {effect}, and the prefix the scan carries from one to the next "
        f"misses or counts them twice; step the loop by the tile: for base in {loop}(n, items"
        + (", reverse=True" if reverse else "")
        + (f", lanes={tile.lanes}" if tile.family == "warp" else "")
        + ")"
    )


def forget_carried(state: Any) -> None:
    """Kernel code wrote `state`: a new pass starts (its next carried scan is a first tile)."""
    if getattr(state, "carried", None) is not None:
        state.carried = None


def warp_lanes_error(plan: Any, values: Any) -> str | None:
    """Why a warp scan cannot take items a warp load of other ``lanes=`` filled, if it cannot."""
    tile = getattr(values, "tile_source", None)
    if tile is None or tile.family != "warp" or tile.lanes == plan.lanes:
        return None
    return (
        f"{plan.function}: lanes={plan.lanes}, but its items were loaded by warp.load with "
        f"lanes={tile.lanes}: each {tile.lanes}-lane logical warp loaded a tile of its own "
        f"(from its own offset), and the scan takes the items of {plan.lanes} lanes as one "
        "tile; pass the same lanes= to the warp.load, the scans and the warp.store of one tile"
    )


def store_lanes_error(plan: Any, items: Any) -> str | None:
    """Why a warp store cannot store items a warp scan of other ``lanes=`` wrote, if it cannot."""
    scanned = getattr(items, "scan_lanes", None)
    if scanned is None or scanned == plan.lanes:
        return None
    return (
        f"warp.{plan.direction}: lanes={plan.lanes}, but its items were last written by a "
        f"warp scan with lanes={scanned}: the tile a logical warp stores is not the tile it "
        "scanned; pass the same lanes= to the warp.load, the scans and the warp.store of one "
        "tile"
    )


def different_arguments(
    function: str, name: str, group: str, first: tuple[int, Any], other: tuple[int, Any]
) -> str:
    """The refusal of a call whose argument `name` differs between the threads making it.

    `group` says who must agree (``"the block"``, ``"a logical warp (...)"``);
    `first` and `other` are (thread, value) pairs.
    """
    what = {
        "offset": "the tile's first item",
        "valid_items": "how many of the tile's items are valid",
        "valid": "how many of the tile's items are valid",
        "tile": "the tile's index in the status",
    }.get(name, name)
    return (
        f"{function}: {name} differs between the threads of {group} (thread {first[0]} passes "
        f"{first[1]}, thread {other[0]} passes {other[1]}); every thread of {group} passes the "
        f"same {name} ({what}) and the call moves or scans one tile with it: compute it from "
        "values the threads share (the tile loop's offset, cuda.blockIdx, a warp's index "
        "cuda.threadIdx.x // 32), not from cuda.threadIdx"
    )


def lookback_order_error(
    plan: Any, offsets: dict[int, Tile], tile: int, source: Tile | None
) -> str | None:
    """Why look-back tile `tile`, loaded from `source`, cannot follow tile ``tile - 1``.

    `offsets` is the status's record (tile to :class:`Tile`), updated.
    """
    if source is None:
        return None
    offsets[tile] = source
    before = offsets.get(tile - 1)
    if before is None or before.array != source.array or before.offset == source.offset:
        return None
    f = plan.function
    if plan.reverse and source.offset > before.offset:
        return (
            f"{f}: a reverse look-back numbers the tiles from the sequence's end (tile 0 is the "
            f"last) and each tile takes the suffix of the tiles numbered before it, but tile "
            f"{tile} (offset {source.offset}) follows tile {tile - 1} (offset "
            f"{before.offset}), which lies to its left: each tile would take the suffix of the "
            "tiles to its left; number the tiles from the end: base = (last - cuda.blockIdx.x) "
            "* TILE with last = (n - 1) // TILE"
        )
    if not plan.reverse and source.offset < before.offset:
        return (
            f"{f}: a look-back scan's tile takes the prefix of the tiles numbered before it, "
            f"but tile {tile} (offset {source.offset}) follows tile {tile - 1} (offset "
            f"{before.offset}), which lies to its right: each tile would take the prefix of "
            "the tiles to its right; number the tiles from the sequence's start (base = "
            "cuda.blockIdx.x * TILE), or pass reverse=True for a suffix"
        )
    return None


def library_storage_floor(plan: Any) -> tuple[int, str] | None:
    """The least static shared memory a call's library-owned storage takes, and what it is.

    Lower bounds that hold for every CUB release the library supports (the
    compiled path reads the exact sizes from the compiled code): the family's
    own (:attr:`scan._spec.Primitive.storage_floor`, e.g. a transposing tile
    load or store exchanges its whole tile) where it gives one; else a raking
    scan or reduce lays out one item per thread at least, and a reverse scan's
    two exchange buffers are ``2 x threads x itemsize``. None when the call
    has none.
    """
    family_floor = for_plan(plan).storage_floor
    if family_floor is not None:
        return family_floor(plan)
    implicit = getattr(plan, "temp_storage", None) == "implicit"
    dtype = plan.value_dtype
    threads = plan.threads
    size = 0
    parts = []
    raking = str(getattr(plan, "algorithm", "")).startswith("raking")
    if implicit and raking:
        size += threads * dtype.itemsize
        parts.append(f"its raking layout ({threads} threads x {dtype.itemsize} bytes)")
    if getattr(plan, "reverse", False):
        size += 2 * threads * dtype.itemsize
        parts.append(
            f"its reverse exchange buffers (2 x {threads} threads x {dtype.itemsize} bytes)"
        )
    if not size:
        return None
    return size, f"{plan.function} takes at least {size} bytes of shared memory: " + " and ".join(
        parts
    )
