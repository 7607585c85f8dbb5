# SPDX-License-Identifier: Apache-2.0
"""Warp scans (``scan.warp``) against NumPy, in the simulator and on a GPU.

Each logical warp of ``lanes`` threads scans its own tile (lane ``l`` holds
items ``l * ipt`` to ``(l + 1) * ipt - 1``), seeded by ``initial_value=`` or
by a prefix callback that every lane calls with the warp aggregate and whose
lane-0 return counts. Rows walked one per warp carry their prefix through a
stateful callback; warps run different numbers of scans. The tests marked
``sanitize`` run under compute-sanitizer in tools/gpu_suite.sh.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

import statefn
from scan import StateContractError, block, warp

pytestmark = pytest.mark.sim
ON_GPU = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"


@statefn.stateful(np.int64)
def running_total(state: Any, warp_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + warp_aggregate
    return prefix


@cuda.jit(device=True)
def first_wins(a: Any, b: Any) -> Any:
    # not commutative: the result depends on the order the operands come in
    return a


_NP = {"+": np.add, "max": np.maximum, "min": np.minimum, "^": np.bitwise_xor}


@functools.cache
def tile_kernel(
    dtype: str, ipt: int, lanes: int, mode: str, op: str, seeded: bool, aggregate: bool
) -> Any:
    """One tile per logical warp: every lane's results and the warp aggregate."""
    value = np.dtype(dtype)
    IPT, MODE, LANES = ipt, mode, lanes
    OP = first_wins if op == "first" else op
    if ipt == 0:

        def kernel(src: Any, dst: Any, agg: Any) -> None:
            rank = cuda.threadIdx.x
            total = cuda.local.array(1, value)
            x = src[rank]
            if seeded and aggregate:
                r = warp.scan(
                    x, mode=MODE, scan_op=OP, initial_value=7, warp_aggregate=total, lanes=LANES
                )
            elif seeded:
                r = warp.scan(x, mode=MODE, scan_op=OP, initial_value=7, lanes=LANES)
            elif aggregate:
                r = warp.scan(x, mode=MODE, scan_op=OP, warp_aggregate=total, lanes=LANES)
            else:
                r = warp.scan(x, mode=MODE, scan_op=OP, lanes=LANES)
            dst[rank] = r
            if aggregate:
                agg[rank] = total[0]

    else:

        def kernel(src: Any, dst: Any, agg: Any) -> None:
            rank = cuda.threadIdx.x
            total = cuda.local.array(1, value)
            items = cuda.local.array(IPT, value)
            for i in range(IPT):
                items[i] = src[rank * IPT + i]
            if seeded and aggregate:
                warp.scan(
                    items, mode=MODE, scan_op=OP, initial_value=7, warp_aggregate=total,
                    lanes=LANES,
                )  # fmt: skip
            elif seeded:
                warp.scan(items, mode=MODE, scan_op=OP, initial_value=7, lanes=LANES)
            elif aggregate:
                warp.scan(items, mode=MODE, scan_op=OP, warp_aggregate=total, lanes=LANES)
            else:
                warp.scan(items, mode=MODE, scan_op=OP, lanes=LANES)
            for i in range(IPT):
                dst[rank * IPT + i] = items[i]
            if aggregate:
                agg[rank] = total[0]

    return cuda.jit(kernel)


def reference(tile: np.ndarray, mode: str, op: str, seed: Any) -> tuple[np.ndarray, Any]:
    """The forward scan of one warp's `tile` and its aggregate."""
    combine = (lambda a, b: a) if op == "first" else _NP[op]
    out = np.empty_like(tile)
    acc = None if seed is None else tile.dtype.type(seed)
    with np.errstate(all="ignore"):
        for k in range(len(tile)):
            if mode == "inclusive":
                acc = tile[k] if acc is None else combine(acc, tile[k])
                out[k] = acc
            else:
                out[k] = acc if acc is not None else 0
                acc = tile[k] if acc is None else combine(acc, tile[k])
        total = tile[0]
        for x in tile[1:]:
            total = combine(total, x)
    return out, total


@settings(deadline=None)
@given(
    dtype=st.sampled_from(["int32", "int64", "uint8", "float64"]),
    lanes=st.sampled_from([1, 2, 8, 16, 32]),
    warps=st.sampled_from([1, 2, 3]),
    ipt=st.sampled_from([0, 1, 3, 4]),
    mode=st.sampled_from(["inclusive", "exclusive"]),
    op=st.sampled_from(["+", "max", "min", "^", "first"]),
    seeded=st.booleans(),
    aggregate=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_tile_matches_numpy(
    dtype: str,
    lanes: int,
    warps: int,
    ipt: int,
    mode: str,
    op: str,
    seeded: bool,
    aggregate: bool,
    seed: int,
) -> None:
    if np.dtype(dtype).kind == "f" and op == "^":
        op = "max"
    if mode == "exclusive" and op != "+":
        seeded = True  # an exclusive scan with another operator needs a seed
    threads = lanes * warps
    rng = np.random.default_rng(seed)
    n = threads * max(ipt, 1)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is None:
        src = rng.integers(-40, 40, n).astype(dtype)  # exact sums in float64
    else:
        src = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    dst = np.zeros_like(src)
    agg = np.zeros(threads, dtype=dtype)
    tile_kernel(dtype, ipt, lanes, mode, op, seeded, aggregate)[1, threads](src, dst, agg)
    per_warp = lanes * max(ipt, 1)
    for w in range(warps):
        tile = slice(w * per_warp, (w + 1) * per_warp)
        want, total = reference(src[tile], mode, op, 7 if seeded else None)
        np.testing.assert_array_equal(dst[tile], want)
        if aggregate:
            np.testing.assert_array_equal(agg[w * lanes : (w + 1) * lanes], total)


ITEMS = 4


@cuda.jit
def rows_per_warp(src: Any, dst: Any) -> None:
    """Row ``warp`` of the block's rows, tile by tile, one logical warp of 32 lanes each."""
    lane = cuda.threadIdx.x % 32
    row = cuda.blockIdx.x * (cuda.blockDim.x // 32) + cuda.threadIdx.x // 32
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    if row < src.shape[0]:  # whole warps leave together
        n = src.shape[1]
        for base in range(0, n, 32 * ITEMS):
            for i in range(ITEMS):
                j = base + lane * ITEMS + i
                items[i] = src[row, j] if j < n else 0
            warp.exclusive_sum(items, prefix_op=running_total, prefix_state=state)
            for i in range(ITEMS):
                j = base + lane * ITEMS + i
                if j < n:
                    dst[row, j] = items[i]


@pytest.mark.sanitize
@pytest.mark.parametrize("cols", [1, 31, 32, 129, 300] + ([4096] if ON_GPU else []))
def test_rows_per_warp(cols: int) -> None:
    # 5 rows on blocks of 2 warps: the last block's second warp has no row
    rows = 5
    src = np.random.default_rng(cols).integers(-1000, 1000, (rows, cols)).astype(np.int32)
    dst = np.zeros_like(src)
    rows_per_warp[3, 64](src, dst)
    want = np.cumsum(src, axis=1, dtype=np.int64) - src
    np.testing.assert_array_equal(dst, want.astype(np.int32))


PAIR = np.dtype([("c", np.float64), ("g", np.float64)])


@cuda.jit(device=True)
def compose(x: Any, y: Any) -> Any:
    # y after x: h -> y.c * (x.c * h + x.g) + y.g
    return (x[0] * y[0], y[0] * x[1] + y[1])


@statefn.stateful(PAIR)
def carried_map(state: Any, warp_aggregate: Any) -> Any:
    before = (state[0].c, state[0].g)  # every earlier tile of the row, composed
    state[0].c = before[0] * warp_aggregate.c
    state[0].g = warp_aggregate.c * before[1] + warp_aggregate.g
    return before


@cuda.jit
def recurrence_per_warp(a: Any, b: Any, h: Any) -> None:
    """h[t] = a[t] * h[t-1] + b[t] along each row, one row per logical warp of 16 lanes."""
    lane = cuda.threadIdx.x % 16
    row = cuda.blockIdx.x * (cuda.blockDim.x // 16) + cuda.threadIdx.x // 16
    state = cuda.local.array(1, PAIR)
    state[0].c = 1.0  # the identity map
    state[0].g = 0.0
    items = cuda.local.array(2, PAIR)
    n = a.shape[1]
    for base in range(0, n, 16 * 2):
        for i in range(2):
            t = base + lane * 2 + i
            if t < n:
                items[i].c = a[row, t]
                items[i].g = b[row, t]
            else:
                items[i].c = 1.0
                items[i].g = 0.0
        warp.inclusive_scan(
            items, scan_op=compose, prefix_op=carried_map, prefix_state=state, lanes=16
        )
        for i in range(2):
            t = base + lane * 2 + i
            if t < n:
                h[row, t] = items[i].g  # the composed map applied to h[-1] = 0


@pytest.mark.sanitize
def test_record_recurrence_per_warp() -> None:
    rows, n = 4, 77
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 1.0, (rows, n))
    b = rng.standard_normal((rows, n))
    h = np.zeros((rows, n))
    recurrence_per_warp[2, 32](a, b, h)
    want = np.zeros((rows, n))
    for r in range(rows):
        acc = 0.0
        for t in range(n):
            acc = a[r, t] * acc + b[r, t]
            want[r, t] = acc
    np.testing.assert_allclose(h, want, rtol=1e-12, atol=1e-12)


@cuda.jit
def uneven_warps(src: Any, dst: Any, counts: Any) -> None:
    """Warp w scans w + 1 tiles of 8 lanes x 2 items; the others wait at no barrier."""
    lane = cuda.threadIdx.x % 8
    w = cuda.threadIdx.x // 8
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for t in range(w + 1):
        for i in range(2):
            items[i] = src[w, t * 16 + lane * 2 + i]
        warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state, lanes=8)
        for i in range(2):
            dst[w, t * 16 + lane * 2 + i] = items[i]
    if lane == 0:
        counts[w] = state[0]


@pytest.mark.sanitize
def test_warps_make_different_numbers_of_scans() -> None:
    warps = 4
    src = np.random.default_rng(2).integers(-50, 50, (warps, 16 * warps)).astype(np.int32)
    dst = np.zeros_like(src)
    counts = np.zeros(warps, np.int64)
    uneven_warps[1, 8 * warps](src, dst, counts)
    for w in range(warps):
        done = 16 * (w + 1)
        np.testing.assert_array_equal(dst[w, :done], np.cumsum(src[w, :done]))
        np.testing.assert_array_equal(dst[w, done:], 0)
        assert counts[w] == src[w, :done].sum()


@cuda.jit
def block_then_warp(src: Any, dst: Any, totals: Any) -> None:
    """A block scan of the tile, then a warp scan of its results: the two kinds interleave."""
    items = cuda.local.array(2, np.int32)
    total = cuda.local.array(1, np.int32)
    for i in range(2):
        items[i] = src[cuda.threadIdx.x * 2 + i]
    block.inclusive_sum(items)
    warp.inclusive_sum(items, warp_aggregate=total)
    for i in range(2):
        dst[cuda.threadIdx.x * 2 + i] = items[i]
    totals[cuda.threadIdx.x] = total[0]


def test_block_and_warp_scans_interleave() -> None:
    src = np.random.default_rng(3).integers(-9, 9, 128).astype(np.int32)
    dst = np.zeros_like(src)
    totals = np.zeros(64, np.int32)
    block_then_warp[1, 64](src, dst, totals)
    once = np.cumsum(src)
    for w in range(2):
        tile = slice(w * 64, (w + 1) * 64)
        np.testing.assert_array_equal(dst[tile], np.cumsum(once[tile]))
        np.testing.assert_array_equal(totals[w * 32 : (w + 1) * 32], once[tile].sum())


# ---------------------------------------------------------------- the contract, in the simulator


@cuda.jit
def state_differs(dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = cuda.threadIdx.x % 32  # lane 0 holds 0, lane 1 holds 1, ...
    items = cuda.local.array(1, np.int32)
    items[0] = 1
    warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
    dst[cuda.threadIdx.x] = items[0]


@pytest.mark.sim_only
def test_state_must_be_equal_in_every_lane() -> None:
    with pytest.raises(StateContractError, match=r"prefix_state differs between the threads"):
        state_differs[1, 64](np.zeros(64, np.int32))


@cuda.jit
def half_a_warp(dst: Any) -> None:
    x = np.int32(cuda.threadIdx.x)
    if cuda.threadIdx.x % 32 < 16:
        x = warp.inclusive_sum(x)
    dst[cuda.threadIdx.x] = x


@pytest.mark.sim_only
def test_every_lane_of_a_warp_must_call() -> None:
    with pytest.raises(RuntimeError, match=r"every lane of a logical warp \(32 threads from"):
        half_a_warp[1, 32](np.zeros(32, np.int32))


@cuda.jit
def lanes_disagree(dst: Any) -> None:
    x = np.int32(1)
    x = warp.exclusive_scan(x, scan_op="max", initial_value=cuda.threadIdx.x, lanes=8)
    dst[cuda.threadIdx.x] = x


@pytest.mark.sim_only
def test_initial_value_must_be_equal_in_every_lane() -> None:
    with pytest.raises(StateContractError, match="initial_value differs between the lanes"):
        lanes_disagree[1, 8](np.zeros(8, np.int32))


@cuda.jit
def forgot_oob_default(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in range(0, src.shape[0], 128):
        warp.load(src, base, items)  # the partial tile keeps the first tile's items
        warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
        warp.store(dst, base, items)


@pytest.mark.sim_only
def test_a_partial_tile_loaded_without_a_default_is_refused() -> None:
    src = np.ones(200, np.int32)
    with pytest.raises(StateContractError, match=r"left over from an earlier tile.*to warp\.load"):
        forgot_oob_default[1, 32](src, np.zeros_like(src))
