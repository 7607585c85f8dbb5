# SPDX-License-Identifier: Apache-2.0
"""Tile I/O (``block.load``, ``block.store``) in numba's CUDA simulator.

Thread ``t`` moves tile items ``t * ipt + i`` (``i * threads + t`` for the
``striped`` algorithm, as CUB's ``BLOCK_*_STRIPED``), only those before
``min(len(array) - offset, valid_items)``. Loads give items past that range
``oob_default`` when it is passed and leave them unchanged otherwise (marking
an earlier tile's item as left over). Each thread moves its own items; the
warp's loads and stores (:mod:`scan._primitives.warp_io._sim`) move theirs
the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._spec import SimEngine
from ..._vocab import is_bfloat16, round_to_bfloat16
from .._sim_common import LEFTOVER, LOADED, integer, scalar_operand
from ._plan import TileIOPlan

__all__ = ["move_items", "same_tile", "storage_floor", "tile_io_call", "tile_start"]


def tile_io_call(sim: SimEngine, function: str, bound: Mapping[str, Any]) -> None:
    """Run a block load or store for the calling simulated thread.

    Parameters
    ----------
    sim : SimEngine
    function : str
        The entry point.
    bound : mapping
        The arguments passed, by parameter name (:func:`scan._calls.bind`).
    """
    thread = sim.current_thread(function)
    sim.clear_branch()
    launch = sim.launch_block(thread)
    options = {k: sim.unwrap(v) for k, v in bound.items()}
    plan = sim.plan(function, options, launch)
    array = options["src" if plan.direction == "load" else "dst"]
    items = options["items"]
    start, valid = tile_start(function, options, array)
    sim.check_library_storage(plan)
    threads = plan.threads
    rank = sim.rank(thread)
    same_tile(sim, thread, function, options, start, 0, threads, "the block")
    first = array[0] if isinstance(array, tuple) else array
    if isinstance(first, np.ndarray) and sim.contract_checks():
        wrong_step = sim.tile_step_error(thread, plan, first, start, valid)
        if wrong_step is not None:
            raise sim.contract_error(wrong_step)
    ipt = plan.items_per_thread
    if plan.algorithm == "striped":
        positions = [i * threads + rank for i in range(ipt)]
    else:
        positions = [rank * ipt + i for i in range(ipt)]
    move_items(plan, options, array, items, start, valid, positions)
    if plan.direction == "load" and sim.is_local_array(items):
        full = valid >= plan.tile_items
        key = sim.array_key(first)
        items.tile_source = sim.tile(key, start, full, plan.tile_items, "block")
        items.scan_lanes = None
    if plan.auto_sync and _moved_through_shared_memory(plan, array, start, valid):
        sim.barrier(thread)


def move_items(
    plan: Any,
    options: Mapping[str, Any],
    array: Any,
    items: Any,
    start: int,
    valid: int,
    positions: list[int],
) -> None:
    """Move item ``i`` of the thread to or from ``array[start + positions[i]]``, the valid ones.

    A load gives the others ``oob_default`` when passed, and leaves them as
    they are otherwise (marking an earlier tile's item as left over). Zipped
    tile I/O (a plan with ``fields``) moves each field of the record items to
    or from its own array (`array` is then a tuple of them, or one array).
    """
    fields = getattr(plan, "fields", None)
    arrays = (array if isinstance(array, tuple) else (array,)) if fields is not None else ()

    def read(pos: int) -> Any:
        if fields is None:
            return array[start + pos]
        return tuple(a[start + pos] for a in arrays)

    with np.errstate(all="ignore"):
        if plan.direction == "load":
            oob = options.get("oob_default")
            function = getattr(plan, "function", plan.direction)
            fill = (
                None
                if oob is None
                else scalar_operand(function, "oob_default", oob, plan.value_dtype)
            )
            origin = getattr(items, "origin", None)
            for i, pos in enumerate(positions):
                if pos < valid:
                    items[i] = read(pos)
                    if origin is not None:
                        origin[i] = LOADED
                elif fill is not None:
                    items[i] = fill
                elif origin is not None and origin[i] in (LOADED, LEFTOVER):
                    origin[i] = LEFTOVER  # an earlier tile's item, kept as on the GPU
        elif fields is None:
            for i, pos in enumerate(positions):
                if pos < valid:
                    array[start + pos] = _stored(items[i], array.dtype)
        else:
            records = np.asarray(items).view(np.ndarray)  # reading marks nothing written
            for i, pos in enumerate(positions):
                if pos < valid:
                    for a, name in zip(arrays, fields, strict=True):
                        a[start + pos] = _stored(records[i][name], a.dtype)


def _stored(value: Any, dtype: np.dtype[Any]) -> Any:
    """`value` as a store into an array of `dtype` writes it: bfloat16 rounded once."""
    return round_to_bfloat16(value)[()] if is_bfloat16(dtype) else value


def same_tile(
    sim: SimEngine,
    thread: Any,
    function: str,
    options: Mapping[str, Any],
    start: int,
    first: int,
    count: int,
    group: str,
) -> None:
    """Refuse a load or store whose offset (or valid_items) differs between the threads
    making it together: the block's, or a logical warp's (`count` threads from `first`).

    Each thread numbers its tile I/O calls; the first thread of the group to
    make its n-th call records its arguments, the others compare theirs.
    """
    if count == 1 or not sim.contract_checks():
        return
    valid = options.get("valid_items")
    mine = {"offset": start, "valid_items": None if valid is None else int(valid)}
    rank = sim.rank(thread)
    bx, by, bz = sim.launch_block(thread)
    block = sim.block_state(thread, bx * by * bz)
    # calls made so far, per thread; the first thread's arguments of each (by (the
    # group's first thread, call number): [thread, arguments, arrivals])
    sequence: dict[int, int] = block.records("io_sequence", dict)
    calls: dict[tuple[int, int], list[Any]] = block.records("io_calls", dict)
    with block.lock:
        seq = sequence.get(rank, 0)
        sequence[rank] = seq + 1
        record = calls.setdefault((first, seq), [rank, mine, 0])
        record[2] += 1
        if record[2] == count:
            del calls[(first, seq)]
    theirs = record[1]
    for name in ("offset", "valid_items"):
        if mine[name] != theirs[name]:
            raise sim.contract_error(
                sim.different_arguments(
                    function, name, group, (record[0], theirs[name]), (rank, mine[name])
                )
            )


def tile_start(function: str, options: Mapping[str, Any], array: Any) -> tuple[int, int]:
    """(offset, valid items from it) of a load or store: at most ``valid_items``.

    For a tuple of arrays (zipped tile I/O), the shortest array's.
    """
    start = integer(function, "offset", options["offset"])
    valid = min(map(len, array) if isinstance(array, tuple) else [len(array)]) - start
    requested = options.get("valid_items")
    if requested is not None:
        valid = min(valid, integer(function, "valid_items", requested))
    if start < 0:
        raise IndexError(
            f"{function}: offset={start} is negative; the tile would start before the array "
            "(on a GPU nothing is read or written: an empty tile, almost always a bug in the "
            "kernel); compute the offset from the tile loop, for base in block.tiles(n, items)"
        )
    return start, valid


def _moved_through_shared_memory(
    plan: Any,
    array: np.ndarray[Any, Any] | tuple[np.ndarray[Any, Any], ...],
    start: int,
    valid: int,
) -> bool:
    """Whether the generated provider's path for this tile uses its temp storage.

    ``vectorize`` with ``unaligned="warp_transpose"`` does only for a full tile
    whose address is not 16-byte aligned (partial tiles move without shared
    memory for every algorithm but ``striped``, which has none).
    """
    if plan.unaligned is None:
        return plan.uses_shared_memory  # type: ignore[no-any-return]
    arrays = array if isinstance(array, tuple) else (array,)
    addresses = [int(a.__array_interface__["data"][0]) + start * a.itemsize for a in arrays]
    return valid >= plan.tile_items and any(address % 16 != 0 for address in addresses)


def storage_floor(plan: TileIOPlan) -> tuple[int, str] | None:
    """The least static shared memory a load's or store's library-owned storage takes.

    A transposing tile load or store exchanges its whole tile (``threads x
    items x itemsize``, the widest field's for zipped I/O) in every CUB
    release the library supports; None when the call has no library-owned
    storage or moves its items without shared memory
    (:attr:`scan._spec.Primitive.storage_floor`).
    """
    if not (plan.temp_storage == "implicit" and plan.uses_shared_memory):
        return None
    itemsize = max(
        (p.value_dtype.itemsize for p in plan.field_plans())
        if plan.zipped
        else [plan.value_dtype.itemsize]
    )
    size = plan.tile_items * itemsize
    algorithm = (
        plan.algorithm if plan.unaligned is None else "the default (vectorize, else warp_transpose)"
    )
    return size, (
        f"{plan.direction} ({algorithm}, {plan.threads} threads x {plan.items_per_thread} items "
        f"of {itemsize} bytes) exchanges its whole tile through {size} bytes of "
        "library-owned temp storage"
    )
