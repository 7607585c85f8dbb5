# SPDX-License-Identifier: Apache-2.0
"""Differential fuzzing: every drawn case is refused as documented or equals NumPy.

The case space and the settings (seed, examples, recording) are in
:mod:`cases.fuzz`. The run test is marked ``sim``: CI runs it in the simulator,
tools/gpu_suite.sh on the GPU in several shards (``SCAN_TESTS_BACKEND=gpu``),
recording each case's outputs; the replay test then runs recorded GPU cases in
the simulator and compares the outputs byte for byte. The compile-path test
compiles and links drawn cases for compute capability 9.0 without a GPU.

A failure that hypothesis shrank goes into :data:`REGRESSIONS`, which every
run replays first (``@example``) and :func:`test_regression` runs on its own.
Its warp-scan edge cases make sure every run covers ``scan.warp`` too.
"""

from __future__ import annotations

import contextlib
import os
import traceback

import pytest
from cases import block_cases as bc
from cases import fuzz
from cases.block_cases import ScanCase
from helpers.kernels import CC
from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

# (case, rows, inputs' seed, uniform initial state): shrunk failures and edge
# cases, run before the random draws
REGRESSIONS: list[tuple[ScanCase, int, int, bool]] = [
    # float32 products stored into a float16 array past its range: inf, as the GPU rounds
    (
        ScanCase(
            entry="inclusive_scan",
            mode="inclusive",
            op="*",
            dtype="float32",
            block=(1, 1, 1),
            items_per_thread=3,
            tiles=1,
            algorithm="raking",
            prefix="none",
            state_dtype="int64",
            initial_value=6,
            aggregate=False,
            out_of_place=False,
            explicit_threads=False,
            auto_sync=False,
            io="default",
            short=1,
            valid_items=1,
            oob_default=None,
            temp_storage="implicit",
            reverse=True,
            array="float16",
        ),
        1,
        4,
        False,
    ),
    # a load that starts past the end of the row, negative valid_items
    (
        ScanCase(
            block=(33, 1, 1),
            items_per_thread=2,
            tiles=2,
            prefix="running",
            io="transpose",
            short=67,
            valid_items=-3,
        ),
        1,
        0,
        True,
    ),
    # striped tiles scanned out of array order, 3-D block, dynamic temp storage
    (
        ScanCase(
            entry="exclusive_scan",
            mode="exclusive",
            op="max",
            dtype="int16",
            block=(2, 4, 4),
            items_per_thread=3,
            tiles=2,
            prefix="count",
            state_dtype="int64",
            io="striped",
            short=5,
            oob_default=0,
            temp_storage="dynamic",
            auto_sync=False,
        ),
        2,
        1,
        False,
    ),
    # a stateless callback's agg - agg + 10 is NaN when the product of the
    # padding overflows float32: the reference runs the callback's arithmetic
    (
        ScanCase(
            entry="inclusive_scan",
            op="*",
            dtype="float32",
            block=(32, 1, 1),
            items_per_thread=0,
            prefix="stateless",
            io="default",
            valid_items=1,
            auto_sync=False,
        ),
        2,
        1916,
        True,
    ),
    # likewise the counting callback's agg - agg (its return) is NaN there
    (
        ScanCase(
            entry="inclusive_scan",
            op="*",
            dtype="float32",
            items_per_thread=0,
            prefix="count",
            state_dtype="float32",
            io="default",
            valid_items=1,
        ),
        1,
        0,
        True,
    ),
    # a same-width state array of another kind is refused
    (
        ScanCase(prefix="running", state_dtype="int64", state_array="uint64"),
        1,
        0,
        True,
    ),
    # warp scans: logical warps of 8 lanes numbered by linear rank in a 3-D
    # block, each carrying its own prefix across striped tiles of a short row;
    # every lane starts from its own state (each lane's evolves on its own, each
    # warp's lane 0 seeds it)
    (
        ScanCase(
            entry="exclusive_scan",
            mode="exclusive",
            op="max",
            dtype="int16",
            block=(2, 4, 4),
            items_per_thread=3,
            tiles=2,
            prefix="running",
            state_dtype="int64",
            io="striped",
            short=5,
            lanes=8,
        ),
        2,
        3,
        False,
    ),
    # one-lane warps: every thread scans its own items, with warp_aggregate
    (
        ScanCase(
            entry="scan",
            mode="exclusive",
            op="user_add",
            dtype="uint8",
            block=(5, 3, 1),
            items_per_thread=2,
            initial_value=4,
            aggregate=True,
            explicit_threads=True,
            lanes=1,
        ),
        1,
        0,
        True,
    ),
    # a block of 15 threads is not a whole number of 4-lane warps
    (ScanCase(block=(5, 3, 1), lanes=4), 1, 0, True),
    # complex64 products past float32's range: CUDA's complex multiply keeps inf + 0j
    # where NumPy's gives nan + nanj; both overflowed
    (
        ScanCase(
            entry="inclusive_scan",
            mode="inclusive",
            op="*",
            dtype="complex64",
            block=(7, 1, 1),
            items_per_thread=4,
            algorithm="raking",
            aggregate=True,
            short=27,
            io="default",
            temp_storage="implicit",
            reverse=True,
        ),
        1,
        0,
        False,
    ),
]

_SETTINGS = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@contextlib.contextmanager
def contract_checks(on: bool):
    """Turn the simulator's state-contract checks off while a case breaks the contract on purpose.

    Threads that start from different states are what CUB's contract forbids
    and what the simulator refuses (StateContractError), for a block scan's
    calling threads and for a warp scan's lanes alike; the GPU runs them, and
    the reference says what each lane's state becomes.
    """
    if on:
        yield
        return
    old = os.environ.get("STATEFN_SCAN_SIM_CONTRACT")
    os.environ["STATEFN_SCAN_SIM_CONTRACT"] = "off"
    try:
        yield
    finally:
        if old is None:
            del os.environ["STATEFN_SCAN_SIM_CONTRACT"]
        else:
            os.environ["STATEFN_SCAN_SIM_CONTRACT"] = old


def run_case(case: ScanCase, rows: int, seed_: int, uniform: bool) -> dict[str, object]:
    """Run *case* (refused as documented, or equal to NumPy); returns its record."""
    with contract_checks(uniform or not case.stateful):
        return _run_case(case, rows, seed_, uniform)


def _run_case(case: ScanCase, rows: int, seed_: int, uniform: bool) -> dict[str, object]:
    src, state_init = bc.scan_inputs(case, rows, seed=seed_, uniform_state=uniform)
    entry: dict[str, object] = {
        "case": fuzz.case_to_json(case),
        "rows": rows,
        "seed": seed_,
        "uniform": uniform,
    }
    refusals = bc.expected_refusals(case)
    if refusals:
        with pytest.raises(tuple(kind for kind, _ in refusals)) as info:
            bc.run_scan(case, src, state_init)
        message = str(info.value)
        assert any(isinstance(info.value, kind) and part in message for kind, part in refusals), (
            f"refused with {type(info.value).__name__}: {message}; expected one of {refusals}"
        )
        return {**entry, "outcome": "refused", "error": type(info.value).__name__}
    got = bc.run_scan(case, src, state_init)
    fuzz.assert_matches(case, got, bc.scan_reference(case, src, state_init))
    return {**entry, "outcome": "ran", "digest": fuzz.digest(case, got), "exact": fuzz.exact(case)}


def _with_regressions(test):
    for case, rows, seed_, uniform in reversed(REGRESSIONS):
        test = example(case=case, rows=rows, seed_=seed_, uniform=uniform)(test)
    return test


@pytest.mark.sim
@settings(max_examples=fuzz.EXAMPLES, **_SETTINGS)
@seed(fuzz.HYPOTHESIS_SEED)
@_with_regressions
@given(
    case=fuzz.cases(),
    rows=st.integers(1, 2),
    seed_=st.integers(0, 2**16),
    uniform=st.booleans(),
)
def test_fuzz_case(case, rows, seed_, uniform):
    try:
        fuzz.record(run_case(case, rows, seed_, uniform))
    except BaseException as exc:
        fuzz.record_failure(
            f"({case!r}, {rows}, {seed_}, {uniform}),  # {fuzz.describe()}: "
            + traceback.format_exception_only(exc)[-1].strip().replace("\n", " ")[:300]
        )
        raise


@pytest.mark.sim
@pytest.mark.parametrize(
    ("case", "rows", "seed_", "uniform"), REGRESSIONS, ids=[str(i) for i in range(len(REGRESSIONS))]
)
def test_regression(case, rows, seed_, uniform):
    run_case(case, rows, seed_, uniform)


@pytest.mark.nvrtc
@settings(max_examples=fuzz.COMPILE_EXAMPLES, **_SETTINGS)
@seed(fuzz.HYPOTHESIS_SEED)
@given(case=fuzz.cases(compile_only=True))
def test_fuzz_case_compiles(case):
    """The compile path: typed, generated, compiled and linked for sm_90, or refused."""
    from helpers.kernels import compile_kernel, link_cubin
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype

    def array(dtype: str, ndim: int):
        return types.Array(from_dtype(bc.array_dtype(dtype)), ndim, "C")

    kernel = bc.scan_kernel(case, bc.temp_layout(case, CC)).py_func
    state = case.state_array or case.state_dtype
    argtypes = (
        array(case.array or case.dtype, 2),
        array(case.array or case.dtype, 2),
        array(case.state_dtype, 3),
        array(case.dtype, 3),
        array(state, 2),
    )
    refusals = bc.expected_refusals(case)
    if refusals:
        with pytest.raises(tuple(kind for kind, _ in refusals)) as info:
            compile_kernel(kernel, argtypes, cc=CC)
        assert any(part in str(info.value) for _, part in refusals), str(info.value)
        return
    cubin = link_cubin(compile_kernel(kernel, argtypes, cc=CC), cc=CC)
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.sim_only
@pytest.mark.skipif(fuzz.REPLAY is None, reason="set SCAN_FUZZ_REPLAY to a GPU run's record")
def test_replay_gpu_record():
    """Cases a GPU run recorded give the simulator the same outputs, byte for byte."""
    entries = fuzz.recorded()
    if not entries:  # tools/gpu_suite.sh reports the total replayed
        pytest.skip(f"no GPU cases for replay shard {fuzz.REPLAY_SHARD} in {fuzz.REPLAY}")
    mismatches = []
    compared = 0
    for entry in entries:
        case = fuzz.case_from_json(entry["case"])
        got = run_case(case, entry["rows"], entry["seed"], entry["uniform"])
        if entry["exact"]:
            compared += 1
            if got["digest"] != entry["digest"]:
                mismatches.append(repr(case))
    # tools/gpu_suite.sh adds these up (pytest -s)
    print(f"replayed {len(entries)} GPU cases, {compared} compared byte for byte")
    assert not mismatches, f"{len(mismatches)} of {len(entries)} differ: {mismatches[:5]}"
