# SPDX-License-Identifier: Apache-2.0
"""Record values and state: the three worked programs of docs/records.md.

Each ``run_*`` function launches its kernel (in the simulator or on a GPU)
and returns the result with a NumPy reference. The segmented sum and the
recurrence load their records from one array per field and store one field
(zipped tile I/O).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import block

THREADS = 32
ITEMS = 4

# magictoken.segmented.begin
# a segment starts at every item whose flag is set
seg = np.dtype([("flag", np.int32), ("value", np.float32)], align=True)


def segmented_add(a, b):
    if b.flag:  # b starts a segment: what came before does not count
        return (1, b.value)
    return (a.flag, a.value + b.value)


@statefn.stateful(seg)
def carry_segment(state, block_aggregate):
    prefix = (state[0].flag, state[0].value)
    if block_aggregate.flag:
        state[0].value = block_aggregate.value
        state[0].flag = 1
    else:
        state[0].value = prefix[1] + block_aggregate.value
    return prefix


@cuda.jit
def segmented_sum(flags, values, out):
    row = cuda.blockIdx.x
    state = cuda.local.array(1, seg)
    state[0].flag = 0
    state[0].value = 0.0
    items = cuda.local.array(ITEMS, seg)
    for base in block.tiles(values.shape[1], items):
        # each field from its own array: flags (int32) and values (float32)
        block.load((flags[row], values[row]), base, items, oob_default=(0, 0.0))
        block.inclusive_scan(
            items, items, scan_op=segmented_add, prefix_op=carry_segment, prefix_state=state
        )
        block.store(out[row], base, items, field="value")  # the sums only


# magictoken.segmented.end


def run_segmented(rows: int = 2, cols: int = 300, seed: int = 0) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    flags = (rng.random((rows, cols)) < 0.05).astype(np.int32)
    values = rng.integers(-5, 6, (rows, cols)).astype(np.float32)
    out = np.zeros((rows, cols), np.float32)
    segmented_sum[rows, THREADS](flags, values, out)
    expected = np.zeros((rows, cols), np.float64)
    for r in range(rows):
        total = 0.0
        for c in range(cols):
            total = values[r, c] + (0.0 if flags[r, c] else total)
            expected[r, c] = total
    return out, expected


# magictoken.argmax.begin
vi = np.dtype([("value", np.float32), ("pos", np.int32)], align=True)


def larger(a, b):  # the first of equal maxima wins
    return b if b.value > a.value else a


@statefn.stateful(vi)
def running_max(state, block_aggregate):
    prefix = (state[0].value, state[0].pos)
    if block_aggregate.value > prefix[0]:
        state[0].value = block_aggregate.value
        state[0].pos = block_aggregate.pos
    return prefix


@cuda.jit
def running_argmax(src, where):
    row = cuda.blockIdx.x
    rank = cuda.threadIdx.x
    state = cuda.local.array(1, vi)
    state[0].value = -np.inf
    state[0].pos = -1
    values = cuda.local.array(ITEMS, np.float32)
    items = cuda.local.array(ITEMS, vi)
    indices = cuda.local.array(ITEMS, np.int32)
    for base in block.tiles(src.shape[1], values):
        block.load(src[row], base, values, oob_default=-np.inf)
        for i in range(ITEMS):  # zip the values with their column into records
            items[i].value = values[i]
            items[i].pos = base + rank * ITEMS + i
        block.inclusive_scan(
            items, items, scan_op=larger, prefix_op=running_max, prefix_state=state
        )
        for i in range(ITEMS):
            indices[i] = items[i].pos
        block.store(where[row], base, indices)


# magictoken.argmax.end


def run_argmax(rows: int = 2, cols: int = 300, seed: int = 0) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 50, (rows, cols)).astype(np.float32)
    where = np.zeros((rows, cols), np.int32)
    running_argmax[rows, THREADS](src, where)
    expected = np.zeros_like(where)
    for r in range(rows):
        best = 0
        for c in range(cols):
            best = c if src[r, c] > src[r, best] else best
            expected[r, c] = best
    return where, expected


# magictoken.recurrence.begin
# h[t] = a[t] * h[t-1] + b[t]: each item is the affine map h -> a * h + b
pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def compose(x, y):  # x first, then y
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateful(pair)
def carry_map(state, block_aggregate):
    prefix = (state[0].a, state[0].b)
    state[0].a = prefix[0] * block_aggregate.a
    state[0].b = block_aggregate.a * prefix[1] + block_aggregate.b
    return prefix


@cuda.jit
def selective_scan(a, b, h):
    row = cuda.blockIdx.x
    state = cuda.local.array(1, pair)
    state[0].a = 1.0  # the identity map: h[-1] = 0
    state[0].b = 0.0
    items = cuda.local.array(ITEMS, pair)
    for base in block.tiles(a.shape[1], items):
        block.load((a[row], b[row]), base, items, oob_default=(1.0, 0.0))
        block.inclusive_scan(items, items, scan_op=compose, prefix_op=carry_map, prefix_state=state)
        block.store(h[row], base, items, field="b")  # h[t] is the b field


# magictoken.recurrence.end


#: float32 against the float64 sequential reference: every h[t] within this
#: fraction of the row's largest |h| (a in [0.9, 1), b standard normal).
RECURRENCE_TOLERANCE = 1e-4


def run_recurrence(rows: int = 2, cols: int = 1000, seed: int = 0) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.9, 1.0, (rows, cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    h = np.zeros((rows, cols), np.float32)
    selective_scan[rows, THREADS](a, b, h)
    expected = np.zeros((rows, cols), np.float64)
    state = np.zeros(rows)
    for t in range(cols):
        state = a[:, t].astype(np.float64) * state + b[:, t]
        expected[:, t] = state
    return h, expected
