# SPDX-License-Identifier: Apache-2.0
"""The project's row-scan kernels timed by ``bench/matrix.py``.

The loop of ``_rowscan_kernels.make_prefix_kernel`` (one block per row; per tile
``block.load``, ``block.inclusive_sum`` with the ``running_total`` prefix
callback, ``block.store``), with one addition: ``block.load`` pads a partial
last tile with ``oob_default=0``. Without it the items past the end of the row
keep the previous tile's values and the callback adds them to the running
total (the simulator refuses that), so rows that are not a whole number of
tiles would come out wrong; the CUB C++ kernel pads its tail with ``T(0)`` the
same way. Full tiles do not use the padding.

Three forms: with explicit ``algorithm=`` on every call (numba-cuda), with no
``algorithm=`` anywhere (the library's defaults; also with its loop written
as ``block.tiles``), and the same two written with numba-cuda-mlir. The
numba-cuda kernels refer to ``cuda`` as a module global, as a user's kernel
does (the simulator swaps it there).
"""

from __future__ import annotations

from typing import Any

import _rowscan_kernels as rk
import numpy as np
from numba import cuda

from scan import block

__all__ = ["make_default_kernel", "make_explicit_kernel", "make_mlir_kernel"]

#: the callback state's dtype (CUB's running total too), per value dtype
STATE = {"int32": "int64", "float32": "float32", "int64": "int64", "float64": "float64"}


def make_explicit_kernel(
    dtype: str, threads: int, items: int, algo: str, io: str, *, launch_bounds: bool = False
) -> Any:
    """The row kernel with ``algorithm=io`` on load and store and ``algorithm=algo`` on the scan."""
    VALUE = getattr(np, dtype)
    STATE_T = getattr(np, STATE[dtype])
    ZERO = VALUE(0)
    ITEMS = items
    TILE = threads * items
    IO = io
    ALGO = algo
    total = rk.running_total(STATE[dtype])
    jit = cuda.jit(launch_bounds=threads) if launch_bounds else cuda.jit

    @jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, STATE_T)
        state[0] = 0
        values = cuda.local.array(ITEMS, VALUE)
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, values, oob_default=ZERO, algorithm=IO)
            block.inclusive_sum(values, values, prefix_op=total, prefix_state=state, algorithm=ALGO)
            block.store(dst[row], base, values, algorithm=IO)

    return row_cumsum


def make_default_kernel(dtype: str, threads: int, items: int, *, tiles: bool = False) -> Any:
    """The same loop with no ``algorithm=`` anywhere: whatever the library's defaults are.

    Written out on its own rather than passing ``algorithm=None``. With
    `tiles`, the loop is ``for base in block.tiles(n, values)`` (contender
    ``project_tiles``), which compiles to the ``range`` loop.
    """
    VALUE = getattr(np, dtype)
    STATE_T = getattr(np, STATE[dtype])
    ZERO = VALUE(0)
    ITEMS = items
    TILE = threads * items
    total = rk.running_total(STATE[dtype])
    if tiles:

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def row_cumsum_tiles(src: Any, dst: Any) -> None:
            row = cuda.blockIdx.x
            state = cuda.local.array(1, STATE_T)
            state[0] = 0
            values = cuda.local.array(ITEMS, VALUE)
            for base in block.tiles(src.shape[1], values):
                block.load(src[row], base, values, oob_default=ZERO)
                block.inclusive_sum(values, values, prefix_op=total, prefix_state=state)
                block.store(dst[row], base, values)

        return row_cumsum_tiles

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum_default(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, STATE_T)
        state[0] = 0
        values = cuda.local.array(ITEMS, VALUE)
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, values, oob_default=ZERO)
            block.inclusive_sum(values, values, prefix_op=total, prefix_state=state)
            block.store(dst[row], base, values)

    return row_cumsum_default


def make_mlir_kernel(
    dtype: str,
    threads: int,
    items: int,
    algo: str | None = None,
    io: str | None = None,
    launch_bounds: tuple[int, ...] | None = None,
) -> Any:
    """The row kernel written with numba-cuda-mlir (as ``bench/mlir_rowscan.py`` writes it);
    ``algo`` None: no ``algorithm=`` anywhere; ``launch_bounds`` as ``cuda.jit`` takes it."""
    from numba_cuda_mlir import cuda as mcuda

    jit = mcuda.jit if launch_bounds is None else mcuda.jit(launch_bounds=launch_bounds)

    VALUE = getattr(np, dtype)
    STATE_T = getattr(np, STATE[dtype])
    ZERO = VALUE(0)
    ITEMS = items
    TILE = threads * items
    total = rk.running_total(STATE[dtype])
    if algo is None:

        @jit  # type: ignore[untyped-decorator, unused-ignore]
        def row_cumsum_mlir_default(src: Any, dst: Any) -> None:
            row = mcuda.blockIdx.x
            state = mcuda.local.array(1, STATE_T)
            state[0] = 0
            values = mcuda.local.array(ITEMS, VALUE)
            for base in range(0, src.shape[1], TILE):
                block.load(src[row], base, values, oob_default=ZERO)
                block.inclusive_sum(values, values, prefix_op=total, prefix_state=state)
                block.store(dst[row], base, values)

        return row_cumsum_mlir_default

    IO = io
    ALGO = algo

    @jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum_mlir(src: Any, dst: Any) -> None:
        row = mcuda.blockIdx.x
        state = mcuda.local.array(1, STATE_T)
        state[0] = 0
        values = mcuda.local.array(ITEMS, VALUE)
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, values, oob_default=ZERO, algorithm=IO)
            block.inclusive_sum(values, values, prefix_op=total, prefix_state=state, algorithm=ALGO)
            block.store(dst[row], base, values, algorithm=IO)

    return row_cumsum_mlir


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def count_bad(src: Any, dst: Any, bad: Any) -> None:
    """Count elements of ``dst`` that are not the row-wise inclusive sum of ``src``.

    ``dst[r, 0] == src[r, 0]`` and ``dst[r, c] - dst[r, c - 1] == src[r, c]``:
    exact for integer-valued data, so every element of every row is checked.
    Blocks stride over rows and threads over columns (no index division).
    """
    rows = src.shape[0]
    cols = src.shape[1]
    local = 0
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        for c in range(cuda.threadIdx.x, cols, cuda.blockDim.x):
            left = dst[r, c - 1] if c > 0 else 0
            if dst[r, c] - left != src[r, c]:
                local += 1
    if local != 0:
        cuda.atomic.add(bad, 0, local)
