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

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ._build import temp_storage_layout
from ._calls import entry_point_function, host_backend, kernel_only
from ._errors import PlanError, ScanTypeError
from ._primitives import module_calls
from ._shapes import LaunchShape, check_row_length, item_size, propose, propose_cross_block
from ._target import check_cc
from ._tiles import check_length, check_reverse
from ._vocab import TempStorageLayout

# scan, inclusive_sum, ..., load, store, reduce, sum: one function per call of
# every family (scan._primitives) in this module; block.pyi types them
_CALLS = module_calls("block")
globals().update({name: entry_point_function(entry) for name, entry in _CALLS.items()})

__all__ = sorted(
    [
        "LaunchShape",
        "TempStorageLayout",
        *_CALLS,
        "launch_shape",
        "temp_storage",
        "tile_size",
        "tiles",
    ]
)


def tile_size(items: Any, *, threads: Any = None) -> int:
    """The items one tile holds: the block's threads times the items per thread.

    Step a tile loop by it instead of a hand-written product, so the loop
    follows the launch (``threads x len(items)``, as :func:`load` moves)::

        for base in range(0, src.shape[0], block.tile_size(items)):
            block.load(src, base, items)

    (:func:`tiles` writes that loop for you.) A compile-time constant in
    compiled kernels (a kernel compiled for one block shape, like every
    ``scan.block`` call).

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


def tiles(n: Any, items: Any, *, reverse: bool = False, threads: Any = None) -> range:
    """The offsets of a row's tiles, for a tile loop: ``for base in block.tiles(n, items):``.

    A row of `n` items is cut into tiles of :func:`tile_size` items (the
    block's threads times ``len(items)``), aligned at the row's start; the
    loop visits each tile's offset once::

        for base in block.tiles(src.shape[0], items):   # 0, tile, 2 * tile, ...
            block.load(src, base, items, oob_default=0)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
            block.store(dst, base, items)

    With ``reverse=True`` the same offsets come from the last (partial)
    tile down to 0, as a reverse scan's carried suffix needs
    (``reverse=True`` on the scan too). In compiled kernels it is the loop
    written by hand, ``range(0, n, tile)`` or
    ``range((n - 1) // tile * tile, -1, -tile)`` with the tile a constant:
    it costs nothing over it.

    Parameters
    ----------
    n : int
        The row's length in items (a runtime integer).
    items : local array or int
        The tile's items array (a ``cuda.local.array`` of literal length in
        this kernel), or the items per thread as a literal int.
    reverse : bool
        Literal. Walk from the row's last tile to its first.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's (as in :func:`scan`).

    Returns
    -------
    range
    """
    backend = host_backend()
    if backend is None:
        raise kernel_only("tiles")
    check_length("tiles", n)
    check_reverse("tiles", reverse)
    return backend.call(  # type: ignore[no-any-return]
        "tiles", {"n": n, "items": items, "reverse": reverse, "threads": threads}
    )


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


def launch_shape(row_length: int, dtype: DTypeLike, *, cross_block: bool = False) -> LaunchShape:
    """Threads x items per thread for a row scan, the fastest measured for rows like these.

    Host-side. For a kernel that scans each row with one block, tile by tile
    (:func:`load`, :func:`inclusive_sum` with a prefix callback, :func:`store`,
    algorithms left to their defaults, as in the quickstart), it proposes the
    block shape and the items per thread::

        THREADS, ITEMS = block.launch_shape(2048, np.int32)  # 128, 8

        @cuda.jit
        def row_cumsum(src, dst):
            items = cuda.local.array(ITEMS, np.int32)
            for base in range(0, src.shape[1], block.tile_size(items)):
                ...

        row_cumsum[rows, THREADS](d_src, d_dst)

    Where the numbers come from: the event-timed GB/s of that kernel with the
    library's defaults on an NVIDIA H200 (cc 9.0), in
    ``docs/results/h200_2026-12-03_v10b_matrix.csv`` (the run behind the
    defaults table of ``docs/performance.md``). ``tools/launch_shape_table.py``
    copies them into ``scan/_shape_table.py``, and the tests check that copy
    against the csv. They cover int32 and float32 rows of 2048 and 65536 items
    at 128, 256 and 512 threads x 4, 8 and 16 items, and int64 and float64
    rows of 65536 items at 128 x 16, 256 x 4 and 256 x 8.

    What it maximises: that GB/s, averaged over the measured dtypes of the
    item size, among the measured shapes whose tile (threads x items) is no
    longer than the row, so a short row never gets a tile that leaves threads
    idle when a shorter measured one exists:

    - 4-byte items: rows of up to 11585 items (nearer 2048 than 65536 on a
      log scale) use the 2048-item figures: 128 x 8, within 0.5% of the
      fastest there (256 x 16, whose tile is twice the row; 512 x 8 and
      512 x 16 ran at 0.51-0.72 of Triton on those rows); 128 x 4 below 1024
      items. Longer rows use the 65536-item figures: 256 x 4.
    - 8-byte items: the 65536-item figures for every row length: 256 x 8;
      256 x 4 below 2048 items.
    - In every measured cell the proposal is within 1% of the fastest
      measured shape for each dtype.

    Where nothing was measured, the same rule uses the nearest measurements:
    other item sizes take the nearest measured one on a log scale (1 and 2
    bytes: the 4-byte figures; 16 bytes: the 8-byte ones), and records count
    by their size; a shape is only compared on a cell where its tile fits in
    the measured rows. A row shorter than every such tile gets the smallest
    measured tile, 128 x 4 (512 items). Other GPUs get the same proposal,
    unmeasured. Rows whose length is not a multiple of 4 items lose the
    16-byte vector loads of 256 x 4: on rows of 65613 int32 or float32 items
    it was 0.987-0.990 of 256 x 8, the best of the three shapes measured there.

    With ``cross_block=True`` it proposes the shape of a cross-block scan
    instead: one block a tile, each taking its prefix from the tiles before it
    with ``prefix_op=scan.lookback`` (:doc:`/lookback`), ``row_length`` the
    sequence's length::

        THREADS, ITEMS = block.launch_shape(n, np.int32, cross_block=True)  # 128, 32

    Where those numbers come from: the event-timed GB/s of the look-back
    benchmark's kernels (``bench/lookback_bench.py``, status reset and scan
    timed) on an NVIDIA H100, in
    ``docs/results/h100_2026-12-06b_lookback_sweep.csv``: int32 and float32
    cumsums of 2^28 items and the pair recurrence over 2^27 pairs of float32
    (8-byte items), at 128 x 12, 16, 20, 24, 32 and 256 x 8, 12, 16. The
    fastest was 128 x 32 for both item sizes (4-byte items: 1.03 times
    ``cub::DeviceScan::InclusiveSum``'s speed in that run; 256 x 8 reached
    0.82). The same rule as above, by item size only: the nearest measured
    item size, the fastest shape whose tile is no longer than the sequence and
    holds no more bytes than 128 x 32 pairs of float32 (32 KiB), else the
    smallest measured tile (128 x 12). 16-byte items get 128 x 16. Sequences
    much shorter than those measured get the same proposal, unmeasured.

    Parameters
    ----------
    row_length : int
        Items in one row (at least 1); with ``cross_block=True``, in the
        sequence.
    dtype : numpy dtype-like
        The rows' dtype: a numeric dtype the scans accept, or a record of
        numeric fields.
    cross_block : bool
        Propose the shape of a cross-block (look-back) scan, one block a tile,
        instead of a row scan by one block.

    Returns
    -------
    LaunchShape
        ``(threads, items_per_thread)``.

    Raises
    ------
    scan.ScanTypeError
        When `row_length` is not an int, or `dtype` is not one the scans accept.
    scan.PlanError
        When `row_length` is less than 1.
    """
    length = check_row_length("launch_shape", row_length)
    if not isinstance(cross_block, bool | np.bool_):
        raise ScanTypeError(
            f"launch_shape: cross_block= must be True or False (got {cross_block!r}); "
            "True for a scan with prefix_op=scan.lookback, one block a tile"
        )
    if cross_block:
        return propose_cross_block(length, item_size("launch_shape", dtype))
    return propose(length, item_size("launch_shape", dtype))
