# SPDX-License-Identifier: Apache-2.0
"""The state contract, observed (docs/state-contract.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import block


# magictoken.count_calls.begin
@statefn.stateful(np.int32)
def count_calls(state, block_aggregate):
    state[0] += 1  # runs in every calling lane, on that lane's own copy
    return block_aggregate * 0  # prefix 0: the scan is a plain inclusive sum


@cuda.jit
def who_calls(calls, algorithm_is_warp_scans):
    tid = cuda.threadIdx.x
    state = cuda.local.array(1, np.int32)
    state[0] = 0
    if algorithm_is_warp_scans:
        block.inclusive_sum(1, prefix_op=count_calls, prefix_state=state, algorithm="warp_scans")
    else:
        block.inclusive_sum(1, prefix_op=count_calls, prefix_state=state, algorithm="raking")
    calls[tid] = state[0]  # 1 where this thread called the callback, else 0


# magictoken.count_calls.end


def who_called(threads: int, warp_scans: bool = False) -> Any:
    """Launch ``who_calls`` with a 1-D block; return each thread's call count."""
    # magictoken.count_calls_launch.begin
    calls = np.zeros(threads, dtype=np.int32)
    who_calls[1, threads](calls, warp_scans)
    # e.g. threads=64 -> calls == [1] * 32 + [0] * 32
    # magictoken.count_calls_launch.end
    return calls


def callers(threads: int, warp_scans: bool = False) -> int:
    """How many threads called the callback (ranks ``0 .. n-1``, once each)."""
    return int(who_called(threads, warp_scans).sum())


# magictoken.raking_threads.begin
def raking_threads(block_threads: int) -> int:
    """How many threads call the prefix callback under raking / raking_memoize."""
    max_raking = min(block_threads, 32)
    segment = -(-block_threads // max_raking)  # ceil: items each raking thread reduces
    return -(-block_threads // segment)  # ceil: raking threads with data


# magictoken.raking_threads.end


# magictoken.authoritative_state.begin
@statefn.stateful(np.float64)
def running_max(state, block_aggregate):
    prefix = state[0]
    if block_aggregate > prefix:
        state[0] = block_aggregate
    return prefix


@cuda.jit
def row_running_max(src, dst, row_max):
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.float64)
    state[0] = -np.inf  # the identity of max, in every thread
    items = cuda.local.array(4, np.float64)
    for base in block.tiles(src.shape[1], items):
        block.load(src[row], base, items, oob_default=-np.inf)
        block.inclusive_scan(items, items, scan_op="max", prefix_op=running_max, prefix_state=state)
        block.store(dst[row], base, items)
    if cuda.threadIdx.x == 0:  # thread 0 holds the authoritative state
        row_max[row] = state[0]


# magictoken.authoritative_state.end


def run_running_max(rows: int = 2, cols: int = 600) -> list[tuple[Any, Any]]:
    """Launch ``row_running_max`` with 64 threads; return (got, NumPy's) pairs."""
    rng = np.random.default_rng(1)
    src = rng.standard_normal((rows, cols))
    dst = np.zeros_like(src)
    row_max = np.zeros(rows)
    row_running_max[rows, 64](src, dst, row_max)
    return [(dst, np.maximum.accumulate(src, axis=1)), (row_max, src.max(axis=1))]


@cuda.jit
def per_tile_totals(src, tile_totals):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for base in block.tiles(src.shape[0], items):
        block.load(src, base, items)
        # magictoken.guarded_side_effect.begin
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
            # once per tile, from the authoritative state
            tile_totals[base // block.tile_size(items)] = state[0]
        # magictoken.guarded_side_effect.end


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def run_per_tile_totals() -> tuple[Any, Any]:
    """Launch ``per_tile_totals`` with 32 threads; return (totals, expected totals)."""
    src = np.arange(256, dtype=np.int32)
    totals = np.zeros(4, dtype=np.int64)
    per_tile_totals[1, 32](src, totals)
    return totals, np.cumsum(src.reshape(4, 64).sum(axis=1))
