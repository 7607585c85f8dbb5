# SPDX-License-Identifier: Apache-2.0
"""Tile loops whose step is not the tile, found by the simulator.

A tile loop written for another block shape or another items array
(``for base in range(0, n, 128 * 8)`` launched with 64 threads, or an items
array of 8 in a loop stepping by 4 items a thread) runs without error on a
GPU and skips or repeats part of the row. The simulator records, per thread
and per array, where the last tile it loaded or stored started; when the next
tile on the same array starts further on by anything but one tile, after a
full tile and with a scan that carries a prefix (``prefix_op=``) in between,
the carried prefix provably misses or repeats items of the row.

Backward steps (a reverse walk), single tiles, partial tiles and loops with
no carried prefix between their tiles (independent tiles, grid-stride loops)
are left alone here; :mod:`scan._numba_cuda._tile_order` checks the order and
step of the tiles each carried scan takes in, reverse walks and warp tiles
included.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["note_carried_scan", "tile_step_error"]

# the per-thread records, kept on the simulated thread object (one per block)
_TILES = "_scan_tiles"
_CARRIED = "_scan_carried"


class _TileMove(Protocol):
    """What the check reads of a block load's or store's plan."""

    @property
    def direction(self) -> str: ...

    @property
    def threads(self) -> int: ...

    @property
    def items_per_thread(self) -> int: ...

    @property
    def tile_items(self) -> int: ...


def note_carried_scan(thread: Any) -> None:
    """Count a scan that carries a prefix from tile to tile in this thread."""
    setattr(thread, _CARRIED, getattr(thread, _CARRIED, 0) + 1)


def tile_step_error(
    thread: Any, plan: _TileMove, array: np.ndarray[Any, Any], start: int, valid: int
) -> str | None:
    """Why this tile's offset cannot follow the thread's last tile on *array*, if it cannot.

    Records this tile either way.
    """
    tiles: dict[tuple[int, int], tuple[int, bool, int]] | None = getattr(thread, _TILES, None)
    if tiles is None:
        tiles = {}
        setattr(thread, _TILES, tiles)
    key = (int(array.__array_interface__["data"][0]), len(array))
    carried = getattr(thread, _CARRIED, 0)
    last = tiles.get(key)
    tiles[key] = (start, valid >= plan.tile_items, carried)
    if last is None:
        return None
    before, full, carried_before = last
    step = start - before
    tile = plan.tile_items
    if not full or step <= 0 or step == tile or carried == carried_before:
        return None
    if step > tile:
        effect = (
            f"items {before + tile} to {start - 1} of the row are in no tile, and the prefix "
            "the scan between them carries misses them"
        )
    else:
        effect = (
            f"items {start} to {before + tile - 1} of the row are in both tiles, and the "
            "prefix the scan between them carries counts them twice"
        )
    return (
        f"{plan.direction}: this thread's tiles on one row start at offset {before} and then "
        f"{start}, a step of {step} items, but a tile of this launch is {plan.threads} "
        f"threads x {plan.items_per_thread} items per thread = {tile} items: {effect}; walk "
        "the tiles with for base in block.tiles(n, items), whose step is the launch's tile, "
        "or launch the block shape the step was written for (threads= states it in the call)"
    )
