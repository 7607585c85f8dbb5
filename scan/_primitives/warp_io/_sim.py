# SPDX-License-Identifier: Apache-2.0
"""Warp loads and stores (``warp.load``, ``warp.store``) in numba's CUDA simulator.

Lane ``l`` of its logical warp moves the warp's tile items ``l * ipt + i``
(``i * lanes + l`` for ``striped``) from the warp's ``offset``, only those
before ``min(len(array) - offset, valid_items)``; as the block's tile I/O
(:mod:`scan._primitives.tile_io._sim`) otherwise. Each lane moves its own
items: no rendezvous.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._spec import SimEngine
from ..tile_io._sim import move_items, same_tile, tile_start

__all__ = ["warp_io_call"]


def warp_io_call(sim: SimEngine, function: str, bound: Mapping[str, Any]) -> None:
    """Run a warp load or store for the calling simulated thread."""
    thread = sim.current_thread(function)
    sim.clear_branch()
    launch = sim.launch_block(thread)
    options = {k: sim.unwrap(v) for k, v in bound.items()}
    plan = sim.plan(function, options, launch)
    array = options["src" if plan.direction == "load" else "dst"]
    items = options["items"]
    start, valid = tile_start(function, options, array)
    ipt, lanes = plan.items_per_thread, plan.lanes
    lane = sim.rank(thread) % lanes
    first = sim.rank(thread) - lane
    group = f"a logical warp ({lanes} threads from thread {first})"
    same_tile(sim, thread, function, options, start, first, lanes, group)
    if plan.direction == "store" and sim.contract_checks():
        wrong_lanes = sim.store_lanes_error(plan, items)
        if wrong_lanes is not None:
            raise sim.contract_error(wrong_lanes)
    if plan.algorithm == "striped":
        positions = [i * lanes + lane for i in range(ipt)]
    else:
        positions = [lane * ipt + i for i in range(ipt)]
    move_items(plan, options, array, items, start, valid, positions)
    if plan.direction == "load" and sim.is_local_array(items):
        key = sim.array_key(array[0] if isinstance(array, tuple) else array)
        full = valid >= plan.warp_tile
        items.tile_source = sim.tile(key, start, full, plan.warp_tile, "warp", lanes)
        items.scan_lanes = None
