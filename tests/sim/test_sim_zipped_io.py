# SPDX-License-Identifier: Apache-2.0
"""Zipped tile I/O against NumPy: record items from and to one array per field.

``block.load((a, b), base, items)`` fills the record items field by field;
``block.store(h, base, items, field="b")`` stores one field, a tuple of arrays
every field (or those ``field=`` names). The tile's valid items end at the
shortest array (and at ``valid_items=``); items past them get ``oob_default=``
or keep their values. Simulator, and unchanged on a GPU.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
from doc_examples.examples.records import carry_map, compose, pair
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from scan import block
from scan._errors import ScanError
from scan._vocab import IO_ALGORITHMS

pytestmark = pytest.mark.sim

PAIR = pair  # (a, b): the affine map h -> a * h + b
#: fields of three sizes, in an order that leaves padding between them
MIXED = np.dtype([("flag", np.int8), ("value", np.float64), ("n", np.int32)], align=True)
THREADS = 32
ITEMS = 4
TILE = THREADS * ITEMS
ALGORITHMS = [None, *IO_ALGORITHMS]


def _recurrence(algorithm):
    @cuda.jit
    def recurrence(a, b, h):
        row = cuda.blockIdx.x
        state = cuda.local.array(1, PAIR)
        state[0].a = 1.0
        state[0].b = 0.0
        items = cuda.local.array(ITEMS, PAIR)
        for base in range(0, a.shape[1], TILE):
            block.load((a[row], b[row]), base, items, oob_default=(1.0, 0.0), algorithm=algorithm)
            block.inclusive_scan(
                items, items, scan_op=compose, prefix_op=carry_map, prefix_state=state
            )
            block.store(h[row], base, items, field="b", algorithm=algorithm)

    return recurrence


def _inputs(rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.9, 1.0, (rows, cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    return a, b


def _reference(a, b):
    h = np.zeros(a.shape[0])
    out = np.zeros(a.shape)
    for t in range(a.shape[1]):
        h = a[:, t].astype(np.float64) * h + b[:, t]
        out[:, t] = h
    return out


# striped items are not in row order for a scan (the mixed case below loads them)
@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS if a != "striped"])
def test_recurrence_from_two_arrays(algorithm):
    a, b = _inputs(2, 3 * TILE + 37)
    h = np.full(a.shape, np.nan, np.float32)
    _recurrence(algorithm)[2, THREADS](a, b, h)
    want = _reference(a, b)
    scale = np.abs(want).max(axis=1, keepdims=True)
    assert np.all(np.abs(h - want) <= 1e-4 * scale)


@cuda.jit
def load_then_store(a, b, n, loaded, a_out, b_out, b_only):
    """One tile: the items loaded (kept per thread), stored back whole and one field."""
    items = cuda.local.array(ITEMS, PAIR)
    rank = cuda.threadIdx.x
    for i in range(ITEMS):
        items[i].a = -1.0
        items[i].b = -2.0
    block.load((a, b), 0, items, valid_items=n)
    for i in range(ITEMS):
        loaded[rank * ITEMS + i] = items[i]
    block.store((a_out, b_out), 0, items, valid_items=n)
    block.store(b_only, 0, items, field="b")


def test_the_shortest_array_ends_the_tile():
    a = np.arange(100, dtype=np.float32)
    b = np.arange(1000, 1000 + 90, dtype=np.float32)  # 10 shorter
    loaded = np.zeros(TILE, PAIR)
    a_out = np.zeros(TILE, np.float32)
    b_out = np.zeros(95, np.float32)  # a store's shortest array ends it too
    b_only = np.zeros(TILE, np.float32)
    load_then_store[1, THREADS](a, b, 200, loaded, a_out, b_out, b_only)
    np.testing.assert_array_equal(loaded["a"][:90], a[:90])
    np.testing.assert_array_equal(loaded["b"][:90], b)
    # past the valid range: the items as they were (no oob_default=)
    assert (loaded["a"][90:] == -1.0).all()
    assert (loaded["b"][90:] == -2.0).all()
    # the store's shortest array (95 items) ends its tile: items 90-94 are the kept ones
    np.testing.assert_array_equal(a_out[:90], a[:90])
    assert (a_out[90:95] == -1.0).all()
    assert (a_out[95:] == 0).all()
    np.testing.assert_array_equal(b_out[:90], b)
    assert (b_out[90:] == -2.0).all()
    np.testing.assert_array_equal(b_only[:90], b)
    np.testing.assert_array_equal(b_only[90:], -2.0)  # the kept items, stored


def test_valid_items_ends_the_tile_first():
    a = np.arange(TILE, dtype=np.float32)
    b = -a
    loaded = np.zeros(TILE, PAIR)
    a_out, b_out, b_only = (np.zeros(TILE, np.float32) for _ in range(3))
    load_then_store[1, THREADS](a, b, 50, loaded, a_out, b_out, b_only)
    np.testing.assert_array_equal(loaded["a"][:50], a[:50])
    assert (loaded["a"][50:] == -1.0).all()
    np.testing.assert_array_equal(b_out[:50], b[:50])
    assert (b_out[50:] == 0).all()


@cuda.jit
def mixed_round_trip(flag, value, n, out_n, out_flag, loaded):
    items = cuda.local.array(ITEMS, MIXED)
    rank = cuda.threadIdx.x
    for base in range(0, value.shape[0], TILE):
        block.load((flag, value, n), base, items, oob_default=(7, 0.5, -1), algorithm="striped")
        for i in range(ITEMS):
            loaded[base + i * THREADS + rank] = items[i]
        # fields in another order than the record's
        block.store((out_n, out_flag), base, items, field=("n", "flag"), algorithm="striped")


def test_mixed_fields_in_any_order_and_oob_default():
    cols = TILE + 20
    flag = (np.arange(cols) % 3 == 0).astype(np.int8)
    value = np.linspace(-1, 1, cols)
    n = np.arange(cols, dtype=np.int32) * 7
    out_n = np.zeros(cols, np.int32)
    out_flag = np.zeros(cols, np.int8)
    loaded = np.zeros(2 * TILE, MIXED)
    mixed_round_trip[1, THREADS](flag, value, n, out_n, out_flag, loaded)
    np.testing.assert_array_equal(loaded["flag"][:cols], flag)
    np.testing.assert_array_equal(loaded["value"][:cols], value)
    np.testing.assert_array_equal(loaded["n"][:cols], n)
    past = loaded[cols:]
    assert (past["flag"] == 7).all()
    assert (past["value"] == 0.5).all()
    assert (past["n"] == -1).all()
    np.testing.assert_array_equal(out_n, n)
    np.testing.assert_array_equal(out_flag, flag)


@cuda.jit
def scan_of_unfilled_items(a, b, h):
    state = cuda.local.array(1, PAIR)
    state[0].a = 1.0
    state[0].b = 0.0
    items = cuda.local.array(ITEMS, PAIR)
    for base in range(0, a.shape[0], TILE):
        block.load((a, b), base, items)
        block.inclusive_scan(items, items, scan_op=compose, prefix_op=carry_map, prefix_state=state)
        block.store(h, base, items, field="b")


@pytest.mark.sim_only
def test_items_no_load_filled_are_refused_as_after_a_plain_load():
    a, b = _inputs(1, 100)
    with pytest.raises(ScanError) as info:
        scan_of_unfilled_items[1, THREADS](a[0], b[0], np.zeros(100, np.float32))
    assert type(info.value).__name__ == "StateContractError"
    assert (
        "inclusive_scan: values hold an item that no load filled: item 0 of thread 25 was "
        "never written" in str(info.value)
    ), str(info.value)


@cuda.jit
def record_default(a, b, fill, loaded):
    items = cuda.local.array(ITEMS, PAIR)
    rank = cuda.threadIdx.x
    block.load((a, b), 0, items, oob_default=fill[0])  # a record, as for a record row
    for i in range(ITEMS):
        loaded[rank * ITEMS + i] = items[i]


def test_a_record_as_oob_default():
    a = np.arange(70, dtype=np.float32)
    b = -np.arange(70, dtype=np.float32)
    fill = np.array([(1.0, 0.0)], PAIR)
    loaded = np.zeros(TILE, PAIR)
    record_default[1, THREADS](a, b, fill, loaded)
    np.testing.assert_array_equal(loaded["a"][:70], a)
    np.testing.assert_array_equal(loaded["b"][:70], b)
    assert (loaded["a"][70:] == 1.0).all()
    assert (loaded["b"][70:] == 0.0).all()


# ---------------------------------------------------------------- against a NumPy model


@functools.cache
def _move_kernel(ipt: int, algorithm: str | None, oob: bool) -> object:
    """Load one tile from (a, b), keep the items by tile position, store them to (a_out, b_out)."""
    fill = (7.0, -7.0) if oob else None

    @cuda.jit
    def move(a, b, n, a_out, b_out, kept):
        items = cuda.local.array(ipt, PAIR)
        rank = cuda.threadIdx.x
        threads = cuda.blockDim.x
        for i in range(ipt):
            items[i].a = -1.0
            items[i].b = -2.0
        if fill is None:
            block.load((a, b), 0, items, valid_items=n, algorithm=algorithm)
        else:
            block.load((a, b), 0, items, valid_items=n, oob_default=fill, algorithm=algorithm)
        for i in range(ipt):
            pos = i * threads + rank if algorithm == "striped" else rank * ipt + i
            kept[pos] = items[i]
        block.store((a_out, b_out), 0, items, valid_items=n, algorithm=algorithm)

    return move


def _model(lengths, n, tile, oob):
    """Items by tile position, and the stored arrays, as the docs define them."""
    valid = max(0, min(*lengths[:2], n, tile))
    kept = np.zeros(tile, PAIR)
    kept["a"], kept["b"] = (7.0, -7.0) if oob else (-1.0, -2.0)
    return kept, valid, max(0, min(*lengths[2:], n, tile))


_ON_GPU = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"


@settings(deadline=None, max_examples=40 if _ON_GPU else 25)
@given(
    threads=st.sampled_from([32, 64]),
    ipt=st.sampled_from([1, 2, 3, 4]),
    algorithm=st.sampled_from(ALGORITHMS),
    oob=st.booleans(),
    lengths=st.lists(st.integers(0, 300), min_size=4, max_size=4),
    n=st.integers(-5, 300),
    seed=st.integers(0, 2**16),
)
def test_load_and_store_match_the_model(threads, ipt, algorithm, oob, lengths, n, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(k).astype(np.float32) for k in lengths[:2])
    a_out, b_out = (np.zeros(k, np.float32) for k in lengths[2:])
    tile = threads * ipt
    kept = np.zeros(tile, PAIR)
    _move_kernel(ipt, algorithm, oob)[1, threads](a, b, n, a_out, b_out, kept)
    want, valid, stored = _model(lengths, n, tile, oob)
    want["a"][:valid] = a[:valid]
    want["b"][:valid] = b[:valid]
    np.testing.assert_array_equal(kept, want)
    for got, field in ((a_out, "a"), (b_out, "b")):
        np.testing.assert_array_equal(got[:stored], want[field][:stored])
        assert not got[stored:].any()
