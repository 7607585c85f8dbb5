# SPDX-License-Identifier: Apache-2.0
"""Differences and run heads: block.adjacent_difference and block.flag_heads
(docs/neighbours.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import block

# magictoken.row_diff.begin
THREADS, ITEMS = 128, 4


@cuda.jit
def row_diff(src, dst):
    row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
    items = cuda.local.array(ITEMS, np.int32)
    carry = cuda.local.array(1, np.int32)  # the item before the tile: 0 before the row
    carry[0] = 0
    for base in block.tiles(row.shape[0], items):
        block.load(row, base, items, oob_default=0)
        # items[i] - the item before it; then carry[0] = the tile's last item
        block.adjacent_difference(items, carry=carry)
        block.store(out, base, items)


# magictoken.row_diff.end


# magictoken.run_ids.begin
@statefn.stateful(np.int32)
def runs_so_far(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@cuda.jit
def run_ids(src, dst):
    row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
    items = cuda.local.array(ITEMS, np.float32)
    flags = cuda.local.array(ITEMS, np.int32)
    carry = cuda.local.array(1, np.float32)
    carry[0] = row[0]  # the row's first item is the first run's: not a new head
    runs = cuda.local.array(1, np.int32)
    runs[0] = 0
    for base in block.tiles(row.shape[0], items):
        block.load(row, base, items, oob_default=0)
        block.flag_heads(flags, items, carry=carry)  # 1 where a new run starts
        # the run each item belongs to: the heads up to it, carried across tiles
        block.inclusive_sum(flags, flags, prefix_op=runs_so_far, prefix_state=runs)
        block.store(out, base, flags)


# magictoken.run_ids.end


def run_row_diff(rows: int = 3, cols: int = 1000) -> tuple[Any, Any]:
    """Launch ``row_diff``; return (result, ``np.diff(src, prepend=0)``)."""
    src = np.random.default_rng(0).integers(-1000, 1000, (rows, cols)).astype(np.int32)
    dst = np.zeros_like(src)
    row_diff[rows, THREADS](src, dst)
    return dst, np.diff(src, axis=1, prepend=0)


def run_run_ids(rows: int = 3, cols: int = 1500) -> tuple[Any, Any]:
    """Launch ``run_ids`` on rows of runs; return (result, NumPy's run ids)."""
    rng = np.random.default_rng(1)
    src = np.repeat(rng.standard_normal((rows, cols)), 3, axis=1)[:, :cols].astype(np.float32)
    dst = np.zeros(src.shape, np.int32)
    run_ids[rows, THREADS](src, dst)
    heads = np.concatenate([np.zeros((rows, 1), bool), src[:, 1:] != src[:, :-1]], axis=1)
    return dst, np.cumsum(heads, axis=1, dtype=np.int32)
