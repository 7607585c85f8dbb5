# SPDX-License-Identifier: Apache-2.0
"""Reverse scans: suffix sums and a backward recurrence, tile by tile from the row's end
(docs/reverse.md)."""

from __future__ import annotations

import math
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
    # tiles aligned at the row's start, walked from its last (partial) tile on;
    # items past the row's end are 0, the identity, so they add nothing
    for base in block.tiles(row.shape[0], items, reverse=True):
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
    for base in block.tiles(n, items, reverse=True):
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


# magictoken.reverse_selective.begin
# one channel a row: h[t] = exp(delta[t] * A) * h[t-1] + delta[t] * B[t] * x[t],
# y[t] = C[t] * h[t]; given dy, dh[t] = C[t] * dy[t] + exp(delta[t+1] * A) * dh[t+1]
@cuda.jit(device=True)
def first_then(x, y):
    # a forward scan's operator, x first: h -> y.c * (x.c * h + x.g) + y.g
    return (y[0] * x[0], y[0] * x[1] + y[1])


@cuda.jit
def selective_backward(delta, A, B, C, x, dy, h, dx, ddelta):
    row, n = cuda.blockIdx.x, delta.shape[1]
    a = A[row]
    state = cuda.local.array(1, PAIR)
    items = cuda.local.array(2, PAIR)
    # forward, from the row's start: h[t] is the composed map of items 0..t
    # applied to h[-1] = 0; carried's state is every tile to the left
    state[0].c = 1.0
    state[0].g = 0.0
    for base in block.tiles(n, items):
        for i in range(2):
            t = base + cuda.threadIdx.x * 2 + i
            if t < n:
                items[i].c = math.exp(delta[row, t] * a)
                items[i].g = delta[row, t] * B[row, t] * x[row, t]
            else:
                items[i].c = 1.0
                items[i].g = 0.0
        block.inclusive_scan(items, scan_op=first_then, prefix_op=carried, prefix_state=state)
        for i in range(2):
            t = base + cuda.threadIdx.x * 2 + i
            if t < n:
                h[row, t] = items[i].g
    cuda.syncthreads()  # every h[t] stored before any thread reads h[t - 1]
    # backward, from the row's end, as in backward(): dh[t], then the gradients
    state[0].c = 1.0
    state[0].g = 0.0
    for base in block.tiles(n, items, reverse=True):
        for i in range(2):
            t = base + cuda.threadIdx.x * 2 + i
            if t < n:
                items[i].c = math.exp(delta[row, t + 1] * a) if t + 1 < n else 0.0
                items[i].g = C[row, t] * dy[row, t]
            else:
                items[i].c = 1.0
                items[i].g = 0.0
        block.inclusive_scan(
            items, scan_op=then, prefix_op=carried, prefix_state=state, reverse=True
        )
        for i in range(2):
            t = base + cuda.threadIdx.x * 2 + i
            if t < n:
                dh = items[i].g
                h_before = h[row, t - 1] if t > 0 else 0.0
                decay = math.exp(delta[row, t] * a)
                dx[row, t] = dh * delta[row, t] * B[row, t]
                ddelta[row, t] = dh * (a * decay * h_before + B[row, t] * x[row, t])


# magictoken.reverse_selective.end


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


def run_selective_backward(rows: int = 2, n: int = 700) -> tuple[Any, Any]:
    """Launch ``selective_backward`` with 64 threads, one block a row; return
    (h, dx, ddelta) stacked, and a float64 loop's."""
    rng = np.random.default_rng(2)
    delta = rng.uniform(0.01, 0.5, (rows, n))
    A = -rng.uniform(0.5, 2.0, rows)
    B, C, x, dy = rng.standard_normal((4, rows, n))
    h, dx, ddelta = (np.zeros((rows, n)) for _ in range(3))
    selective_backward[rows, 64](delta, A, B, C, x, dy, h, dx, ddelta)
    want = np.zeros((3, rows, n))
    for r in range(rows):
        before = 0.0
        for t in range(n):  # forward: h
            before = math.exp(delta[r, t] * A[r]) * before + delta[r, t] * B[r, t] * x[r, t]
            want[0, r, t] = before
        dh = 0.0
        for t in range(n - 1, -1, -1):  # backward: dh, then dx and ddelta
            after = math.exp(delta[r, t + 1] * A[r]) * dh if t + 1 < n else 0.0
            dh = C[r, t] * dy[r, t] + after
            h_before = want[0, r, t - 1] if t > 0 else 0.0
            decay = math.exp(delta[r, t] * A[r])
            want[1, r, t] = dh * delta[r, t] * B[r, t]
            want[2, r, t] = dh * (A[r] * decay * h_before + B[r, t] * x[r, t])
    return np.stack((h, dx, ddelta)), want
