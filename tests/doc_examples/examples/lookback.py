# SPDX-License-Identifier: Apache-2.0
"""Cross-block scans: a one-array cumsum, a 16-row selective scan, stream compaction
(docs/lookback.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import scan
from scan import block

# magictoken.lookback_cumsum.begin
# the measured fastest threads x items for long look-back scans of 4-byte items:
# 128 x 32, a tile of 4096 items; one block scans one tile
THREADS, ITEMS = block.launch_shape(1 << 28, np.int32, cross_block=True)


@cuda.jit
def cumsum(src, dst, status):
    items = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * THREADS * ITEMS  # tile t = block t
    block.load(src, base, items, oob_default=0)
    # the prefix: every earlier tile's sum, from blocks that ran before this one
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status)
    block.store(dst, base, items)


def launch_cumsum(d_src, d_dst):
    tiles = -(-d_src.size // (THREADS * ITEMS))
    status = scan.tile_status(tiles, np.int32)  # on the device, every tile invalid
    cumsum[tiles, THREADS](d_src, d_dst, status)
    return status  # status.reset() before the next launch that uses it


# magictoken.lookback_cumsum.end


def run_cumsum(n: int = 50_000, threads_items: tuple[int, int] | None = None) -> Any:
    """``cumsum`` on ``n`` random int32 items: (got, want)."""
    x = np.random.default_rng(0).integers(-100, 100, n).astype(np.int32)
    d_src, d_dst = cuda.to_device(x), cuda.device_array_like(x)
    launch_cumsum(d_src, d_dst)
    return d_dst.copy_to_host(), np.cumsum(x, dtype=np.int32)


# magictoken.lookback_rows.begin
# h[t] = a[t] * h[t-1] + b[t] for each of 16 rows: each item is the map h -> a * h + b
pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
ROW_THREADS, ROW_ITEMS = block.launch_shape(1 << 24, pair, cross_block=True)  # 128 x 32


@cuda.jit(device=True)
def compose(x, y):  # x first, then y
    return (x.a * y.a, y.a * x.b + y.b)


@cuda.jit
def selective_scan(ab, h, status):
    row, tile = cuda.blockIdx.y, cuda.blockIdx.x  # grid: (tiles, rows)
    items = cuda.local.array(ROW_ITEMS, pair)
    base = tile * ROW_THREADS * ROW_ITEMS
    block.load(ab[row], base, items, oob_default=(1.0, 0.0))  # the identity map
    block.inclusive_scan(
        items,
        scan_op=compose,
        prefix_op=scan.lookback,
        prefix_state=status[row],  # one status row per sequence
        tile=tile,  # the tile within the row (not the block's linear index)
    )
    for i in range(ROW_ITEMS):  # h[t] is the composed map's b (h[-1] = 0)
        if base + cuda.threadIdx.x * ROW_ITEMS + i < h.shape[1]:
            h[row, base + cuda.threadIdx.x * ROW_ITEMS + i] = items[i].b


def launch_selective_scan(d_ab, d_h):
    rows, cols = d_ab.shape
    tiles = -(-cols // (ROW_THREADS * ROW_ITEMS))
    status = scan.tile_status((rows, tiles), pair)
    selective_scan[(tiles, rows), ROW_THREADS](d_ab, d_h, status)
    return status


# magictoken.lookback_rows.end


def reference_recurrence(ab: np.ndarray) -> np.ndarray:
    """h for each row of ``ab`` in float64 (rounded to float32)."""
    h = np.zeros(ab.shape, np.float64)
    acc = np.zeros(ab.shape[0], np.float64)
    for t in range(ab.shape[1]):
        acc = ab["a"][:, t].astype(np.float64) * acc + ab["b"][:, t]
        h[:, t] = acc
    return h.astype(np.float32)


def run_selective_scan(rows: int = 16, cols: int = 3000) -> Any:
    """``selective_scan`` on random maps (a in [0.9, 1), b normal): (got, want)."""
    rng = np.random.default_rng(1)
    ab = np.zeros((rows, cols), pair)
    ab["a"] = rng.uniform(0.9, 1.0, (rows, cols))
    ab["b"] = rng.standard_normal((rows, cols))
    d_ab, d_h = cuda.to_device(ab), cuda.device_array((rows, cols), np.float32)
    launch_selective_scan(d_ab, d_h)
    return d_h.copy_to_host(), reference_recurrence(ab)


# magictoken.lookback_compaction.begin
KEEP_THREADS, KEEP_ITEMS = block.launch_shape(1 << 28, np.float32, cross_block=True)


@cuda.jit
def compact(src, threshold, dst, count, status):
    items = cuda.local.array(KEEP_ITEMS, np.float32)
    slots = cuda.local.array(KEEP_ITEMS, np.int32)
    base = cuda.blockIdx.x * KEEP_THREADS * KEEP_ITEMS
    block.load(src, base, items, oob_default=-np.inf)
    first = base + cuda.threadIdx.x * KEEP_ITEMS  # this thread's items (blocked arrangement)
    for i in range(KEEP_ITEMS):
        slots[i] = 1 if items[i] > threshold else 0  # past the end: -inf, never kept
    # each kept item's slot in dst: the kept items before it, in every earlier tile too
    block.exclusive_sum(slots, prefix_op=scan.lookback, prefix_state=status)
    for i in range(KEEP_ITEMS):
        if items[i] > threshold:
            dst[slots[i]] = items[i]
        if first + i == src.size - 1:  # the thread holding the last item has the total
            count[0] = slots[i] + (1 if items[i] > threshold else 0)


# magictoken.lookback_compaction.end


def run_compaction(n: int = 40_000, threshold: float = 1.0) -> Any:
    """``compact`` on ``n`` normal float32 items: ((kept, count), want)."""
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    tiles = -(-n // (KEEP_THREADS * KEEP_ITEMS))
    d_src, d_dst = cuda.to_device(x), cuda.device_array(n, np.float32)
    d_count = cuda.device_array(1, np.int32)
    status = scan.tile_status(tiles, np.int32)
    compact[tiles, KEEP_THREADS](d_src, np.float32(threshold), d_dst, d_count, status)
    count = int(d_count.copy_to_host()[0])
    # only the kept items: the rest of d_dst was never written
    return (d_dst[:count].copy_to_host(), count), x[x > threshold]
