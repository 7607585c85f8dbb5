# SPDX-License-Identifier: Apache-2.0
"""Differential fuzzing of cross-block scans (``prefix_op=scan.lookback``) against NumPy.

Each drawn case scans ``rows`` sequences of ``tiles`` tiles (the last one
partial by ``short`` items), one block a tile, with a 1-D status (one row)
or a 2-D status and ``tile=cuda.blockIdx.x``: sums, ``max``/``min`` and a
user operator, inclusive and exclusive, seeded or not, numbers and records
(the affine-map recurrence), blocks of 32 to 256 threads (2-D too) and 1 to
8 items a thread, over default and deterministic statuses (a deterministic
one is scanned twice: the two results must be the same bytes). The simulator
draws a few tiles; the GPU (tools/gpu_suite.sh, ``SCAN_TESTS_BACKEND=gpu``)
draws from one tile to several thousand, so tiles really wait for each other.
Cases are recorded with the block-scan fuzzer's (kind ``lookback``) and
counted with them.
"""

from __future__ import annotations

import functools
import os
import traceback
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pytest
from cases import fuzz
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from numba import cuda

import scan
from scan import block

pytestmark = pytest.mark.fuzz

ON_GPU = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"
EXAMPLES = int(os.environ.get("SCAN_FUZZ_LOOKBACK_EXAMPLES", str(max(3, fuzz.EXAMPLES // 4))))
MAX_TILES = 6000 if ON_GPU else 5
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@cuda.jit(device=True)
def compose(x: Any, y: Any) -> Any:  # x first, then y
    return (x.a * y.a, y.a * x.b + y.b)


@cuda.jit(device=True)
def user_add(a: Any, b: Any) -> Any:
    return a + b


@dataclass(frozen=True)
class LookbackCase:
    """One cross-block scan configuration (see the module docstring)."""

    dtype: str = "int32"  # or "pair"
    op: str = "+"  # "+", "max", "min", "user_add"; "compose" for pairs
    mode: str = "inclusive"
    seeded: bool = False
    block: tuple[int, int, int] = (64, 1, 1)
    items_per_thread: int = 4
    tiles: int = 3
    short: int = 0
    rows: int = 1
    two_d: bool = False  # a (rows, tiles) status and tile=cuda.blockIdx.x
    deterministic: bool = False  # scan.tile_status(..., deterministic=True)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def length(self) -> int:
        return max(1, self.tiles * self.threads * self.items_per_thread - self.short)

    @property
    def exact(self) -> bool:
        return self.dtype != "pair" and (
            np.dtype(self.dtype).kind in "iu" or self.op in ("max", "min")
        )


@st.composite
def lookback_cases(draw: st.DrawFn) -> LookbackCase:
    pair = draw(st.booleans()) and draw(st.booleans())  # a quarter are records
    dtype = "pair" if pair else draw(st.sampled_from(["int32", "int64", "uint32", "float32"]))
    op = "compose" if pair else draw(st.sampled_from(["+", "+", "max", "min", "user_add"]))
    mode = draw(st.sampled_from(["inclusive", "exclusive"]))
    # a non-sum exclusive scan needs its seed; others may have one
    needs_seed = mode == "exclusive" and op not in ("+",)
    seeded = needs_seed or (op in ("max", "min") and draw(st.booleans()))
    blk = draw(st.sampled_from([(32, 1, 1), (64, 1, 1), (128, 1, 1), (256, 1, 1), (32, 2, 1)]))
    ipt = draw(st.integers(1, 8))
    tiles = draw(st.integers(1, MAX_TILES))
    tile_items = blk[0] * blk[1] * ipt
    short = draw(st.integers(0, tile_items - 1))
    rows = draw(st.integers(1, 3))
    two_d = rows > 1 or draw(st.booleans())
    deterministic = draw(st.booleans())
    return LookbackCase(dtype, op, mode, seeded, blk, ipt, tiles, short, rows, two_d, deterministic)


def _value_dtype(case: LookbackCase) -> np.dtype[Any]:
    return PAIR if case.dtype == "pair" else np.dtype(case.dtype)


@functools.cache
def _kernel(case: LookbackCase) -> Any:
    value = _value_dtype(case)
    ipt, mode, tile_items = case.items_per_thread, case.mode, case.threads * case.items_per_thread
    op = {"compose": compose, "user_add": user_add}.get(case.op, case.op)
    pair = case.dtype == "pair"
    seeded, two_d = case.seeded, case.two_d
    first = (1.0, 0.0) if pair else 3  # records are seeded with the identity map

    @cuda.jit
    def kernel(src: Any, dst: Any, status: Any) -> None:
        row = cuda.blockIdx.y if two_d else 0
        items = cuda.local.array(ipt, value)
        base = cuda.blockIdx.x * tile_items
        if pair:
            block.load(src[row], base, items, oob_default=(1.0, 0.0))
        else:
            block.load(src[row], base, items, oob_default=0)
        if two_d and seeded:
            block.scan(
                items,
                mode=mode,
                scan_op=op,
                initial_value=first,
                prefix_op=scan.lookback,
                prefix_state=status[row],
                tile=cuda.blockIdx.x,
            )
        elif two_d:
            block.scan(
                items,
                mode=mode,
                scan_op=op,
                prefix_op=scan.lookback,
                prefix_state=status[row],
                tile=cuda.blockIdx.x,
            )
        elif seeded:
            block.scan(
                items,
                mode=mode,
                scan_op=op,
                initial_value=first,
                prefix_op=scan.lookback,
                prefix_state=status,
            )
        else:
            block.scan(items, mode=mode, scan_op=op, prefix_op=scan.lookback, prefix_state=status)
        block.store(dst[row], base, items)

    return kernel


def _inputs(case: LookbackCase, seed_: int) -> np.ndarray:
    rng = np.random.default_rng(seed_)
    shape = (case.rows, case.length)
    if case.dtype == "pair":
        src = np.zeros(shape, PAIR)
        src["a"] = rng.uniform(0.9, 1.0, shape)
        src["b"] = rng.standard_normal(shape)
        return src
    dtype = np.dtype(case.dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    low = 0 if dtype.kind == "u" else -1000
    return rng.integers(low, 1000, shape).astype(dtype)


def _reference(case: LookbackCase, src: np.ndarray) -> np.ndarray:
    if case.dtype == "pair":
        h = np.zeros(src.shape, np.float64)
        acc = np.zeros(src.shape[0], np.float64)
        for t in range(src.shape[1]):
            acc = src["a"][:, t] * acc + src["b"][:, t]
            h[:, t] = acc
        if case.mode == "exclusive":  # the maps before each item: h[-1] = 0 first
            h = np.concatenate([np.zeros((src.shape[0], 1)), h[:, :-1]], axis=1)
        return h
    work = np.float64 if src.dtype.kind == "f" else src.dtype
    ufunc = {"+": np.add, "user_add": np.add, "max": np.maximum, "min": np.minimum}[case.op]
    seq = src.astype(work)
    if case.seeded:
        seq = np.concatenate([np.full((src.shape[0], 1), 3, work), seq], axis=1)
    inclusive = ufunc.accumulate(seq, axis=1, dtype=work)
    if case.seeded:
        return inclusive[:, 1:] if case.mode == "inclusive" else inclusive[:, :-1]
    if case.mode == "inclusive":
        return inclusive
    zeros = np.zeros((src.shape[0], 1), work)  # only sums are unseeded exclusive scans
    return np.concatenate([zeros, inclusive[:, :-1]], axis=1)


def run_lookback_case(case: LookbackCase, seed_: int) -> dict[str, object]:
    src = _inputs(case, seed_)
    dst = np.zeros_like(src)
    value = _value_dtype(case)
    shape = (case.rows, case.tiles) if case.two_d else case.tiles
    status = scan.tile_status(shape, value, deterministic=case.deterministic)
    grid = (case.tiles, case.rows) if case.two_d else (case.tiles, 1)
    _kernel(case)[grid, case.block](src, dst, status)
    if case.deterministic:  # the same bytes again, whatever the timing
        again = np.zeros_like(src)
        status.reset()
        _kernel(case)[grid, case.block](src, again, status)
        np.testing.assert_array_equal(again.view(np.uint8), dst.view(np.uint8))
    want = _reference(case, src)
    if case.dtype == "pair":
        np.testing.assert_allclose(dst["b"], want, rtol=2e-3, atol=2e-3)
    elif case.exact:
        np.testing.assert_array_equal(dst, want.astype(dst.dtype))
    else:
        scale = np.maximum(1.0, np.sqrt(np.arange(1, src.shape[1] + 1)))
        np.testing.assert_allclose(dst, want, rtol=1e-4, atol=1e-4 * scale.max())
    return {
        "kind": "lookback",
        "case": asdict(case),
        "seed": seed_,
        "outcome": "ran",
        "exact": case.exact,
    }


_SETTINGS: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@pytest.mark.sim
@settings(max_examples=EXAMPLES, **_SETTINGS)
@seed(fuzz.HYPOTHESIS_SEED + 500)
@given(case=lookback_cases(), seed_=st.integers(0, 2**16))
def test_fuzz_case_lookback(case: LookbackCase, seed_: int) -> None:
    try:
        fuzz.record(run_lookback_case(case, seed_))
    except BaseException as exc:
        fuzz.record_failure(
            f"lookback ({case!r}, {seed_}): "
            + traceback.format_exception_only(exc)[-1].strip().replace("\n", " ")[:300]
        )
        raise


@pytest.mark.sim
@pytest.mark.parametrize(
    "case",
    [
        LookbackCase(),  # a 1-D status, three tiles
        LookbackCase(dtype="pair", op="compose", block=(32, 2, 1), rows=2, two_d=True, short=5),
        LookbackCase(op="max", mode="exclusive", seeded=True, items_per_thread=1, tiles=1),
        LookbackCase(dtype="float32", mode="exclusive", tiles=4, short=100),
        # more tiles than an anchor's group (32): later tiles start from anchor 32 or 64
        LookbackCase(
            dtype="float32", block=(32, 1, 1), items_per_thread=1, tiles=70, deterministic=True
        ),
        LookbackCase(
            dtype="pair",
            op="compose",
            mode="exclusive",
            seeded=True,
            block=(32, 1, 1),
            items_per_thread=2,
            tiles=40,
            short=7,
            deterministic=True,
        ),
    ],
)
def test_lookback_edge_cases(case: LookbackCase) -> None:
    run_lookback_case(case, 0)
