# SPDX-License-Identifier: Apache-2.0
"""Block reduce: block.sum and block.reduce (docs/reduce.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda

from scan import block

# magictoken.reduce_norm.begin
THREADS, ITEMS = 128, 4
TILE = THREADS * ITEMS


@cuda.jit
def normalize_rows(src, dst):
    row = src[cuda.blockIdx.x]
    out = dst[cuda.blockIdx.x]
    items = cuda.local.array(ITEMS, np.float32)
    # pass 1: the row's sum of squares, tile by tile (0 past the row's end)
    total = 0.0
    for base in block.tiles(row.shape[0], items):
        block.load(row, base, items, oob_default=0)
        for i in range(ITEMS):
            items[i] = items[i] * items[i]
        total += block.sum(items)  # every thread receives the sum
    scale = 1.0 / math.sqrt(total) if total > 0 else 0.0
    # pass 2: every thread scales its items by the same norm
    for base in block.tiles(row.shape[0], items):
        block.load(row, base, items, oob_default=0)
        for i in range(ITEMS):
            items[i] = items[i] * scale
        block.store(out, base, items)


# magictoken.reduce_norm.end


# magictoken.reduce_argmax.begin
PAIR = np.dtype([("value", np.float32), ("pos", np.int32)])


@cuda.jit(device=True)
def larger(a, b):
    # (value, index) pairs: the larger value wins, the lower index breaks ties,
    # so the result does not depend on the order CUB combines them in
    if b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


@cuda.jit
def argmax_rows(src, best):
    row = src[cuda.blockIdx.x]
    items = cuda.local.array(ITEMS, PAIR)
    winner = cuda.local.array(1, PAIR)  # thread 0's running best across tiles
    for base in block.tiles(row.shape[0], items):
        for i in range(ITEMS):  # thread t holds items t * ITEMS + i of the tile
            k = base + cuda.threadIdx.x * ITEMS + i
            items[i].value = row[k] if k < row.shape[0] else -np.inf
            items[i].pos = k
        # only thread 0 keeps the winner: CUB's result in thread 0, one barrier less
        tile_best = block.reduce(items, larger, broadcast=False)
        if cuda.threadIdx.x == 0 and (base == 0 or tile_best.value > winner[0].value):
            winner[0] = tile_best
    if cuda.threadIdx.x == 0:
        best[cuda.blockIdx.x] = winner[0].pos


# magictoken.reduce_argmax.end


# magictoken.reduce_count.begin
@cuda.jit
def count_positive(src, counts):
    row = src[cuda.blockIdx.x]
    items = cuda.local.array(ITEMS, np.float32)
    flags = cuda.local.array(ITEMS, np.uint8)
    count = 0
    for base in block.tiles(row.shape[0], items):
        block.load(row, base, items, oob_default=0)
        for i in range(ITEMS):
            flags[i] = 1 if items[i] > 0 else 0
        # a tile has up to 512 positives: counted in uint8, the sum would wrap at 256
        count += block.sum(flags, dtype=np.int64)
    if cuda.threadIdx.x == 0:
        counts[cuda.blockIdx.x] = count


# magictoken.reduce_count.end


def run_norm(rows: int = 3, cols: int = 1000) -> tuple[Any, Any]:
    """Launch ``normalize_rows``; return (result, float64 reference)."""
    src = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    dst = np.zeros_like(src)
    normalize_rows[rows, THREADS](src, dst)
    ref = src.astype(np.float64)
    return dst, ref / np.linalg.norm(ref, axis=1, keepdims=True)


def run_argmax(rows: int = 3, cols: int = 1500) -> tuple[Any, Any]:
    """Launch ``argmax_rows``; return (result, NumPy's argmax)."""
    src = np.random.default_rng(1).integers(0, 100, (rows, cols)).astype(np.float32)
    best = np.zeros(rows, np.int32)
    argmax_rows[rows, THREADS](src, best)
    return best, src.argmax(axis=1)


def run_count(rows: int = 3, cols: int = 1300) -> tuple[Any, Any]:
    """Launch ``count_positive``; return (result, NumPy's count)."""
    src = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32)
    src[0] = np.abs(src[0]) + 1  # every item positive: 512 a full tile
    counts = np.zeros(rows, np.int64)
    count_positive[rows, THREADS](src, counts)
    return counts, (src > 0).sum(axis=1)
