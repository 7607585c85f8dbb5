# SPDX-License-Identifier: Apache-2.0
"""The generated block and warp scans, loads and stores, run on the host, equal NumPy.

Cases are the differential fuzzer's (:mod:`cases.fuzz`): a fixed list that
covers every option at least once (:data:`COVERAGE`), then cases drawn by
the fuzzer's own strategy with a fixed seed (``HOSTEXEC_FUZZ_SEED``, default
17; ``HOSTEXEC_FUZZ_EXAMPLES`` draws, default 40, of which those the library
must refuse are left to the fuzzer). Each runs its kernel on the host (the
generated providers against the CUB shim, every shared access checked) and
compares ``dst``, the per-thread states and the aggregates with
:func:`cases.block_cases.scan_reference`, for uniform and per-thread initial
states and two schedules of the threads.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from cases import block_cases as bc
from cases import fuzz
from cases.block_cases import ScanCase
from hypothesis import HealthCheck, given, seed, settings

from hostexec.kernels import harness_key, run_scan_case, scan_program
from hostexec.toolchain import Builder

SEED = int(os.environ.get("HOSTEXEC_FUZZ_SEED", "17"))
EXAMPLES = int(os.environ.get("HOSTEXEC_FUZZ_EXAMPLES", "40"))

#: Every option of the scans and of tile I/O, each in at least one case.
COVERAGE = [
    # integer sums with a stateful callback: thread items scanned first
    ScanCase(block=(128, 1, 1), items_per_thread=4, tiles=3, io="warp_transpose", prefix="running"),
    # reverse scans: exchanges through the mirrored rank, one and several items a thread
    ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        reverse=True,
        block=(64, 1, 1),
        items_per_thread=3,
        tiles=2,
        io="transpose",
        short=5,
        prefix="running",
    ),
    ScanCase(
        entry="inclusive_scan",
        op="max",
        reverse=True,
        algorithm="warp_scans",
        block=(64, 1, 1),
        items_per_thread=2,
        tiles=3,
        io="vectorize",
        prefix="count",
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
        entry="inclusive_scan",
        op="user_add",
        reverse=True,
        dtype="float32",
        block=(32, 2, 1),
        items_per_thread=2,
        prefix="running",
        state_dtype="float64",
        tiles=2,
        io="warp_transpose",
    ),
    ScanCase(entry="inclusive_sum", reverse=True, block=(7, 1, 1), items_per_thread=1, tiles=2),
    # operators, initial values, aggregates, stateless callbacks
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
        op="*",
        dtype="int8",
        block=(96, 1, 1),
        items_per_thread=3,
        initial_value=2,
        aggregate=True,
        tiles=2,
        io="default",
        valid_items=100,
        oob_default=1,
    ),
    ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="^",
        dtype="uint16",
        block=(16, 2, 2),
        items_per_thread=2,
        algorithm="warp_scans",
        prefix="running",
        state_dtype="uint64",
        tiles=3,
        io="warp_transpose_timesliced",
        short=40,
        temp_storage="dynamic",
        auto_sync=False,
    ),
    ScanCase(
        entry="inclusive_sum",
        dtype="float64",
        algorithm="warp_scans",
        block=(256, 1, 1),
        items_per_thread=4,
        prefix="running",
        state_dtype="float64",
        io="vectorize",
        tiles=2,
        short=700,
    ),
    ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        dtype="uint8",
        block=(3, 3, 3),
        items_per_thread=0,
        prefix="count",
        state_dtype="uint64",
        io="direct",
        tiles=3,
        valid_items=-3,
        auto_sync=False,
        temp_storage="caller",
    ),
    ScanCase(entry="inclusive_scan", op="|", dtype="int64", block=(5, 3, 1), out_of_place=True),
    ScanCase(entry="none", block=(64, 1, 1), items_per_thread=4, io="transpose", short=70),
    # warp scans: every logical warp size, callbacks, initial values, aggregates
    ScanCase(lanes=1, block=(4, 1, 1), items_per_thread=2, prefix="running", tiles=2),
    ScanCase(
        lanes=2,
        entry="exclusive_scan",
        mode="exclusive",
        op="max",
        initial_value=3,
        block=(6, 1, 1),
        items_per_thread=0,
        aggregate=True,
    ),
    ScanCase(
        lanes=4,
        entry="exclusive_sum",
        mode="exclusive",
        block=(2, 4, 4),
        items_per_thread=3,
        prefix="running",
        tiles=2,
        io="striped",
        short=7,
    ),
    ScanCase(lanes=8, entry="inclusive_scan", op="user_add", block=(64, 1, 1), aggregate=True),
    ScanCase(
        lanes=16,
        entry="exclusive_scan",
        mode="exclusive",
        op="*",
        dtype="int32",
        block=(32, 1, 1),
        items_per_thread=2,
        prefix="running",
        tiles=3,
    ),
    ScanCase(
        lanes=32,
        entry="exclusive_sum",
        mode="exclusive",
        dtype="float32",
        block=(96, 1, 1),
        items_per_thread=2,
        prefix="running",
        state_dtype="float32",
        tiles=2,
        io="warp_transpose",
    ),
]


def _draw(count: int, base: int) -> list[ScanCase]:
    drawn: list[ScanCase] = []

    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @seed(base)
    @given(case=fuzz.cases())
    def collect(case: ScanCase) -> None:
        drawn.append(case)

    collect()
    return [case for case in drawn if not bc.expected_refusals(case)]


DRAWN = _draw(EXAMPLES, SEED)
CASES = COVERAGE + DRAWN


def _id(case: Any) -> str:
    shape = "x".join(map(str, case.block))
    what = f"warp{case.lanes}" if case.is_warp else case.algorithm
    return f"{case.entry}-{case.op}-{case.dtype}-{shape}-{what}-{case.io}"


@pytest.fixture(scope="module")
def prebuilt(builder: Builder) -> Builder:
    """Every case's harness, building in parallel before the first test waits for one."""
    for case in CASES:
        builder.submit(scan_program(harness_key(case)).source(), str(case))
    return builder


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_id(c)}" for i, c in enumerate(CASES)])
def test_scan_case_equals_numpy(prebuilt: Builder, case: ScanCase) -> None:
    for k, uniform in enumerate((True, False)):
        src, state_init = bc.scan_inputs(case, 2, seed=k, uniform_state=uniform)
        want = bc.scan_reference(case, src, state_init)
        got = run_scan_case(prebuilt, case, src, state_init, seed=k * 7919)
        fuzz.assert_matches(case, got, want)


def test_the_draws_cover_warp_and_reverse_scans() -> None:
    assert any(c.is_warp for c in DRAWN)
    assert any(c.reverse for c in CASES)
    assert len({harness_key(c) for c in CASES}) < len(CASES)  # harnesses are shared
