# SPDX-License-Identifier: Apache-2.0
# mypy: disable-error-code="untyped-decorator"
"""Three implementations agree: the generated code on the host, the simulator (or a GPU), NumPy.

The same kernels run in the CUDA simulator (this module runs in the ``sim``
process; on a GPU machine, with ``SCAN_TESTS_BACKEND=gpu``, on the device)
and as their generated code on the host (:mod:`hostexec`), on the same
inputs; both must equal the NumPy reference, so they equal each other. The
simulator is a Python model of the semantics written apart from the CUB shim
the host runs against, and the GPU runs CUB itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cases import block_cases as bc
from cases import fuzz
from cases.block_cases import ScanCase
from numba import cuda

import scan
from hostexec import corpus
from hostexec import families as fam
from hostexec import lookback as lb
from hostexec.kernels import run_scan_case
from hostexec.toolchain import Builder
from scan import block, warp

pytestmark = pytest.mark.sim

SCANS = [
    ScanCase(block=(64, 1, 1), items_per_thread=4, tiles=2, io="warp_transpose", prefix="running"),
    ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        reverse=True,
        block=(32, 2, 1),
        items_per_thread=3,
        tiles=2,
        io="transpose",
        short=5,
        prefix="running",
    ),
    ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="min",
        initial_value=5,
        reverse=True,
        algorithm="raking_memoize",
        block=(33, 1, 1),
        items_per_thread=0,
        tiles=2,
        io="direct",
        aggregate=True,
    ),
    ScanCase(
        entry="scan",
        mode="exclusive",
        op="user_add",
        prefix="stateless",
        block=(4, 8, 1),
        items_per_thread=2,
        io="striped",
        short=3,
        tiles=2,
        temp_storage="caller",
    ),
    ScanCase(
        entry="inclusive_scan",
        op="max",
        algorithm="warp_scans",
        block=(64, 1, 1),
        items_per_thread=2,
        prefix="count",
        tiles=2,
        auto_sync=False,
    ),
    ScanCase(
        lanes=8,
        entry="exclusive_scan",
        mode="exclusive",
        op="*",
        block=(32, 1, 1),
        items_per_thread=2,
        prefix="running",
        tiles=2,
    ),
]


@pytest.mark.breaks_state_contract
@pytest.mark.parametrize("case", SCANS, ids=[str(i) for i in range(len(SCANS))])
def test_block_and_warp_scans(builder: Builder, case: ScanCase) -> None:
    for uniform in (True, False):
        src, state_init = bc.scan_inputs(case, 2, seed=3, uniform_state=uniform)
        want = bc.scan_reference(case, src, state_init)
        simulated = bc.run_scan(case, src, state_init, cc=None)
        host = run_scan_case(builder, case, src, state_init, seed=1)
        fuzz.assert_matches(case, simulated, want)
        fuzz.assert_matches(case, host, want)


# ---------------------------------------------------------------------------
# the other families: one kernel each, written out


def _rank() -> Any:
    return cuda.threadIdx.x + cuda.blockDim.x * (
        cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z
    )


REDUCE = fam.ReduceCase(dtype="affine", op="compose", items_per_thread=2, short=77, broadcast=True)
COMPOSE = corpus.compose


@cuda.jit
def reduce_kernel(src: Any, out: Any) -> None:
    rank = cuda.threadIdx.x
    row = cuda.blockIdx.x
    items = cuda.local.array(2, corpus.AFFINE)
    for tile in range(2):
        base = tile * 128
        block.load(src[row], base, items)
        total = block.reduce(items, COMPOSE, valid=src.shape[1] - base, broadcast=True)
        out[row, tile, rank] = total


def test_reduce(builder: Builder) -> None:
    src = fam.reduce_inputs(REDUCE, 2, 0)
    want, defined = fam.reduce_reference(REDUCE, src)
    simulated = np.zeros(want.shape, want.dtype)
    reduce_kernel[2, 64](src, simulated)
    host = fam.run_reduce(builder, REDUCE, src, seed=2)
    np.testing.assert_array_equal(simulated[defined], want[defined])
    np.testing.assert_array_equal(host[defined], want[defined])


ZIP = fam.ZipCase(record="affine", reverse=True, short=9, store=("b",), tiles=2)
RUNNING = corpus.running_compose(corpus.AFFINE)


@cuda.jit
def zip_kernel(a: Any, b: Any, out_b: Any, states: Any) -> None:
    row = cuda.blockIdx.x
    items = cuda.local.array(4, corpus.AFFINE)
    state = cuda.local.array(1, corpus.AFFINE)
    state[0].a = 1
    state[0].b = 0
    for k in range(2):
        base = (1 - k) * 256
        for i in range(4):
            items[i].a = 77
            items[i].b = 66
        block.load((a[row], b[row]), base, items, oob_default=(1, 0))
        block.inclusive_scan(
            items, scan_op=COMPOSE, prefix_op=RUNNING, prefix_state=state, reverse=True
        )
        block.store(out_b[row], base, items, field="b")
        if cuda.threadIdx.x == 0:
            states[row, k] = state[0]


def test_zipped_io(builder: Builder) -> None:
    src = fam.zip_inputs(ZIP, 2, 0)
    want = fam.zip_reference(ZIP, src)
    out_b = np.full(src.shape, 55, np.int64)
    states = np.zeros((2, 2), corpus.AFFINE)
    zip_kernel[2, 64](np.ascontiguousarray(src["a"]), np.ascontiguousarray(src["b"]), out_b, states)
    host = fam.run_zip(builder, ZIP, src, seed=4)
    for got in ({"out_b": out_b, "states": states}, host):
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


WARP = fam.WarpCase(
    lanes=8, entry="inclusive_scan", op="max", prefix="running", load="striped", short=5
)
RUNNING_MAX = bc.running("max", "int32")


@cuda.jit
def warp_kernel(src: Any, dst: Any, state_init: Any, states: Any) -> None:
    rank = cuda.threadIdx.x
    lane = rank % 8
    r = cuda.blockIdx.x * 8 + rank // 8
    items = cuda.local.array(4, np.int32)
    state = cuda.local.array(1, np.int32)
    state[0] = state_init[r]
    for tile in range(2):
        for i in range(4):
            items[i] = bc.SENTINEL
        warp.load(src[r], tile * 32, items, oob_default=0, algorithm="striped", lanes=8)
        warp.inclusive_scan(
            items, scan_op="max", prefix_op=RUNNING_MAX, prefix_state=state, lanes=8
        )
        warp.store(dst[r], tile * 32, items, lanes=8)
        states[r, tile, lane] = state[0]


def test_warp_io_and_scan(builder: Builder) -> None:
    src, state = fam.warp_inputs(WARP, 2, 0)
    want = fam.warp_reference(WARP, src, state)
    dst = np.full(src.shape, bc.SENTINEL, np.int32)
    states = np.zeros(want["states"].shape, np.int32)
    warp_kernel[2, 64](src, dst, state.astype(np.int32), states)
    host = fam.run_warp(builder, WARP, src, state, seed=5)
    for got in ({"dst": dst, "states": states}, host):
        for key in ("dst", "states"):
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


LOOKBACK = lb.LookbackCase(
    dtype="int64", op="min", reverse=True, mode="exclusive", seeded=True, tiles=3, short=70
)


INT64_MAX = np.int64(np.iinfo(np.int64).max)  # min's identity: a partial tile's padding


@cuda.jit
def lookback_kernel(src: Any, dst: Any, status: Any) -> None:
    items = cuda.local.array(4, np.int64)
    base = (2 - cuda.blockIdx.x) * 256
    block.load(src[0], base, items, oob_default=INT64_MAX)
    block.exclusive_scan(
        items,
        scan_op="min",
        initial_value=3,
        prefix_op=scan.lookback,
        prefix_state=status,
        reverse=True,
    )
    block.store(dst[0], base, items)


def test_lookback(builder: Builder) -> None:
    src = lb.lookback_inputs(LOOKBACK, 0)
    want = lb.lookback_reference(LOOKBACK, src)
    dst = np.zeros_like(src)
    lookback_kernel[3, 64](src, dst, scan.tile_status(3, np.int64))
    host = lb.run_lookback(builder, LOOKBACK, src, seed=6)
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(host, want)


ORDERED = lb.LookbackCase(
    dtype="float32", block=(32, 1, 1), items_per_thread=1, tiles=70, deterministic=True
)


@cuda.jit
def ordered_kernel(src: Any, dst: Any, status: Any) -> None:
    items = cuda.local.array(1, np.float32)
    base = cuda.blockIdx.x * 32
    block.load(src[0], base, items, oob_default=0.0)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status)
    block.store(dst[0], base, items)


def test_a_deterministic_lookback_gives_the_generated_codes_bits(builder: Builder) -> None:
    """Float sums over a deterministic status: the same bits here as in the generated code.

    One non-zero item a tile (magnitudes over six decades), so every tile's
    aggregate is exact and only the combination of tiles rounds: the anchors
    and the tree must be the same in both (and on a GPU, in CUB's run).
    """
    rng = np.random.default_rng(8)
    src = np.zeros((1, ORDERED.length), np.float32)
    firsts = rng.standard_normal(ORDERED.tiles) * 10.0 ** rng.uniform(-3, 3, ORDERED.tiles)
    src[0, :: ORDERED.tile_items] = firsts.astype(np.float32)
    dst = np.zeros_like(src)
    ordered_kernel[ORDERED.tiles, 32](
        src, dst, scan.tile_status(ORDERED.tiles, np.float32, deterministic=True)
    )
    host = lb.run_lookback(builder, ORDERED, src, seed=4)
    np.testing.assert_array_equal(dst.view(np.uint32), host.view(np.uint32))
    in_order = np.cumsum(src, axis=1, dtype=np.float32)  # ((a0 + a1) + a2) + ...
    assert not np.array_equal(dst.view(np.uint32), in_order.view(np.uint32))
    np.testing.assert_allclose(dst, np.cumsum(src.astype(np.float64), axis=1), rtol=1e-5, atol=1e-2)
