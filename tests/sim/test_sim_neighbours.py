# SPDX-License-Identifier: Apache-2.0
"""``block.adjacent_difference`` and ``block.flag_heads`` against NumPy, in the simulator and
(``SCAN_TESTS_BACKEND=gpu``) on a GPU.

Rows walked tile by tile with ``carry=`` (one block a row) must equal
``np.diff(row, prepend=carry)`` and the run heads of the whole row; one
tile without ``carry=`` copies (differences) or flags (heads) the tile's
first item. The tests marked ``sanitize`` run under compute-sanitizer in
tools/gpu_suite.sh.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from scan import block

pytestmark = pytest.mark.sim


@functools.cache
def difference_rows(dtype: str, ipt: int, in_place: bool) -> Any:
    """dst[r] = the differences of src[r] from its start, 7 before it, tile by tile."""
    value = np.dtype(dtype)
    IPT = ipt
    FIRST = 7  # a Python number: numba-cuda 0.30 lowers no float16 global constant

    if in_place:

        @cuda.jit
        def kernel(src: Any, dst: Any) -> None:
            row = cuda.blockIdx.x
            carry = cuda.local.array(1, value)
            carry[0] = FIRST
            items = cuda.local.array(IPT, value)
            for base in block.tiles(src.shape[1], items):
                block.load(src[row], base, items, oob_default=0)
                block.adjacent_difference(items, carry=carry)
                block.store(dst[row], base, items)

    else:

        @cuda.jit
        def kernel(src: Any, dst: Any) -> None:
            row = cuda.blockIdx.x
            carry = cuda.local.array(1, value)
            carry[0] = FIRST
            items = cuda.local.array(IPT, value)
            out = cuda.local.array(IPT, value)
            for base in block.tiles(src.shape[1], items):
                block.load(src[row], base, items, oob_default=0)
                block.adjacent_difference(items, out, carry=carry)
                block.store(dst[row], base, out)

    return kernel


@functools.cache
def head_rows(dtype: str, flag: str, ipt: int) -> Any:
    """dst[r] = 1 where src[r] starts a run (its first item: compared with 7)."""
    value, flags_dtype = np.dtype(dtype), np.dtype(flag)
    IPT = ipt
    FIRST = 7  # a Python number: numba-cuda 0.30 lowers no float16 global constant

    @cuda.jit
    def kernel(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        carry = cuda.local.array(1, value)
        carry[0] = FIRST
        items = cuda.local.array(IPT, value)
        flags = cuda.local.array(IPT, flags_dtype)
        for base in block.tiles(src.shape[1], items):
            block.load(src[row], base, items, oob_default=0)
            block.flag_heads(flags, items, carry=carry)
            block.store(dst[row], base, flags)

    return kernel


def _runs(rng: np.random.Generator, rows: int, cols: int, dtype: np.dtype) -> np.ndarray:
    """Rows of runs: values repeated 1 to 6 times."""
    values = rng.integers(0, 10, (rows, cols))
    repeat = rng.random((rows, cols)) < 0.7
    values[:, 1:] = np.where(repeat[:, 1:], 0, values[:, 1:])
    return (
        np.cumsum(values, axis=1).astype(dtype) % 97
        if dtype.kind in "iu"
        else np.cumsum(values, axis=1).astype(dtype)
    )


def _want_differences(src: np.ndarray) -> np.ndarray:
    first = np.full((src.shape[0], 1), 7, dtype=src.dtype)
    with np.errstate(over="ignore"):
        return np.diff(src, axis=1, prepend=first).astype(src.dtype)


@pytest.mark.sanitize
@pytest.mark.parametrize(
    ("dtype", "threads", "ipt", "cols", "in_place"),
    [
        ("int32", 64, 4, 1000, True),
        ("int32", 128, 1, 300, False),
        ("int8", 32, 7, 500, False),  # wraps as the GPU's int8 does
        ("float32", 96, 3, 777, True),
        ("float64", 64, 2, 256, False),
        ("uint16", 64, 5, 640, True),  # whole tiles only
    ],
)
def test_a_tile_loop_with_carry_differences_whole_rows(
    dtype: str, threads: int, ipt: int, cols: int, in_place: bool
) -> None:
    value = np.dtype(dtype)
    rng = np.random.default_rng(threads * ipt + cols)
    src = rng.integers(-100, 100, (3, cols)).astype(value)
    dst = np.zeros_like(src)
    difference_rows(dtype, ipt, in_place)[3, threads](src, dst)
    np.testing.assert_array_equal(dst, _want_differences(src))


@pytest.mark.sanitize
@pytest.mark.parametrize(
    ("dtype", "flag", "threads", "ipt", "cols"),
    [
        ("int32", "int32", 64, 4, 1000),
        ("float32", "uint8", 128, 2, 2048),
        ("int64", "int16", 32, 3, 200),
        ("float16", "int8", 64, 4, 512),
    ],
)
def test_a_tile_loop_with_carry_flags_the_heads_of_whole_rows(
    dtype: str, flag: str, threads: int, ipt: int, cols: int
) -> None:
    value = np.dtype(dtype)
    src = _runs(np.random.default_rng(cols), 2, cols, value)
    dst = np.zeros(src.shape, dtype=np.dtype(flag))
    head_rows(dtype, flag, ipt)[2, threads](src, dst)
    previous = np.concatenate([np.full((2, 1), 7, dtype=value), src[:, :-1]], axis=1)
    np.testing.assert_array_equal(dst, (src != previous).astype(dst.dtype))
    assert 0 < dst.astype(int).sum() < dst.size


def halve_then_subtract(a: Any, b: Any) -> Any:
    return a - b / 2


def gap_over_two(previous: Any, item: Any) -> Any:
    return item - previous > 2


@cuda.jit
def one_tile_with_operators(src: Any, diffs: Any, heads: Any) -> None:
    items = cuda.local.array(4, np.float32)
    out = cuda.local.array(4, np.float32)
    flags = cuda.local.array(4, np.int32)
    block.load(src, 0, items)
    block.adjacent_difference(items, out, op=halve_then_subtract)
    block.flag_heads(flags, items, op=gap_over_two)
    block.store(diffs, 0, out)
    block.store(heads, 0, flags)


@pytest.mark.sanitize
def test_one_tile_without_carry_keeps_or_flags_the_first_item() -> None:
    src = np.cumsum(np.random.default_rng(5).uniform(0, 4, 256)).astype(np.float32)
    diffs = np.zeros_like(src)
    heads = np.zeros(256, np.int32)
    one_tile_with_operators[1, 64](src, diffs, heads)
    want = src[1:] - src[:-1] / np.float32(2)
    assert diffs[0] == src[0]  # no item before the tile's first: copied
    np.testing.assert_allclose(diffs[1:], want, rtol=1e-6)
    assert heads[0] == 1  # no item before it: a head
    np.testing.assert_array_equal(heads[1:], (src[1:] - src[:-1] > 2).astype(np.int32))


@settings(max_examples=6, deadline=None)
@given(
    threads=st.sampled_from([32, 64, 96]),
    ipt=st.integers(1, 6),
    cols=st.integers(1, 700),
    seed=st.integers(0, 2**16),
)
def test_differences_then_heads_of_random_rows_match_numpy(
    threads: int, ipt: int, cols: int, seed: int
) -> None:
    src = _runs(np.random.default_rng(seed), 2, cols, np.dtype(np.int32))
    dst = np.zeros_like(src)
    difference_rows("int32", ipt, False)[2, threads](src, dst)
    np.testing.assert_array_equal(dst, _want_differences(src))
    flags = np.zeros_like(src)
    head_rows("int32", "int32", ipt)[2, threads](src, flags)
    np.testing.assert_array_equal(flags, (dst != 0).astype(np.int32))


@cuda.jit
def carry_never_set(src: Any, dst: Any) -> None:
    carry = cuda.local.array(1, np.int32)
    items = cuda.local.array(2, np.int32)
    block.load(src, 0, items)
    block.adjacent_difference(items, carry=carry)
    block.store(dst, 0, items)


@pytest.mark.sim_only
def test_a_carry_thread_zero_never_set_is_refused() -> None:
    from scan import StateContractError

    src = np.arange(64, dtype=np.int32)
    with pytest.raises(StateContractError, match=r"carry\[0\] of thread 0 was never set"):
        carry_never_set[1, 32](src, np.zeros_like(src))
