# SPDX-License-Identifier: Apache-2.0
"""Warp tile I/O (``scan.warp.load`` / ``scan.warp.store``) against NumPy.

Each logical warp of ``lanes`` threads moves its own tile
``src[offset : offset + lanes * ipt]``: lane ``l`` holds tile items
``l * ipt + i`` (``"vectorize"``, ``"direct"``) or ``i * lanes + l``
(``"striped"``); only the items before ``min(len - offset, valid_items)`` move.
Loads give the others ``oob_default``, or leave them as they were without it;
stores leave the array's other items alone. Warp ``w`` works on row
``rows[w]`` of a 2-D array from offset ``offsets[w]``, so warps read rows of
their own or tiles of their own of one row. The tests marked ``sanitize`` run
under compute-sanitizer in tools/gpu_suite.sh.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from scan import PlanError, warp

pytestmark = pytest.mark.sim

ALGORITHMS = ["vectorize", "direct", "striped"]
#: What items and untouched array items hold before a call.
SENTINEL = -7


@functools.cache
def load_kernel(dtype: str, ipt: int, lanes: int, algorithm: str, oob: bool, valid: bool) -> Any:
    """Warp ``w`` loads row ``rows[w]`` from ``offsets[w]``; ``out[rank]`` gets the lane's items.

    The items start as ``out[rank]`` (the sentinel), so those not loaded show.
    """
    value = np.dtype(dtype)
    IPT, LANES, ALG = ipt, lanes, algorithm

    def kernel(src: Any, rows: Any, offsets: Any, valid_items: Any, oob_value: Any, out: Any):
        rank = cuda.threadIdx.x
        w = rank // LANES
        items = cuda.local.array(IPT, value)
        for i in range(IPT):
            items[i] = out[rank, i]
        row = src[rows[w]]
        if oob and valid:
            warp.load(
                row, offsets[w], items, valid_items=valid_items[w], oob_default=oob_value[0],
                algorithm=ALG, lanes=LANES,
            )  # fmt: skip
        elif oob:
            warp.load(row, offsets[w], items, oob_default=oob_value[0], algorithm=ALG, lanes=LANES)
        elif valid:
            warp.load(
                row, offsets[w], items, valid_items=valid_items[w], algorithm=ALG, lanes=LANES
            )
        else:
            warp.load(row, offsets[w], items, algorithm=ALG, lanes=LANES)
        for i in range(IPT):
            out[rank, i] = items[i]

    return cuda.jit(kernel)


@functools.cache
def store_kernel(dtype: str, ipt: int, lanes: int, algorithm: str, valid: bool) -> Any:
    """Warp ``w`` stores its lanes' items ``vals[rank]`` to row ``rows[w]`` from ``offsets[w]``."""
    value = np.dtype(dtype)
    IPT, LANES, ALG = ipt, lanes, algorithm

    def kernel(vals: Any, rows: Any, offsets: Any, valid_items: Any, dst: Any):
        rank = cuda.threadIdx.x
        w = rank // LANES
        items = cuda.local.array(IPT, value)
        for i in range(IPT):
            items[i] = vals[rank, i]
        row = dst[rows[w]]
        if valid:
            warp.store(
                row, offsets[w], items, valid_items=valid_items[w], algorithm=ALG, lanes=LANES
            )
        else:
            warp.store(row, offsets[w], items, algorithm=ALG, lanes=LANES)

    return cuda.jit(kernel)


def positions(algorithm: str, lanes: int, ipt: int, lane: int) -> list[int]:
    """The tile items lane `lane` holds, in item order."""
    if algorithm == "striped":
        return [i * lanes + lane for i in range(ipt)]
    return [lane * ipt + i for i in range(ipt)]


def valid_counts(src: np.ndarray, rows, offsets, valid_items) -> list[int]:
    n = src.shape[1]
    return [
        n - offsets[w] if valid_items is None else min(n - offsets[w], valid_items[w])
        for w in range(len(offsets))
    ]


def values(dtype: str, shape: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def check_load(
    dtype: str,
    ipt: int,
    lanes: int,
    algorithm: str,
    src: np.ndarray,
    rows: list[int],
    offsets: list[int],
    valid_items: list[int] | None = None,
    oob: Any = None,
) -> np.ndarray:
    """Run `load_kernel` with one warp per offset; compare every lane's items with NumPy's."""
    warps = len(offsets)
    threads = warps * lanes
    out = np.full((threads, ipt), SENTINEL, dtype=dtype)
    kernel = load_kernel(dtype, ipt, lanes, algorithm, oob is not None, valid_items is not None)
    kernel[1, threads](
        src,
        np.array(rows, np.int32),
        np.array(offsets, np.int64),
        np.array(valid_items if valid_items is not None else [0] * warps, np.int64),
        np.array([0 if oob is None else oob], dtype=dtype),
        out,
    )
    want = np.full_like(out, SENTINEL if oob is None else oob)
    valid = valid_counts(src, rows, offsets, valid_items)
    for w in range(warps):
        for lane in range(lanes):
            for i, pos in enumerate(positions(algorithm, lanes, ipt, lane)):
                if pos < valid[w]:
                    want[w * lanes + lane, i] = src[rows[w], offsets[w] + pos]
    np.testing.assert_array_equal(out, want)
    return out


def check_store(
    dtype: str,
    ipt: int,
    lanes: int,
    algorithm: str,
    shape: tuple[int, int],
    rows: list[int],
    offsets: list[int],
    valid_items: list[int] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Run `store_kernel` with one warp per offset; compare the array with NumPy's."""
    warps = len(offsets)
    threads = warps * lanes
    vals = values(dtype, (threads, ipt), seed)
    dst = np.full(shape, SENTINEL, dtype=dtype)
    store_kernel(dtype, ipt, lanes, algorithm, valid_items is not None)[1, threads](
        vals,
        np.array(rows, np.int32),
        np.array(offsets, np.int64),
        np.array(valid_items if valid_items is not None else [0] * warps, np.int64),
        dst,
    )
    want = np.full(shape, SENTINEL, dtype=dtype)
    valid = valid_counts(want, rows, offsets, valid_items)
    for w in range(warps):
        for lane in range(lanes):
            for i, pos in enumerate(positions(algorithm, lanes, ipt, lane)):
                if pos < valid[w]:
                    want[rows[w], offsets[w] + pos] = vals[w * lanes + lane, i]
    np.testing.assert_array_equal(dst, want)
    return dst


# ---------------------------------------------------------------- one row per warp


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("lanes", [1, 4, 32])
@pytest.mark.parametrize("ipt", [1, 3, 4])
def test_load_rows(algorithm: str, lanes: int, ipt: int) -> None:
    # three warps, a row each, from different offsets: a full tile, a tile
    # that runs past the row's end (a full one for a tile of 1), and one that
    # starts at the row's last item
    tile = lanes * ipt
    cols = 2 * tile + 1
    offsets = [0, min(tile + 3, cols - 1), cols - 1]
    src = values("int32", (3, cols), lanes * 10 + ipt)
    check_load("int32", ipt, lanes, algorithm, src, [0, 1, 2], offsets)
    check_load("int32", ipt, lanes, algorithm, src, [0, 1, 2], offsets, oob=-1)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("lanes", [1, 4, 32])
@pytest.mark.parametrize("ipt", [1, 3, 4])
def test_store_rows(algorithm: str, lanes: int, ipt: int) -> None:
    tile = lanes * ipt
    cols = 2 * tile + 1
    offsets = [0, min(tile + 3, cols - 1), cols - 1]
    check_store("int32", ipt, lanes, algorithm, (3, cols), [0, 1, 2], offsets)


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_rows_shorter_than_a_warp_tile(algorithm: str) -> None:
    # rows of 50 items, tiles of 32 x 3: every warp's tile is partial
    src = values("float64", (4, 50), 1)
    check_load("float64", 3, 32, algorithm, src, [2, 0, 3, 1], [0, 0, 0, 0])
    check_load("float64", 3, 32, algorithm, src, [2, 0, 3, 1], [0, 0, 0, 0], oob=-1.5)
    check_store("float64", 3, 32, algorithm, (4, 50), [2, 0, 3, 1], [0, 0, 0, 0])


# ---------------------------------------------------------------- one 1-D array, a tile per warp


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", ["int8", "int32", "float64"])
def test_tiles_of_one_array(algorithm: str, dtype: str) -> None:
    # 4 warps of 8 lanes x 4 items: tiles of 32 from 32 * w, in a row of 120 (the last partial)
    src = values(dtype, (1, 120), 3)
    offsets = [32 * w for w in range(4)]
    check_load(dtype, 4, 8, algorithm, src, [0] * 4, offsets)
    check_load(dtype, 4, 8, algorithm, src, [0] * 4, offsets, oob=5)
    check_store(dtype, 4, 8, algorithm, (1, 120), [0] * 4, offsets)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_tiles_in_any_order_at_odd_offsets(algorithm: str) -> None:
    # the warps' tiles in reverse order, none aligned for vector accesses
    src = values("int32", (1, 3 + 4 * 16), 4)
    offsets = [3 + 16 * (3 - w) for w in range(4)]
    check_load("int32", 4, 4, algorithm, src, [0] * 4, offsets)
    check_store("int32", 4, 4, algorithm, (1, 3 + 4 * 16), [0] * 4, offsets)


# ---------------------------------------------------------------- valid_items and oob_default


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_valid_items_per_warp(algorithm: str) -> None:
    # valid_items below, at and above the tile, 0, and past the row's end
    src = values("int32", (5, 100), 6)
    rows = [0, 1, 2, 3, 4]
    offsets = [0, 4, 0, 10, 70]
    valid = [17, 64, 200, 0, 40]
    check_load("int32", 4, 16, algorithm, src, rows, offsets, valid)
    check_load("int32", 4, 16, algorithm, src, rows, offsets, valid, oob=-1)
    check_store("int32", 4, 16, algorithm, (5, 100), rows, offsets, valid)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_without_oob_default_items_keep_their_values(algorithm: str) -> None:
    src = values("int32", (1, 40), 7)
    out = check_load("int32", 2, 32, algorithm, src, [0], [0])
    assert (out == SENTINEL).sum() == 64 - 40
    out = check_load("int32", 2, 32, algorithm, src, [0], [0], oob=0)
    assert (out == SENTINEL).sum() == 0
    assert (out == 0).sum() >= 64 - 40


def test_an_empty_tile_moves_nothing() -> None:
    src = values("int32", (2, 32), 8)
    out = check_load("int32", 4, 8, "direct", src, [0, 1], [32, 0], [0, 0])
    assert (out == SENTINEL).all()
    dst = check_store("int32", 4, 8, "direct", (2, 32), [0, 1], [32, 0], [0, 0])
    assert (dst == SENTINEL).all()


# ---------------------------------------------------------------- records

PAIR = np.dtype([("c", np.float64), ("g", np.float64)])


@functools.cache
def record_round_trip(ipt: int, lanes: int, algorithm: str) -> Any:
    """Warp ``w`` loads row ``w`` with oob_default (0, -1), stores it back to ``dst``'s row ``w``.

    The items, field by field, go to ``out_c`` and ``out_g``.
    """
    IPT, LANES, ALG = ipt, lanes, algorithm

    def kernel(src: Any, dst: Any, out_c: Any, out_g: Any) -> None:
        rank = cuda.threadIdx.x
        w = rank // LANES
        items = cuda.local.array(IPT, PAIR)
        warp.load(src[w], 0, items, oob_default=(0.0, -1.0), algorithm=ALG, lanes=LANES)
        warp.store(dst[w], 0, items, algorithm=ALG, lanes=LANES)
        for i in range(IPT):
            out_c[rank, i] = items[i].c
            out_g[rank, i] = items[i].g

    return cuda.jit(kernel)


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(("lanes", "ipt", "cols"), [(4, 3, 12), (4, 2, 11), (32, 2, 50), (1, 4, 3)])
def test_record_round_trip(algorithm: str, lanes: int, ipt: int, cols: int) -> None:
    warps = 2
    rng = np.random.default_rng(cols)
    src = np.zeros((warps, cols), PAIR)
    src["c"] = rng.standard_normal((warps, cols))
    src["g"] = rng.standard_normal((warps, cols))
    dst = np.zeros_like(src)
    dst["c"] = SENTINEL
    out_c = np.zeros((warps * lanes, ipt))
    out_g = np.zeros((warps * lanes, ipt))
    record_round_trip(ipt, lanes, algorithm)[1, warps * lanes](src, dst, out_c, out_g)
    tile = lanes * ipt
    want_dst = src.copy()
    want_dst[:, tile:]["c"] = SENTINEL
    want_dst[:, tile:]["g"] = 0
    np.testing.assert_array_equal(dst, want_dst)
    for w in range(warps):
        for lane in range(lanes):
            for i, pos in enumerate(positions(algorithm, lanes, ipt, lane)):
                c, g = (src[w, pos]["c"], src[w, pos]["g"]) if pos < cols else (0.0, -1.0)
                assert (out_c[w * lanes + lane, i], out_g[w * lanes + lane, i]) == (c, g)


# ---------------------------------------------------------------- properties


@settings(deadline=None)
@given(
    direction=st.sampled_from(["load", "store"]),
    dtype=st.sampled_from(["int8", "int32", "float64"]),
    algorithm=st.sampled_from(ALGORITHMS),
    lanes=st.sampled_from([1, 2, 4, 8, 16, 32]),
    ipt=st.integers(1, 4),
    data=st.data(),
)
def test_matches_numpy(
    direction: str, dtype: str, algorithm: str, lanes: int, ipt: int, data: Any
) -> None:
    warps = data.draw(st.integers(1, max(1, min(4, 64 // lanes))), label="warps")
    tile = lanes * ipt
    cols = data.draw(st.integers(1, 2 * tile + 5), label="cols")
    offsets = data.draw(st.lists(st.integers(0, cols), min_size=warps, max_size=warps))
    use_valid = data.draw(st.booleans(), label="valid_items")
    valid = (
        data.draw(st.lists(st.integers(0, tile + 2), min_size=warps, max_size=warps))
        if use_valid
        else None
    )
    rows = list(range(warps))  # a row per warp: the warps' tiles never overlap
    if direction == "load":
        src = values(dtype, (warps, cols), cols)
        oob = data.draw(st.sampled_from([None, 0, 9]), label="oob_default")
        check_load(dtype, ipt, lanes, algorithm, src, rows, offsets, valid, oob)
    else:
        check_store(dtype, ipt, lanes, algorithm, (warps, cols), rows, offsets, valid, cols)


# ---------------------------------------------------------------- refusals


@cuda.jit
def lanes_32_in_48_threads(src: Any) -> None:
    items = cuda.local.array(2, np.int32)
    warp.load(src, 0, items)


@pytest.mark.sim_only
def test_a_block_must_hold_whole_logical_warps() -> None:
    with pytest.raises(PlanError, match="not a multiple of lanes=32"):
        lanes_32_in_48_threads[1, 48](np.zeros(96, np.int32))
