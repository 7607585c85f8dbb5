# SPDX-License-Identifier: Apache-2.0
"""Tile loops: the step and offsets of ``block.tiles``, ``warp.tiles`` and ``warp.tile_size``.

A tile loop walks a row of ``n`` items one tile at a time. A block's tile is
``threads x items_per_thread`` items (:func:`scan.block.tile_size`), a logical
warp's ``lanes x items_per_thread`` (:func:`scan.block.tile_size`'s warp
counterpart). Forward, the offsets are ``0, tile, 2 * tile, ...`` below
``n``; in reverse, the same offsets (tiles aligned at the row's start) from
the last, partial one down to 0::

    range(0, n, tile)                              # forward
    range((n - 1) // tile * tile, -1, -tile)       # reverse

The front ends rewrite a ``tiles`` call into exactly that ``range`` with the
step a constant (:mod:`scan._numba_loops`), so a kernel compiles to the loop
a user writes by hand; the simulator returns the ``range`` itself. Every
refusal is made here, with the same words in each backend. This module
imports neither Numba nor the build layer.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ._errors import PlanError, ScanTypeError
from ._plan import Block, resolve_block
from ._primitives.warp_scan import LANES

__all__ = [
    "TILE_FUNCTIONS",
    "check_length",
    "check_reverse",
    "offsets",
    "reverse_start",
    "step",
]

#: The tile-loop helpers, by their key (the name messages use).
TILE_FUNCTIONS: tuple[str, ...] = ("tiles", "warp.tiles", "warp.tile_size")

Module = Literal["block", "warp"]


def _module(function: str) -> Module:
    return "warp" if function.startswith("warp.") else "block"


def _example(function: str) -> str:
    if function == "warp.tile_size":
        return "warp.tile_size(8)"
    if function == "tile_size":
        return "block.tile_size(8)"
    return f"{_module(function)}.tiles(n, 8)"


def step(
    function: str,
    items_per_thread: object,
    *,
    threads: object = None,
    lanes: object = None,
    launch: Block | None = None,
) -> int:
    """The tile of call `function` (a key of :data:`TILE_FUNCTIONS`): items a tile holds.

    Block loops: the block's threads (``threads=`` or the launch's) times
    `items_per_thread`; warp loops: ``lanes`` (32 when None) times it.
    `items_per_thread` is the items array's literal length (or a literal
    int), None when not known.

    Raises
    ------
    PlanError
        When the items per thread, the block shape or ``lanes=`` is not known
        or not valid.
    """
    module = _module(function)
    if not isinstance(items_per_thread, int | np.integer) or isinstance(items_per_thread, bool):
        raise PlanError(
            f"{function}: cannot tell how many items each thread holds: items is not a "
            "cuda.local.array of literal length in this kernel, nor a literal int; pass the "
            f"items array of the tile's {module}.load, or the items per thread: "
            f"{_example(function)}"
        )
    if items_per_thread < 1:
        raise PlanError(f"{function}: items per thread must be at least 1 (got {items_per_thread})")
    if module == "block":
        block = resolve_block(function, threads, launch)
        return block[0] * block[1] * block[2] * int(items_per_thread)
    if lanes is None:
        lanes = 32
    if isinstance(lanes, bool) or not isinstance(lanes, int | np.integer) or lanes not in LANES:
        raise PlanError(
            f"{function}: lanes= must be a literal power of two from 1 to 32 (got {lanes!r}), "
            "the lanes= of the loop's warp.load, scan and store"
        )
    return int(lanes) * int(items_per_thread)


def check_reverse(function: str, reverse: object) -> bool:
    """``reverse=`` of a ``tiles`` call, which must be a literal bool (None: False)."""
    if reverse is None:
        return False
    if not isinstance(reverse, bool | np.bool_):
        raise PlanError(
            f"{function}: reverse= must be a literal True or False (got {reverse!r}); the "
            "loop's direction is part of the compiled loop"
        )
    return bool(reverse)


def check_length(function: str, n: object) -> int:
    """The row length `n` of a ``tiles`` call (an integer)."""
    if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer):
        raise ScanTypeError(
            f"{function}: n must be an integer, the row's length in items (got "
            f"{type(n).__name__}); e.g. {_module(function)}.tiles(src.shape[0], items)"
        )
    return int(n)


def reverse_start(n: int, tile: int) -> int:
    """The offset of a row's last tile (tiles aligned at the row's start); negative when empty."""
    return (n - 1) // tile * tile


def offsets(n: int, tile: int, reverse: bool) -> range:
    """The tile offsets of a row of `n` items, as the compiled loop walks them."""
    if reverse:
        return range(reverse_start(n, tile), -1, -tile)
    return range(0, n, tile)
