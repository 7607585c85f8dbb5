# SPDX-License-Identifier: Apache-2.0
"""Tile I/O: block.load and block.store (docs/tile-io.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from scan import block


# magictoken.tile_io_copy.begin
@cuda.jit
def copy_rows(src, dst):
    row = cuda.blockIdx.x
    items = cuda.local.array(8, np.float32)
    for base in block.tiles(src.shape[1], items, threads=64):  # 64 threads x 8 items apart
        # src[row]: a 1-D contiguous row; a partial last tile's other items get 0
        block.load(src[row], base, items, oob_default=0, threads=64)
        block.store(dst[row], base, items, threads=64)  # a partial last tile is guarded


# magictoken.tile_io_copy.end


# magictoken.tile_io_partial.begin
@cuda.jit
def tile_sums(src, sums, valid):
    items = cuda.local.array(4, np.int32)
    # read only the first `valid` items; the rest of the tile becomes 0,
    # the identity of +, so the block aggregate counts only real items
    block.load(src, 0, items, valid_items=valid, oob_default=0, threads=32)
    total = 0
    for j in range(4):
        total += items[j]
    # thread t holds items 4t .. 4t+3 of the tile (blocked arrangement)
    sums[cuda.threadIdx.x] = total


# magictoken.tile_io_partial.end


# magictoken.tile_io_algorithm.begin
@cuda.jit
def copy_vectorized(src, dst):
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items, threads=256):
        block.load(src, base, items, algorithm="vectorize", threads=256)
        block.store(dst, base, items, algorithm="vectorize", threads=256)


# magictoken.tile_io_algorithm.end


def run_copy(rows: int = 2, cols: int = 1000) -> tuple[Any, Any]:
    """Launch ``copy_rows``; return (copy, source)."""
    src = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    dst = np.zeros_like(src)
    copy_rows[rows, 64](src, dst)
    return dst, src


def run_partial(valid: int = 50) -> tuple[Any, Any]:
    """Launch ``tile_sums``; return (per-thread sums, expected sums)."""
    src = np.arange(1, 129, dtype=np.int32)
    sums = np.zeros(32, dtype=np.int32)
    tile_sums[1, 32](src, sums, valid)
    padded = np.where(np.arange(128) < valid, src, 0)
    return sums, padded.reshape(32, 4).sum(axis=1)


def run_vectorized(n: int = 3000) -> tuple[Any, Any]:
    """Launch ``copy_vectorized``; return (copy, source)."""
    src = np.arange(n, dtype=np.int32)
    dst = np.zeros_like(src)
    copy_vectorized[1, 256](src, dst)
    return dst, src
