# SPDX-License-Identifier: Apache-2.0
"""Reverse scans: suffix sums and a backward recurrence, tile by tile from the row's end
(docs/reverse.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import block


# magictoken.reverse_suffix.begin
@statefn.stateful(np.int64)
def suffix_total(state, block_aggregate):
    suffix = state[0]  # the sum of every tile to the right
    state[0] = suffix + block_aggregate
    return suffix


@cuda.jit
def row_suffix_sums(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0  # every thread initialises it equally
    items = cuda.local.array(4, np.int32)
    row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
    tile = block.tile_size(items)
    # tiles aligned at the row's start, walked from its last (partial) tile on;
    # items past the row's end are 0, the identity, so they add nothing
    for base in range((row.shape[0] - 1) // tile * tile, -1, -tile):
        block.load(row, base, items, oob_default=0)
        block.inclusive_sum(
            items, prefix_op=suffix_total, prefix_state=state, reverse=True
        )
        block.store(out, base, items)


# magictoken.reverse_suffix.end


# magictoken.reverse_recurrence.begin
# item t is the map h -> c * h + g of the recurrence h[t] = g[t] + a[t+1] * h[t+1]
PAIR = np.dtype([("c", np.float64), ("g", np.float64)])


@cuda.jit(device=True)
def then(x, y):
    # x after y: h -> x.c * (y.c * h + y.g) + x.g
    return (x[0] * y[0], x[0] * y[1] + x[1])


@statefn.stateful(PAIR)
def carried(state, block_aggregate):
    after = (state[0].c, state[0].g)  # every tile to the right, composed
    state[0].c = block_aggregate.c * after[0]
    state[0].g = block_aggregate.c * after[1] + block_aggregate.g
    return after


@cuda.jit
def backward(a, g, h):
    state = cuda.local.array(1, PAIR)
    state[0].c = 1.0  # the identity map: nothing to the right yet
    state[0].g = 0.0
    items = cuda.local.array(2, PAIR)
    n = g.shape[0]
    tile = block.tile_size(items)
    for base in range((n - 1) // tile * tile, -1, -tile):
        for i in range(2):
            t = base + cuda.threadIdx.x * 2 + i
            if t < n:
                items[i].c = a[t + 1] if t + 1 < n else 0.0
                items[i].g = g[t]
            else:  # past the row: the identity map
                items[i].c = 1.0
                items[i].g = 0.0
        block.inclusive_scan(
            items, scan_op=then, prefix_op=carried, prefix_state=state, reverse=True
        )
        for i in range(2):
            t = base + cuda.threadIdx.x * 2 + i
            if t < n:
                h[t] = items[i].g  # the composed map applied to h[n] = 0


# magictoken.reverse_recurrence.end


def run_suffix(rows: int = 2, cols: int = 1000) -> tuple[Any, Any]:
    """Launch ``row_suffix_sums`` with 64 threads; return (result, NumPy's)."""
    src = np.random.default_rng(0).integers(-50, 50, (rows, cols)).astype(np.int32)
    dst = np.zeros_like(src)
    row_suffix_sums[rows, 64](src, dst)
    return dst, np.cumsum(src[:, ::-1], axis=1)[:, ::-1].astype(np.int32)


def run_backward(n: int = 700) -> tuple[Any, Any]:
    """Launch ``backward`` with 64 threads; return (result, a float64 loop's)."""
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 1.0, n)
    g = rng.standard_normal(n)
    h = np.zeros(n)
    backward[1, 64](a, g, h)
    want = np.zeros(n)
    after = 0.0
    for t in range(n - 1, -1, -1):
        after = g[t] + (a[t + 1] * after if t + 1 < n else 0.0)
        want[t] = after
    return h, want
