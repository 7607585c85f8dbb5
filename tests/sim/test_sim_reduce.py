# SPDX-License-Identifier: Apache-2.0
"""Block reduce's results against NumPy, in the simulator and (``SCAN_TESTS_BACKEND=gpu``) on a GPU.

Every thread receives the result by default; with ``broadcast=False`` CUB
defines it in thread 0 only, and only thread 0 stores it (the simulator
refuses another thread's use of an integer result, and gives it NaN for a
float one). The tests
marked ``sanitize`` run under compute-sanitizer in tools/gpu_suite.sh.
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

from scan import block

pytestmark = pytest.mark.sim

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
REC = np.dtype([("v", np.float32), ("i", np.int32)])


@functools.cache
def reduce_kernel(
    dtype: str, ipt: int, op: str, use_valid: bool, broadcast: bool, algorithm: str
) -> Any:
    """A kernel reducing each row's first tile (one block per row): results of every thread."""
    value = np.dtype(dtype)
    IPT, OP, BCAST, ALGO = ipt, op, broadcast, algorithm

    if ipt == 0 and use_valid:

        def kernel(src: Any, valid: Any, out: Any) -> None:
            rank = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
            row = cuda.blockIdx.x
            x = src[row, rank]
            r = block.reduce(x, OP, valid=valid[row], broadcast=BCAST, algorithm=ALGO)
            if BCAST or rank == 0:
                out[row, rank] = r

    elif ipt == 0:

        def kernel(src: Any, valid: Any, out: Any) -> None:
            rank = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
            row = cuda.blockIdx.x
            x = src[row, rank]
            r = block.reduce(x, OP, broadcast=BCAST, algorithm=ALGO)
            if BCAST or rank == 0:
                out[row, rank] = r

    elif use_valid:

        def kernel(src: Any, valid: Any, out: Any) -> None:
            rank = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
            row = cuda.blockIdx.x
            items = cuda.local.array(IPT, value)
            for i in range(IPT):
                items[i] = src[row, rank * IPT + i]
            r = block.reduce(items, OP, valid=valid[row], broadcast=BCAST, algorithm=ALGO)
            if BCAST or rank == 0:
                out[row, rank] = r

    else:

        def kernel(src: Any, valid: Any, out: Any) -> None:
            rank = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
            row = cuda.blockIdx.x
            items = cuda.local.array(IPT, value)
            for i in range(IPT):
                items[i] = src[row, rank * IPT + i]
            r = block.reduce(items, OP, broadcast=BCAST, algorithm=ALGO)
            if BCAST or rank == 0:
                out[row, rank] = r

    return cuda.jit(kernel)


_NP_OPS = {
    "+": np.add,
    "*": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
}


def expected(src: np.ndarray, valid: np.ndarray, op: str) -> np.ndarray:
    out = []
    with np.errstate(all="ignore"):
        for row, n in zip(src, valid, strict=True):
            acc = row[0]
            for x in row[1:n]:
                acc = _NP_OPS[op](acc, x)
            out.append(acc)
    return np.array(out, dtype=src.dtype)


def run(
    dtype: str,
    block_shape: tuple[int, int],
    ipt: int,
    op: str,
    valid: list[int] | None,
    broadcast: bool,
    algorithm: str,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    threads = block_shape[0] * block_shape[1]
    tile = threads * max(ipt, 1)
    rows = 3 if valid is None else len(valid)
    value = np.dtype(dtype)
    if value.kind == "f":
        src = rng.uniform(-2, 2, (rows, tile)).astype(value)
    elif op == "*":
        src = rng.choice(np.array([1, 1, 1, 2, 3], dtype=value), (rows, tile))
    else:
        info = np.iinfo(value)
        src = rng.integers(info.min, info.max, (rows, tile), dtype=value, endpoint=True)
    counts = np.full(rows, tile) if valid is None else np.array(valid)
    kernel = reduce_kernel(dtype, ipt, op, valid is not None, broadcast, algorithm)
    out = np.zeros((rows, threads), dtype=value)
    kernel[rows, block_shape](src, counts.astype(np.int64), out)
    return out, expected(src, np.minimum(counts, tile), op)


def check(out: np.ndarray, want: np.ndarray, broadcast: bool) -> None:
    got = out if broadcast else out[:, :1]
    want = np.broadcast_to(want[:, None], got.shape)
    if want.dtype.kind == "f":
        # CUB combines in a tree, the reference in tile order: sums round differently
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * want.shape[1])
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ["warp_reductions", "raking", "raking_commutative_only"])
@pytest.mark.parametrize("broadcast", [False, True])
def test_sum_of_a_full_tile(algorithm: str, broadcast: bool) -> None:
    out, want = run("int32", (64, 1), 4, "+", None, broadcast, algorithm, seed=1)
    check(out, want, broadcast)


@pytest.mark.sanitize
@pytest.mark.parametrize("ipt", [0, 1, 3])
@pytest.mark.parametrize("valid", [[1, 2, 63, 64, 65, 10_000]])
def test_valid_counts_items_of_the_tile(ipt: int, valid: list[int]) -> None:
    out, want = run("int64", (32, 2), ipt, "max", valid, True, "raking", seed=2)
    check(out, want, True)


@settings(deadline=None)
@given(
    dtype=st.sampled_from(["int8", "uint16", "int32", "uint32", "int64", "float32", "float64"]),
    block_shape=st.sampled_from([(1, 1), (7, 1), (32, 1), (33, 1), (64, 1), (16, 4), (128, 1)]),
    ipt=st.sampled_from([0, 1, 2, 4]),
    op=st.sampled_from(list(_NP_OPS)),
    partial=st.booleans(),
    broadcast=st.booleans(),
    algorithm=st.sampled_from(["warp_reductions", "raking", "raking_commutative_only"]),
    seed=st.integers(0, 2**16),
)
def test_matches_numpy(
    dtype: str,
    block_shape: tuple[int, int],
    ipt: int,
    op: str,
    partial: bool,
    broadcast: bool,
    algorithm: str,
    seed: int,
) -> None:
    if np.dtype(dtype).kind == "f" and op in ("&", "|", "^"):
        op = "+"
    if np.dtype(dtype).kind == "f" and op == "*":
        op = "max"  # products of many uniform floats underflow to 0 in any order
    tile = block_shape[0] * block_shape[1] * max(ipt, 1)
    valid = [1, max(1, tile // 2), tile] if partial else None
    out, want = run(dtype, block_shape, ipt, op, valid, broadcast, algorithm, seed)
    check(out, want, broadcast)


# ---------------------------------------------------------------- records


@cuda.jit(device=True)
def pick_larger(a: Any, b: Any) -> Any:
    # ties keep the earlier index: an argmax, whichever order CUB combines in
    if b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


@cuda.jit
def argmax_rows(src: Any, out: Any) -> None:
    items = cuda.local.array(4, REC)
    row = cuda.blockIdx.x
    for j in range(4):
        t = cuda.threadIdx.x * 4 + j
        items[j].v = src[row, t]
        items[j].i = t
    best = block.reduce(items, pick_larger)
    if cuda.threadIdx.x == 0:
        out[row] = best.i


@pytest.mark.sanitize
def test_record_argmax() -> None:
    rng = np.random.default_rng(3)
    src = rng.integers(0, 50, (4, 256)).astype(np.float32)  # ties on purpose
    out = np.zeros(4, np.int32)
    argmax_rows[4, 64](src, out)
    np.testing.assert_array_equal(out, src.argmax(axis=1))


# ---------------------------------------------------------------- the contract (simulator)


@cuda.jit
def reduce_partial_load(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.float32)
    block.load(src, 0, items)  # a partial tile, no oob_default=
    total = block.sum(items)
    if cuda.threadIdx.x == 0:
        out[0] = total


@cuda.jit
def reduce_partial_load_valid(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.float32)
    block.load(src, 0, items)
    total = block.sum(items, valid=src.shape[0])
    if cuda.threadIdx.x == 0:
        out[0] = total


@pytest.mark.sim_only
def test_items_no_load_filled_are_refused() -> None:
    from scan import StateContractError

    src = np.ones(100, np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(StateContractError, match="item 0 of thread 25 was never written"):
        reduce_partial_load[1, 32](src, out)
    reduce_partial_load_valid[1, 32](src, out)
    assert out[0] == 100


@cuda.jit
def reduce_nothing(src: Any, out: Any) -> None:
    out[0] = block.reduce(src[cuda.threadIdx.x], "max", valid=0)


@pytest.mark.sim_only
def test_an_empty_tile_is_refused() -> None:
    with pytest.raises(ValueError, match="valid=0; a reduce needs at least one valid item"):
        reduce_nothing[1, 32](np.ones(32, np.float32), np.zeros(1, np.float32))


@cuda.jit
def scan_or_reduce(src: Any, out: Any) -> None:
    x = src[cuda.threadIdx.x]
    if cuda.threadIdx.x < 16:
        out[cuda.threadIdx.x] = block.inclusive_sum(x)
    else:
        out[cuda.threadIdx.x] = block.sum(x)


@pytest.mark.sim_only
def test_threads_making_other_calls_are_refused() -> None:
    with pytest.raises(RuntimeError, match=r"must make the same scan\.block calls"):
        scan_or_reduce[1, 32](np.ones(32, np.int32), np.zeros(32, np.int32))


# ---------------------------------------------------------------- results in every thread, dtype=


@cuda.jit
def sums_of_small_items(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.uint8)
    block.load(src, 0, items, oob_default=0)
    rank = cuda.threadIdx.x
    out[0, rank] = block.sum(items)  # CUB's: in the items' dtype, wrapping at 256
    out[1, rank] = block.sum(items, dtype=np.int64)  # every thread, accumulated in int64
    out[2, rank] = block.reduce(items, "max", dtype=np.int16)
    out[3, rank] = block.sum(items[0], dtype=np.uint32)  # a scalar, converted first


@pytest.mark.sanitize
def test_results_reach_every_thread_and_dtype_widens_the_sum() -> None:
    src = np.full(128, 200, np.uint8)
    src[5] = 255
    out = np.zeros((4, 32), np.int64)
    sums_of_small_items[1, 32](src, out)
    total = int(src.astype(np.int64).sum())
    np.testing.assert_array_equal(out[0], np.full(32, total % 256))
    np.testing.assert_array_equal(out[1], np.full(32, total))
    np.testing.assert_array_equal(out[2], np.full(32, 255))
    firsts = int(src[::4].astype(np.int64).sum())
    np.testing.assert_array_equal(out[3], np.full(32, firsts))


@cuda.jit
def widened_half_and_complex_items(h: Any, c: Any, out: Any, outc: Any) -> None:
    hi = cuda.local.array(4, np.float16)
    ci = cuda.local.array(4, np.complex64)
    block.load(h, 0, hi, oob_default=0)
    block.load(c, 0, ci, oob_default=0)
    rank = cuda.threadIdx.x
    out[0, rank] = block.sum(hi, dtype=np.float32)  # past float16's range, exact in float32
    out[1, rank] = block.reduce(hi, "max", dtype=np.float64, valid=100)
    out[2, rank] = block.sum(h[rank], dtype=np.float64)
    outc[0, rank] = block.sum(ci, dtype=np.complex128)
    outc[1, rank] = block.sum(h[rank], dtype=np.complex64)


@pytest.mark.sanitize
def test_dtype_widens_half_and_complex_items() -> None:
    rng = np.random.default_rng(3)
    h = rng.choice(np.array([60000, 65504, -1, 2], np.float16), size=128)
    c = (rng.integers(-9, 10, 128) + 1j * rng.integers(-9, 10, 128)).astype(np.complex64)
    out = np.zeros((3, 32), np.float64)
    outc = np.zeros((2, 32), np.complex128)
    widened_half_and_complex_items[1, 32](h, c, out, outc)
    wide = h.astype(np.float64)
    np.testing.assert_array_equal(out[0], np.full(32, wide.sum()))  # inf in float16
    np.testing.assert_array_equal(out[1], np.full(32, wide[:100].max()))
    np.testing.assert_array_equal(out[2], np.full(32, wide[:32].sum()))
    np.testing.assert_array_equal(outc[0], np.full(32, c.astype(np.complex128).sum()))
    np.testing.assert_array_equal(outc[1], np.full(32, wide[:32].sum() + 0j))


@cuda.jit
def int_sum_in_thread_zero(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, oob_default=0)
    total = block.sum(items, broadcast=False)
    if cuda.threadIdx.x == 0:
        out[0] = total  # thread 0's result is the block's
    total = block.sum(items, broadcast=False)  # the others may drop theirs


@cuda.jit
def int_sum_stored_by_every_thread(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, oob_default=0)
    total = block.sum(items, broadcast=False)
    out[cuda.threadIdx.x] = total


@cuda.jit
def int_sum_used_by_every_thread(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, oob_default=0)
    total = block.reduce(items, "max", broadcast=False)
    if items[0] > total:
        out[cuda.threadIdx.x] = 1


@cuda.jit
def float_sum_in_every_thread(src: Any, out: Any) -> None:
    items = cuda.local.array(4, np.float32)
    block.load(src, 0, items, oob_default=0)
    out[cuda.threadIdx.x] = block.sum(items, broadcast=False)


@pytest.mark.sim_only
def test_broadcast_false_gives_no_plausible_result_outside_thread_zero() -> None:
    from scan import StateContractError

    src = np.arange(128, dtype=np.int32)
    out = np.zeros(32, np.int32)
    int_sum_in_thread_zero[1, 32](src, out)
    assert out[0] == src.sum()
    fragment = (
        "sum: thread 1 uses the result of sum(..., broadcast=False), which is defined in "
        "thread 0 only (on a GPU the other threads receive CUB's partial results, which are "
        "not the block's sum); use it in thread 0 only (if cuda.threadIdx.x == 0: ...), or "
        "drop broadcast=False: then every thread receives it"
    )
    for kernel, line in (
        (int_sum_stored_by_every_thread, "out[cuda.threadIdx.x] = total"),
        (int_sum_used_by_every_thread, "if items[0] > total:"),
    ):
        with pytest.raises(StateContractError) as info:
            kernel[1, 2](src[:8], out)
        text = str(info.value)
        assert f"\n    {line}\n" in text
        assert text.endswith(
            fragment.replace("sum", "reduce") if "used" in kernel.__name__ else fragment
        )
    floats = np.zeros(32, np.float32)
    float_sum_in_every_thread[1, 32](src.astype(np.float32), floats)
    assert floats[0] == src.sum()
    assert np.isnan(floats[1:]).all()


@cuda.jit
def sum_in_a_record_dtype(src: Any, out: Any) -> None:
    out[0] = block.sum(src[cuda.threadIdx.x], dtype=REC)


@pytest.mark.sim_only
def test_a_dtype_that_is_no_number_is_refused() -> None:
    from scan import ScanTypeError

    with pytest.raises(ScanTypeError) as info:
        sum_in_a_record_dtype[1, 32](np.ones(32, np.int32), np.zeros(1, np.int64))
    assert "sum: dtype= must be a numeric dtype to accumulate in, one of int8" in str(info.value)
