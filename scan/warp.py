# SPDX-License-Identifier: Apache-2.0
"""Warp-wide scans and tile I/O inside ``@cuda.jit`` kernels, with per-warp prefix callbacks.

The block is cut into *logical warps* of ``lanes`` consecutive threads (by
linear thread index; ``lanes`` a power of two from 1 to 32, 32 by default),
and each logical warp scans its own tile: ``lanes * items_per_thread`` items,
lane ``l`` holding items ``l * items_per_thread`` to
``(l + 1) * items_per_thread - 1``. The calls are the block scans' calls
(:mod:`scan.block`), with ``warp_aggregate=`` in place of
``block_aggregate=`` and ``lanes=`` in place of ``algorithm=``::

    from scan import warp

    warp.load(src[row], base, items, oob_default=0)
    warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    warp.store(dst[row], base, items)

:func:`load` and :func:`store` move each logical warp's tile (from an offset
of its own) with CUB's direct thread I/O, as :mod:`scan.block`'s ``load``
and ``store`` move a block's.

Every thread of the block calls them (each logical warp's lanes together,
like ``cuda.syncwarp()``); warps do not wait for each other, so a warp may
run a different number of scans than another warp, but every lane of one
logical warp must make the same calls. There is no shared memory to size and
no barrier to insert: CUB's shuffle-based warp scans need neither.

Prefix callbacks (``prefix_op=``) follow CUB's block contract with the
logical warp in place of the block's first warp: every lane of the warp
calls the callback with the warp's aggregate, each lane on its own
``prefix_state``, and lane 0's return value seeds the warp's scan.
Initialise the state equally in every lane of a warp and read the
authoritative state from lane 0.

Calling them from host code raises :class:`RuntimeError`, except under the
CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), where they run with CUB's
observable semantics.
"""

from __future__ import annotations

from typing import Any

from ._calls import entry_point_function, host_backend, kernel_only
from ._primitives import module_calls
from ._tiles import check_length, check_reverse

# scan, inclusive_sum, ..., load, store: one function per call of every family
# (scan._primitives) in this module; warp.pyi types them
_CALLS = module_calls("warp")
globals().update({name: entry_point_function(entry) for name, entry in _CALLS.items()})

__all__ = sorted([*_CALLS, "tile_size", "tiles"])


def tile_size(items: Any, *, lanes: int = 32) -> int:
    """The items one logical warp's tile holds: ``lanes`` times the items per thread.

    Step a warp's tile loop by it (or let :func:`tiles` do it), with the
    ``lanes=`` of the loop's :func:`load`, scans and :func:`store`. A
    compile-time constant in compiled kernels.

    Parameters
    ----------
    items : local array or int
        The tile's items array (a ``cuda.local.array`` of literal length in
        this kernel), or the items per thread as a literal int.
    lanes : int
        Literal, a power of two from 1 to 32: the logical warp's lanes.

    Returns
    -------
    int
    """
    backend = host_backend()
    if backend is None:
        raise kernel_only("warp.tile_size")
    return int(backend.call("warp.tile_size", {"items": items, "lanes": lanes}))


def tiles(n: Any, items: Any, *, lanes: int = 32, reverse: bool = False) -> range:
    """The offsets of a row's warp tiles: ``for base in warp.tiles(n, items):``.

    As :func:`scan.block.tiles`, with a logical warp's tile
    (:func:`tile_size`: ``lanes x len(items)`` items) in place of the
    block's: ``0, tile, 2 * tile, ...`` below `n`, or with ``reverse=True``
    the same offsets from the last (partial) tile down to 0. Each logical
    warp walks its own row with it::

        for base in warp.tiles(row.shape[0], items):
            warp.load(row, base, items, oob_default=0)
            warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
            warp.store(out, base, items)

    In compiled kernels it is the loop written by hand, with the tile a
    constant: it costs nothing over it.

    Parameters
    ----------
    n : int
        The row's length in items (a runtime integer).
    items : local array or int
        The tile's items array (a ``cuda.local.array`` of literal length in
        this kernel), or the items per thread as a literal int.
    lanes : int
        Literal, a power of two from 1 to 32: the ``lanes=`` of the loop's
        warp calls.
    reverse : bool
        Literal. Walk from the row's last tile to its first.

    Returns
    -------
    range
    """
    backend = host_backend()
    if backend is None:
        raise kernel_only("warp.tiles")
    check_length("warp.tiles", n)
    check_reverse("warp.tiles", reverse)
    return backend.call(  # type: ignore[no-any-return]
        "warp.tiles", {"n": n, "items": items, "lanes": lanes, "reverse": reverse}
    )
