# SPDX-License-Identifier: Apache-2.0
"""Block-wide scans and tile I/O for use inside ``@cuda.jit`` kernels.

Every function here is called from kernel code by all threads of a block, like
a ``cuda.syncthreads()``: the block shape comes from the launch
(``kernel[grid, block]``) or from a literal ``threads=``. Calling them from
host code raises :class:`RuntimeError`, except under the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``), where they run with CUB's observable semantics.

A scalar ``values`` returns the scanned scalar. A local array ``values`` (its
length is the number of items per thread) writes ``out``, which may be
``values`` itself.

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
from typing import Any, TypeVar

import numpy as np
from numpy.typing import DTypeLike

from ._build import temp_storage_layout
from ._calls import CALLS, host_backend, host_call, kernel_only
from ._errors import PlanError
from ._target import check_cc
from ._vocab import TempStorageLayout

__all__ = [
    "TempStorageLayout",
    "exclusive_scan",
    "exclusive_sum",
    "inclusive_scan",
    "inclusive_sum",
    "load",
    "scan",
    "store",
    "temp_storage",
    "tile_size",
]


_F = TypeVar("_F", bound=Callable[..., Any])


def _entry_point(fn: _F) -> _F:
    """Give an entry point the signature of its row in the call table."""
    fn.__signature__ = CALLS[fn.__name__].signature  # type: ignore[attr-defined]
    return fn


@_entry_point
def scan(*args: Any, **kwargs: Any) -> Any:
    """Block-wide scan with any operator (``cub::BlockScan``).

    Parameters
    ----------
    values : scalar or local array
        This thread's item, or its items (the array length is the number of
        items per thread, in blocked arrangement).
    out : local array, optional
        Where an array scan writes; defaults to ``values`` (in place).
    mode : {"inclusive", "exclusive"}
        Literal string.
    scan_op : str, callable or statefn.ScanOperator
        ``"+" "*" "min" "max" "&" "|" "^"``, their ``operator``/NumPy
        spellings, or a binary ``@cuda.jit(device=True)`` function.
    initial_value : scalar, optional
        Seeds the scan; required for exclusive scans with a non-sum operator
        unless ``prefix_op`` is given. Cannot be combined with ``prefix_op``.
    prefix_op : statefn.StatefulFunction, statefn.StatelessFunction or device function, optional
        Called with the block aggregate by the first warp; thread 0's return
        value seeds the scan.
    prefix_state : local array of one item, optional
        The state of a stateful ``prefix_op``; its dtype must equal the
        callback's declared state dtype.
    block_aggregate : local array of one item, optional
        Receives the block-wide aggregate. Cannot be combined with
        ``prefix_op`` (the callback receives it instead).
    algorithm : {"raking", "raking_memoize", "warp_scans"}, optional
        CUB's ``BLOCK_SCAN_*`` algorithm; ``warp_scans`` needs a block size
        that is a multiple of 32. Without it, the one measured fastest for
        the block size, items per thread and item size (see the defaults
        table in the performance docs; ``raking`` where none was measured).
    temp_storage : shared uint8 array, optional
        Caller-owned temp storage (see :func:`temp_storage`); library-owned
        static shared memory by default.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's.
    items_per_thread : int, optional
        Only needed when ``values`` is not a local array of literal length.
    auto_sync : bool
        Insert the block barrier CUB requires before temp storage is reused.

    Any other keyword is refused with a message naming the right one (e.g. the
    retired ``block_prefix_callback_op=``).

    Returns
    -------
    scalar or None
        The scanned value for scalar ``values``; None for arrays.
    """
    return host_call("scan", args, kwargs)


@_entry_point
def inclusive_sum(*args: Any, **kwargs: Any) -> Any:
    """Block-wide inclusive prefix sum. Parameters as in :func:`scan`."""
    return host_call("inclusive_sum", args, kwargs)


@_entry_point
def exclusive_sum(*args: Any, **kwargs: Any) -> Any:
    """Block-wide exclusive prefix sum (thread 0's first output is 0, or the prefix).

    Parameters as in :func:`scan`.
    """
    return host_call("exclusive_sum", args, kwargs)


@_entry_point
def inclusive_scan(*args: Any, **kwargs: Any) -> Any:
    """Block-wide inclusive scan with ``scan_op``. Parameters as in :func:`scan`."""
    return host_call("inclusive_scan", args, kwargs)


@_entry_point
def exclusive_scan(*args: Any, **kwargs: Any) -> Any:
    """Block-wide exclusive scan with ``scan_op``. Parameters as in :func:`scan`.

    A non-sum operator needs ``initial_value`` or ``prefix_op``.
    """
    return host_call("exclusive_scan", args, kwargs)


@_entry_point
def load(*args: Any, **kwargs: Any) -> Any:
    """Load one tile ``src[offset : offset + threads * len(items)]`` (``cub::BlockLoad``).

    Thread ``t`` receives items ``t * len(items) ... (t + 1) * len(items) - 1``
    of the tile (blocked arrangement) with every algorithm except ``"striped"``,
    which gives CUB's striped arrangement (item ``i`` of thread ``t`` is tile
    item ``i * threads + t``).

    Parameters
    ----------
    src : 1-D C-contiguous array
        Global (or shared) memory; index a row first for 2-D data.
    offset : int
        Index of the tile's first item in ``src``.
    items : local array
        Receives this thread's items; its length is the items per thread.
    valid_items : int, optional
        Number of items to read from ``offset`` on; defaults to (and is never
        more than) ``len(src) - offset``. A tile that runs past the end is
        guarded automatically.
    oob_default : scalar, optional
        Value given to items past the valid range. Without it those items keep
        the values they had before the load: pass the identity of your scan
        operator (e.g. 0 for sums) when a partial tile's aggregate matters.
    algorithm : {"direct", "striped", "vectorize", "transpose", "warp_transpose", \
"warp_transpose_timesliced"}, optional
        CUB's ``BLOCK_LOAD_*`` algorithm. Default: the one measured fastest
        for the block size, items per thread and item size (``"vectorize"``
        with 4 items of 4 bytes and 128 threads), else
        ``"warp_transpose"`` when the block size is a multiple of 32, else
        ``"transpose"``.
    temp_storage, threads, items_per_thread, auto_sync
        As in :func:`scan`.
    """
    return host_call("load", args, kwargs)


@_entry_point
def store(*args: Any, **kwargs: Any) -> Any:
    """Store one tile to ``dst[offset : offset + threads * len(items)]`` (``cub::BlockStore``).

    Items past ``len(dst)`` (or past ``valid_items``) are not written.
    Parameters as in :func:`load`.
    """
    return host_call("store", args, kwargs)


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
    primitive : {"scan", "load", "store"}
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
