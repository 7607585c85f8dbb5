# SPDX-License-Identifier: Apache-2.0
"""Block-wide scans, tile I/O and reductions for use inside ``@cuda.jit`` kernels.

Every function here is called from kernel code by all threads of a block, like
a ``cuda.syncthreads()``: the block shape comes from the launch
(``kernel[grid, block]``) or from a literal ``threads=``. Calling them from
host code raises :class:`RuntimeError`, except under the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``), where they run with CUB's observable semantics.

A scalar ``values`` returns the scanned scalar. A local array ``values`` (its
length is the number of items per thread) writes ``out``, which may be
``values`` itself. ``reduce`` and ``sum`` return the block's reduction to
thread 0 (to every thread with ``broadcast=True``).

Prefix callbacks (``prefix_op=``) follow CUB's contract: the lanes of the
block's first warp call the callback with the tile's aggregate (every thread,
for blocks of 32 threads or fewer under the raking algorithms), each calling
lane updates its own copy of ``prefix_state``, and only thread 0's return
value seeds the scan. Initialise the state equally in every thread and read
the authoritative state from thread 0.

After each call the library inserts the block barrier CUB requires before its
temp storage is reused (``auto_sync=True``); with ``auto_sync=False`` call
``cuda.syncthreads()`` yourself before the next call that uses the same
storage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ._build import temp_storage_layout
from ._calls import CALLS, host_backend, host_call, kernel_only
from ._errors import PlanError
from ._primitives import for_call
from ._spec import EntryPoint
from ._target import check_cc
from ._vocab import TempStorageLayout


def _entry_point(entry: EntryPoint) -> Callable[..., Any]:
    """The public function of a call of the registry: its signature and docstring from the spec."""
    name = entry.name

    def call(*args: Any, **kwargs: Any) -> Any:
        return host_call(name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = __name__
    call.__doc__ = for_call(name).docs[name]
    call.__signature__ = entry.signature  # type: ignore[attr-defined]
    return call


# scan, inclusive_sum, ..., load, store, reduce, sum: one function per call of
# every family (scan._primitives); block.pyi types them
globals().update({name: _entry_point(entry) for name, entry in CALLS.items()})

__all__ = sorted(["TempStorageLayout", *CALLS, "temp_storage", "tile_size"])


def tile_size(items: Any, *, threads: Any = None) -> int:
    """The items one tile holds: the block's threads times the items per thread.

    Step a tile loop by it instead of a hand-written product, so the loop
    follows the launch (``threads x len(items)``, as :func:`load` moves)::

        for base in range(0, src.shape[0], block.tile_size(items)):
            block.load(src, base, items)

    A compile-time constant in compiled kernels (a kernel compiled for one
    block shape, like every ``scan.block`` call).

    Parameters
    ----------
    items : local array or int
        The tile's items array (a ``cuda.local.array`` of literal length in
        this kernel), or the items per thread as a literal int.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's (as in :func:`scan`).

    Returns
    -------
    int
    """
    backend = host_backend()
    if backend is None:
        raise kernel_only("tile_size")
    return int(backend.call("tile_size", {"items": items, "threads": threads}))


def temp_storage(
    primitive: str,
    dtype: DTypeLike,
    threads: int | tuple[int, ...],
    items_per_thread: int = 1,
    *,
    algorithm: str | None = None,
    cc: tuple[int, int] | None = None,
) -> TempStorageLayout:
    """Size and alignment of caller-owned temp storage, read from compiled CUB code.

    Host-side. Use the result as compile-time constants::

        SCAN_BYTES, SCAN_ALIGN = block.temp_storage("scan", np.int32, 128, 4)

        @cuda.jit
        def kernel(...):
            temp = cuda.shared.array(SCAN_BYTES, np.uint8, alignment=SCAN_ALIGN)
            block.inclusive_sum(items, items, temp_storage=temp)

    One buffer can serve several primitives in turn (barriers between them):
    take the largest size and alignment. The alignment is at least 8, the
    smallest numba-cuda accepts for ``cuda.shared.array(..., alignment=)``.

    Parameters
    ----------
    primitive : str
        What the storage is for: scan, load, store or reduce (as a string).
    dtype : numpy dtype-like
        The value type.
    threads : int or tuple of int
        The block shape.
    items_per_thread : int
        Items per thread (scans: the size does not depend on it).
    algorithm : str, optional
        The primitive's algorithm (defaults as in the kernel-side calls).
    cc : tuple of int, optional
        Target compute capability; defaults to the current device's.
    """
    backend = host_backend()
    if cc is not None:
        target = check_cc(cc)
    elif backend is not None:
        target = backend.default_cc()
    else:
        raise PlanError("temp_storage: no compute capability given; pass cc=(major, minor)")
    return temp_storage_layout(
        primitive, np.dtype(dtype), threads, items_per_thread, algorithm=algorithm, cc=target
    )
