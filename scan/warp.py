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

from ._calls import entry_point_function
from ._primitives import module_calls

# one function per call of the warp families (scan._primitives); warp.pyi types them
_CALLS = module_calls("warp")
scan = entry_point_function(_CALLS["scan"])
inclusive_sum = entry_point_function(_CALLS["inclusive_sum"])
exclusive_sum = entry_point_function(_CALLS["exclusive_sum"])
inclusive_scan = entry_point_function(_CALLS["inclusive_scan"])
exclusive_scan = entry_point_function(_CALLS["exclusive_scan"])
load = entry_point_function(_CALLS["load"])
store = entry_point_function(_CALLS["store"])

__all__ = [
    "exclusive_scan",
    "exclusive_sum",
    "inclusive_scan",
    "inclusive_sum",
    "load",
    "scan",
    "store",
]
