# SPDX-License-Identifier: Apache-2.0
"""Warp scans: one row per warp with a carried prefix, and short rows on logical warps
(docs/warp.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import warp

# magictoken.warp_rows.begin
ITEMS = 4  # items per lane: a warp's tile is 32 x 4 = 128 items


@statefn.stateful(np.int64)
def running_total(state, warp_aggregate):
    prefix = state[0]  # the sum of the row's earlier tiles
    state[0] = prefix + warp_aggregate
    return prefix


@cuda.jit
def row_cumsum_per_warp(src, dst):
    row = cuda.blockIdx.x * (cuda.blockDim.x // 32) + cuda.threadIdx.x // 32
    if row >= src.shape[0]:
        return  # a whole warp leaves: the other warps do not wait for it
    state = cuda.local.array(1, np.int64)
    state[0] = 0  # every lane initialises it equally
    items = cuda.local.array(ITEMS, np.int32)
    for base in warp.tiles(src.shape[1], items):  # 32 lanes x ITEMS apart
        warp.load(src[row], base, items, oob_default=0)  # 0 past the row's end
        warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
        warp.store(dst[row], base, items)


# magictoken.warp_rows.end


# magictoken.warp_short_rows.begin
LANES = 8  # a logical warp of 8 lanes x 4 items scans one row of 32


@cuda.jit
def short_row_maxima(src, dst, row_max):
    lane = cuda.threadIdx.x % LANES
    row = cuda.blockIdx.x * (cuda.blockDim.x // LANES) + cuda.threadIdx.x // LANES
    items = cuda.local.array(4, np.float32)
    best = cuda.local.array(1, np.float32)
    warp.load(src[row], 0, items, lanes=LANES)
    warp.inclusive_scan(items, scan_op="max", warp_aggregate=best, lanes=LANES)
    warp.store(dst[row], 0, items, lanes=LANES)
    if lane == 0:
        row_max[row] = best[0]


# magictoken.warp_short_rows.end


def run_rows(rows: int = 5, cols: int = 300, threads: int = 64) -> tuple[Any, Any]:
    """Launch ``row_cumsum_per_warp`` (a row per warp); return (result, NumPy's)."""
    src = np.random.default_rng(cols).integers(-1000, 1000, (rows, cols)).astype(np.int32)
    dst = np.zeros_like(src)
    warps = threads // 32
    row_cumsum_per_warp[(rows + warps - 1) // warps, threads](src, dst)
    return dst, np.cumsum(src, axis=1, dtype=np.int64).astype(np.int32)


def run_short_rows(rows: int = 16) -> tuple[Any, Any]:
    """Launch ``short_row_maxima`` (rows of 32, 8 rows a block); return (result, NumPy's).

    Both are the running maxima of each row followed by the row maxima.
    """
    src = np.random.default_rng(4).standard_normal((rows, 32)).astype(np.float32)
    dst = np.zeros_like(src)
    row_max = np.zeros(rows, np.float32)
    short_row_maxima[rows // 8, 8 * LANES](src, dst, row_max)
    got = np.concatenate([dst.ravel(), row_max])
    want = np.concatenate([np.maximum.accumulate(src, axis=1).ravel(), src.max(axis=1)])
    return got, want
