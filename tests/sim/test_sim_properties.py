# SPDX-License-Identifier: Apache-2.0
"""Property tests: random scan configurations against the NumPy reference."""

from __future__ import annotations

import pytest
from cases import block_cases as bc
from cases.block_cases import ScanCase
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.sim

BLOCKS = [(1, 1, 1), (7, 1, 1), (32, 1, 1), (33, 1, 1), (64, 1, 1), (4, 8, 1), (2, 4, 4)]
DTYPES = ["int32", "int64", "uint8", "float32", "float64"]
ENTRIES = {
    "inclusive_sum": "inclusive",
    "exclusive_sum": "exclusive",
    "inclusive_scan": "inclusive",
    "exclusive_scan": "exclusive",
}


@st.composite
def scan_cases(draw: st.DrawFn, prefix: bool) -> ScanCase:
    shape = draw(st.sampled_from(BLOCKS))
    threads = shape[0] * shape[1] * shape[2]
    dtype = draw(st.sampled_from(DTYPES))
    float_ = dtype.startswith("float")
    entry = draw(st.sampled_from([*ENTRIES, "scan"]))
    mode = ENTRIES.get(entry) or draw(st.sampled_from(["inclusive", "exclusive"]))
    ops = [o for o in bc.OPERATORS if not (float_ and o in bc.BITWISE)]
    op = "+" if entry.endswith("_sum") else draw(st.sampled_from([*ops, "user_add"]))
    algorithms = ["raking", "raking_memoize"] + (["warp_scans"] if threads % 32 == 0 else [])
    initial_value = None
    if not prefix and not entry.endswith("_sum"):
        needs = mode == "exclusive" and op not in ("+", "user_add")
        if needs or draw(st.booleans()):
            initial_value = draw(st.integers(0, 9))
    if op == "user_add" and mode == "exclusive" and initial_value is None and not prefix:
        initial_value = 0  # a user operator has no identity either
    if prefix:
        state_dtype = draw(st.sampled_from([dtype, "float64" if float_ else "int64"]))
    else:
        state_dtype = "int64"
    return ScanCase(
        entry=entry,
        mode=mode,
        op=op,
        dtype=dtype,
        block=shape,
        items_per_thread=draw(st.integers(0, 4)),
        tiles=draw(st.integers(1, 4)) if prefix else 1,
        algorithm=draw(st.sampled_from(algorithms)),
        prefix="running" if prefix else "none",
        state_dtype=state_dtype,
        initial_value=initial_value,
        aggregate=not prefix and draw(st.booleans()),
    )


def run(case: ScanCase, rows: int, seed: int, uniform_state: bool = True) -> None:
    src, state_init = bc.scan_inputs(case, rows, seed=seed, uniform_state=uniform_state)
    got = bc.run_scan(case, src, state_init)
    bc.assert_scan_matches(case, got, bc.scan_reference(case, src, state_init))


@settings(deadline=None)
@given(case=scan_cases(prefix=False), rows=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_scans_match_reference(case, rows, seed):
    run(case, rows, seed)


@settings(deadline=None)
@pytest.mark.breaks_state_contract  # draws per-thread initial states too
@given(
    case=scan_cases(prefix=True),
    rows=st.integers(1, 2),
    seed=st.integers(0, 2**16),
    uniform=st.booleans(),
)
def test_prefix_scans_match_reference(case, rows, seed, uniform):
    run(case, rows, seed, uniform_state=uniform)
