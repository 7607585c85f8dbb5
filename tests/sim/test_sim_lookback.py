# SPDX-License-Identifier: Apache-2.0
"""Cross-block scans (``prefix_op=scan.lookback``) against NumPy, in the simulator and on a GPU.

One block scans one tile of a long sequence; its prefix is the combination
of every earlier tile, read from a tile status (``scan.tile_status``) the
blocks share. Sums, operator scans with an initial value, records (the
affine-map recurrence), one status row per sequence with ``tile=``, statuses
reset and reused, and the simulator's refusals of what would hang or read
stale prefixes on a GPU. The tests marked ``sanitize`` run under
compute-sanitizer in tools/gpu_suite.sh.
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

import scan
from scan import StateContractError, block

pytestmark = pytest.mark.sim
ON_GPU = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"

PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@cuda.jit(device=True)
def compose(x: Any, y: Any) -> Any:  # x first, then y: h -> y.a * (x.a * h + x.b) + y.b
    return (x.a * y.a, y.a * x.b + y.b)


_NP = {"+": np.add, "max": np.maximum, "min": np.minimum}


@functools.cache
def sequence_kernel(
    dtype: str, threads: int, ipt: int, mode: str, op: str, seeded: bool, explicit_tile: bool
) -> Any:
    """One tile a block of one long sequence (``src``), scanned across blocks."""
    value = np.dtype(dtype)
    TILE = threads * ipt
    MODE = mode

    @cuda.jit
    def kernel(src: Any, dst: Any, status: Any) -> None:
        items = cuda.local.array(ipt, value)
        base = cuda.blockIdx.x * TILE
        block.load(src, base, items, oob_default=0)
        if op == "sum" and explicit_tile:
            block.scan(
                items,
                mode=MODE,
                prefix_op=scan.lookback,
                prefix_state=status,
                tile=cuda.blockIdx.x,
            )
        elif op == "sum":
            block.scan(items, mode=MODE, prefix_op=scan.lookback, prefix_state=status)
        elif seeded:
            block.scan(
                items,
                mode=MODE,
                scan_op=op,
                initial_value=7,
                prefix_op=scan.lookback,
                prefix_state=status,
            )
        else:
            block.scan(items, mode=MODE, scan_op=op, prefix_op=scan.lookback, prefix_state=status)
        block.store(dst, base, items)

    return kernel


def expected(x: np.ndarray, mode: str, op: str, seeded: bool) -> np.ndarray:
    ufunc = _NP["+" if op == "sum" else op]
    seq = np.concatenate([[x.dtype.type(7)], x]) if seeded else x
    inclusive = ufunc.accumulate(seq, dtype=x.dtype)
    if seeded:
        return inclusive[1:] if mode == "inclusive" else inclusive[:-1]
    if mode == "inclusive":
        return inclusive
    first = np.zeros(1, x.dtype)  # sums only: 0 seeds an unseeded exclusive scan
    return np.concatenate([first, inclusive[:-1]])


def run_sequence(
    x: np.ndarray,
    threads: int,
    ipt: int,
    mode: str,
    op: str,
    seeded: bool = False,
    explicit_tile: bool = False,
) -> np.ndarray:
    kernel = sequence_kernel(x.dtype.name, threads, ipt, mode, op, seeded, explicit_tile)
    tiles = -(-x.size // (threads * ipt))
    status = scan.tile_status(tiles, x.dtype)
    out = np.zeros_like(x)
    kernel[tiles, threads](x, out, status)
    return out


# the simulator runs every block in Python: short sequences, fewer examples
_SIZES = st.integers(1, 800) if not ON_GPU else st.integers(1, 60000)
_EXAMPLES = 40 if ON_GPU else 12


@settings(deadline=None, max_examples=_EXAMPLES)
@given(
    n=_SIZES,
    threads=st.sampled_from([32, 64]),
    ipt=st.sampled_from([1, 3, 4]),
    mode=st.sampled_from(["inclusive", "exclusive"]),
    dtype=st.sampled_from(["int32", "int64", "uint32"]),
    seed=st.integers(0, 2**31),
)
def test_integer_sums_across_blocks(
    n: int, threads: int, ipt: int, mode: str, dtype: str, seed: int
) -> None:
    x = np.random.default_rng(seed).integers(-50, 50, n).astype(dtype)
    got = run_sequence(x, threads, ipt, mode, "sum")
    np.testing.assert_array_equal(got, expected(x, mode, "sum", False))


@settings(deadline=None, max_examples=_EXAMPLES)
@given(
    n=_SIZES,
    mode=st.sampled_from(["inclusive", "exclusive"]),
    op=st.sampled_from(["max", "min"]),
    seed=st.integers(0, 2**31),
)
def test_operator_scans_with_an_initial_value(n: int, mode: str, op: str, seed: int) -> None:
    x = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int32)
    got = run_sequence(x, 64, 4, mode, op, seeded=True)
    np.testing.assert_array_equal(got, expected(x, mode, op, True))


@pytest.mark.sanitize
@pytest.mark.parametrize("mode", ["inclusive", "exclusive"])
def test_float_sums_across_many_tiles(mode: str) -> None:
    n = 200_000 if ON_GPU else 3000
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    got = run_sequence(x, 64, 4, mode, "sum")
    want = expected(x.astype(np.float64), mode, "sum", False)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-2)


def test_inclusive_max_without_a_seed() -> None:
    x = np.random.default_rng(2).integers(-(10**6), 10**6, 1500).astype(np.int64)
    got = run_sequence(x, 32, 4, "inclusive", "max")
    np.testing.assert_array_equal(got, np.maximum.accumulate(x))


def test_tile_given_explicitly() -> None:
    x = np.arange(1, 2000, dtype=np.int64)
    got = run_sequence(x, 32, 2, "inclusive", "sum", explicit_tile=True)
    np.testing.assert_array_equal(got, np.cumsum(x))


@pytest.mark.sanitize
def test_one_tile() -> None:
    x = np.arange(10, dtype=np.int32)
    np.testing.assert_array_equal(run_sequence(x, 32, 1, "exclusive", "sum"), np.cumsum(x) - x)


# --------------------------------------------------------------------------
# records: h[t] = a[t] * h[t-1] + b[t] over one long sequence


@functools.cache
def recurrence_kernel(threads: int, ipt: int) -> Any:
    TILE = threads * ipt

    @cuda.jit
    def kernel(ab: Any, h: Any, status: Any) -> None:
        items = cuda.local.array(ipt, PAIR)
        base = cuda.blockIdx.x * TILE
        block.load(ab, base, items, oob_default=(1.0, 0.0))
        block.inclusive_scan(items, scan_op=compose, prefix_op=scan.lookback, prefix_state=status)
        block.store(h, base, items)

    return kernel


def recurrence(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    h = np.empty_like(b)
    acc = np.float64(0.0)
    for t in range(a.size):
        acc = np.float64(a[t]) * acc + np.float64(b[t])
        h[t] = acc
    return h


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [1, 100, 2049])
def test_record_recurrence_across_blocks(n: int) -> None:
    rng = np.random.default_rng(n)
    ab = np.zeros(n, PAIR)
    ab["a"] = rng.uniform(0.5, 1.0, n)
    ab["b"] = rng.standard_normal(n)
    out = np.zeros_like(ab)
    tiles = -(-n // (64 * 4))
    status = scan.tile_status(tiles, PAIR)
    recurrence_kernel(64, 4)[tiles, 64](ab, out, status)
    np.testing.assert_allclose(out["b"], recurrence(ab["a"], ab["b"]), rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------
# one status row per sequence; reset and reuse


@functools.cache
def rows_kernel(threads: int, ipt: int) -> Any:
    TILE = threads * ipt

    @cuda.jit
    def kernel(src: Any, dst: Any, status: Any) -> None:
        row = cuda.blockIdx.y
        items = cuda.local.array(ipt, np.int64)
        base = cuda.blockIdx.x * TILE
        block.load(src[row], base, items, oob_default=0)
        block.inclusive_sum(
            items, prefix_op=scan.lookback, prefix_state=status[row], tile=cuda.blockIdx.x
        )
        block.store(dst[row], base, items)

    return kernel


@pytest.mark.sanitize
def test_rows_with_one_status_row_each_reset_and_reused() -> None:
    rows, cols = 3, 700 if not ON_GPU else 70_000
    tiles = -(-cols // (32 * 4))
    status = scan.tile_status((rows, tiles), np.int64)
    assert status.rows == rows
    assert status.tiles == tiles
    rng = np.random.default_rng(3)
    for _ in range(2):
        x = rng.integers(-9, 9, (rows, cols)).astype(np.int64)
        out = np.zeros_like(x)
        rows_kernel(32, 4)[(tiles, rows), 32](x, out, status)
        np.testing.assert_array_equal(out, np.cumsum(x, axis=1))
        status.reset()


# --------------------------------------------------------------------------
# what the simulator refuses (a GPU would hang, stop, or read stale prefixes)


@pytest.mark.sim_only
def test_a_status_used_again_without_reset_is_refused() -> None:
    x = np.ones(300, np.int32)
    kernel = sequence_kernel("int32", 32, 4, "inclusive", "sum", False, False)
    status = scan.tile_status(3, np.int32)
    out = np.zeros_like(x)
    kernel[3, 32](x, out, status)
    with pytest.raises(StateContractError, match=r"status\.reset\(\) before each launch"):
        kernel[3, 32](x, out, status)


@pytest.mark.sim_only
def test_a_tile_beyond_the_status_is_refused() -> None:
    x = np.ones(300, np.int32)
    kernel = sequence_kernel("int32", 32, 4, "inclusive", "sum", False, False)
    status = scan.tile_status(2, np.int32)
    with pytest.raises(StateContractError, match=r"scans tile 2 .* holds tiles 0 to 1"):
        kernel[3, 32](x, np.zeros_like(x), status)


@pytest.mark.sim_only
def test_tiles_out_of_block_order_are_refused() -> None:
    # a 2-D grid numbering tiles by the linear block index runs tile 2 before tile 1 here
    @cuda.jit
    def kernel(src: Any, dst: Any, status: Any) -> None:
        items = cuda.local.array(1, np.int32)
        base = (cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y) * 32
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status)
        block.store(dst, base, items)

    x = np.ones(128, np.int32)
    status = scan.tile_status(4, np.int32)
    with pytest.raises(StateContractError, match=r"tile 1 has not been scanned yet"):
        kernel[(2, 2), 32](x, np.zeros_like(x), status)


@pytest.mark.sim_only
def test_tile_status_arguments_are_checked() -> None:
    with pytest.raises(scan.ScanTypeError, match=r"tiles must be an int, or a \(rows, tiles\)"):
        scan.tile_status(2.5, np.int32)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"at least 1"):
        scan.tile_status(0, np.int32)
    with pytest.raises(scan.ScanTypeError, match=r"dtype"):
        scan.tile_status(4, np.complex64)
    status = scan.tile_status((2, 5), np.float32)
    assert "2 rows x 5 tiles of float32" in repr(status)
    with pytest.raises(IndexError):
        status[2]
    with pytest.raises(TypeError, match=r"one row"):
        scan.tile_status(5, np.float32)[0]


# --------------------------------------------------------------------------
# reverse=True: tile 0 is the sequence's last, the prefix is the suffix to the right

PAIR64 = np.dtype([("a", np.float64), ("b", np.float64)], align=True)


@functools.cache
def suffix_kernel(threads: int, ipt: int) -> Any:
    TILE = threads * ipt

    @cuda.jit
    def kernel(src: Any, dst: Any, status: Any) -> None:
        items = cuda.local.array(ipt, np.int64)
        last = (src.shape[0] - 1) // TILE
        base = (last - cuda.blockIdx.x) * TILE  # tile t is the t-th from the end
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, reverse=True)
        block.store(dst, base, items)

    return kernel


@functools.cache
def backward_kernel(threads: int, ipt: int) -> Any:
    TILE = threads * ipt

    @cuda.jit
    def kernel(ab: Any, out: Any, status: Any) -> None:
        items = cuda.local.array(ipt, PAIR64)
        last = (ab.shape[0] - 1) // TILE
        base = (last - cuda.blockIdx.x) * TILE
        block.load(ab, base, items, oob_default=(1.0, 0.0))
        block.exclusive_scan(
            items,
            scan_op=compose,
            initial_value=(1.0, 0.0),
            prefix_op=scan.lookback,
            prefix_state=status,
            reverse=True,
        )
        block.store(out, base, items)

    return kernel


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [1, 96, 97, 700] if not ON_GPU else [1, 97, 300_001])
def test_reverse_suffix_sums_across_blocks(n: int) -> None:
    x = np.random.default_rng(n).integers(-9, 9, n).astype(np.int64)
    tiles = -(-n // (32 * 3))
    out = np.zeros_like(x)
    suffix_kernel(32, 3)[tiles, 32](x, out, scan.tile_status(tiles, np.int64))
    np.testing.assert_array_equal(out, np.cumsum(x[::-1])[::-1])


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [5, 200] if not ON_GPU else [5, 100_003])
def test_reverse_exclusive_record_scan_keeps_the_operand_order(n: int) -> None:
    # compose is not commutative: each item gets the maps after it, in order
    rng = np.random.default_rng(n)
    ab = np.zeros(n, PAIR64)
    ab["a"] = rng.uniform(0.99, 1.01, n)  # products of 10**5 of them stay normal
    ab["b"] = rng.standard_normal(n)
    tiles = -(-n // (32 * 3))
    out = np.zeros_like(ab)
    backward_kernel(32, 3)[tiles, 32](ab, out, scan.tile_status(tiles, PAIR64))
    want_a, want_b = np.ones(n), np.zeros(n)
    acc_a, acc_b = 1.0, 0.0  # the identity map: nothing after the last item
    for t in range(n - 1, -1, -1):
        want_a[t], want_b[t] = acc_a, acc_b
        acc_a, acc_b = ab["a"][t] * acc_a, acc_a * ab["b"][t] + acc_b  # item t, then the rest
    np.testing.assert_allclose(out["a"], want_a, rtol=1e-8)
    np.testing.assert_allclose(out["b"], want_b, rtol=1e-8, atol=1e-8 * np.sqrt(n))


# ---------------------------------------------------------------- deterministic statuses

DET_THREADS, DET_ITEMS = 128, 8
DET_TILE = DET_THREADS * DET_ITEMS


@cuda.jit
def ordered_cumsum(src: Any, dst: Any, status: Any) -> None:
    """Tiles handed out to however many blocks the launch has, each block in tile order."""
    items = cuda.local.array(DET_ITEMS, np.float32)
    t = cuda.blockIdx.x
    while t * DET_TILE < src.shape[0]:
        block.load(src, t * DET_TILE, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, tile=t)
        block.store(dst, t * DET_TILE, items)
        t += cuda.gridDim.x


@cuda.jit
def ordered_recurrence(ab: Any, h: Any, status: Any) -> None:
    items = cuda.local.array(4, PAIR)
    base = cuda.blockIdx.x * 512
    block.load(ab, base, items, oob_default=(1.0, 0.0))
    block.inclusive_scan(items, scan_op=compose, prefix_op=scan.lookback, prefix_state=status)
    block.store(h, base, items)


def test_a_deterministic_status_gives_the_same_bits_every_run_and_grid() -> None:
    _same_bits(*((100, 1 << 22) if ON_GPU else (3, 5 * DET_TILE + 77)))


@pytest.mark.sanitize
def test_a_deterministic_status_under_the_sanitizers() -> None:
    _same_bits(2, (40 if ON_GPU else 8) * DET_TILE + 5)


def _same_bits(runs: int, n: int) -> None:
    tiles = -(-n // DET_TILE)
    src = (np.random.default_rng(11).standard_normal(n) * 1e3).astype(np.float32)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(src)
    status = scan.tile_status(tiles, np.float32, deterministic=True)
    first = None
    for run in range(runs):
        # one block a tile, and on a GPU every other run fewer blocks than tiles, each
        # walking its tiles in order (the simulator runs blocks one after another, so a
        # block there cannot wait for a tile a later block scans)
        grid = tiles if run % 2 == 0 or not ON_GPU else 37
        status.reset()
        ordered_cumsum[grid, DET_THREADS](d_src, d_dst, status)
        got = d_dst.copy_to_host()
        if first is None:
            first = got
            want = np.cumsum(src.astype(np.float64))
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
        else:
            np.testing.assert_array_equal(got.view(np.uint32), first.view(np.uint32))


def test_a_deterministic_recurrence_gives_the_same_bits_every_run() -> None:
    runs, tiles = (100, 4096) if ON_GPU else (2, 6)
    rng = np.random.default_rng(12)
    ab = np.zeros(tiles * 512, PAIR)
    ab["a"] = rng.uniform(0.9, 1.0, ab.size)
    ab["b"] = rng.standard_normal(ab.size)
    d_ab = cuda.to_device(ab)
    d_h = cuda.device_array_like(ab)
    status = scan.tile_status(tiles, PAIR, deterministic=True)
    first = None
    for _ in range(runs):
        status.reset()
        ordered_recurrence[tiles, 128](d_ab, d_h, status)
        got = d_h.copy_to_host().view(np.uint32)
        if first is None:
            first = got
        else:
            np.testing.assert_array_equal(got, first)
