# SPDX-License-Identifier: Apache-2.0
"""The generated block and warp scans, loads and stores, run on the host, equal NumPy.

Cases are the differential fuzzer's (:mod:`hostexec.suite`): a fixed list that
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

from typing import Any

import pytest
from cases import block_cases as bc
from cases import fuzz
from cases.block_cases import ScanCase

from hostexec.kernels import harness_key, run_scan_case, scan_program
from hostexec.suite import CASES, DRAWN
from hostexec.toolchain import Builder


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
