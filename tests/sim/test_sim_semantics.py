# SPDX-License-Identifier: Apache-2.0
"""CUB's observable block-scan semantics, reproduced by the simulator backend.

The cases come from ``tests/cases/block_cases.py``; the GPU suite runs the same
definitions on a device.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from cases import block_cases as bc
from cases.block_cases import ScanCase
from numba import cuda

import statefn
from scan import ScanTypeError, block

pytestmark = pytest.mark.sim


def check(case: ScanCase, rows: int = 1, seed: int = 0, uniform_state: bool = True) -> dict:
    src, state_init = bc.scan_inputs(case, rows, seed=seed, uniform_state=uniform_state)
    got = bc.run_scan(case, src, state_init)
    want = bc.scan_reference(case, src, state_init)
    bc.assert_scan_matches(case, got, want)
    return got


# ---------------------------------------------------------------------------
# who calls the prefix callback


CALLERS = [
    ((32, 1, 1), "raking", 32),
    ((32, 1, 1), "warp_scans", 32),
    ((64, 1, 1), "raking", 32),
    ((64, 1, 1), "raking_memoize", 32),
    ((64, 1, 1), "warp_scans", 32),
    ((62, 1, 1), "raking", 31),
    ((33, 1, 1), "raking_memoize", 17),
    ((7, 1, 1), "raking", 7),
    ((8, 16, 1), "raking", 32),
    ((8, 16, 1), "warp_scans", 32),
    ((4, 4, 8), "raking_memoize", 32),
    ((4, 4, 8), "warp_scans", 32),
]


@pytest.mark.parametrize(("shape", "algorithm", "n_callers"), CALLERS)
def test_first_warp_calls_the_callback(shape, algorithm, n_callers):
    assert bc.callers(shape[0] * shape[1] * shape[2], algorithm) == n_callers
    case = ScanCase(block=shape, algorithm=algorithm, prefix="count", state_dtype="int32", tiles=2)
    got = check(case)
    calls = got["states"][0]  # tiles x threads: calls made so far by each thread
    threads = case.threads
    expected = np.zeros((2, threads), dtype=np.int32)
    expected[0, :n_callers] = 1
    expected[1, :n_callers] = 2
    np.testing.assert_array_equal(calls, expected)


@pytest.mark.breaks_state_contract
@pytest.mark.parametrize("algorithm", ["raking", "raking_memoize", "warp_scans"])
@pytest.mark.parametrize("entry", ["inclusive_sum", "exclusive_sum"])
def test_only_thread_zero_return_counts(entry, algorithm):
    # every thread starts from another state (violating the contract on purpose):
    # the output follows thread 0's state, each calling lane advances its own
    mode = "inclusive" if entry.startswith("in") else "exclusive"
    case = ScanCase(
        entry=entry, mode=mode, block=(64, 1, 1), algorithm=algorithm, prefix="running", tiles=2
    )
    got = check(case, uniform_state=False)
    states = got["states"][0]
    assert len(np.unique(states[-1, :32])) > 1  # lanes kept their own (different) states


@pytest.mark.sim_only
@pytest.mark.breaks_state_contract  # each thread starts from its own state
def test_callbacks_run_in_lane_order_each_in_its_own_thread():
    # a NumPy array, not a list: the simulator refuses callbacks that use
    # Python objects the compiler cannot type
    seen = np.full((64, 2), -1, dtype=np.int64)
    count = np.zeros(1, dtype=np.int64)

    @statefn.stateful(np.int64)
    def record(state, aggregate):
        seen[count[0]] = (threading.current_thread().thread_id, state[0])
        count[0] += 1
        state[0] += 1
        return state[0] - 1

    @cuda.jit
    def kernel(out):
        tid = cuda.threadIdx.x
        state = cuda.local.array(1, np.int64)
        state[0] = tid * 100
        out[tid] = block.inclusive_sum(np.int32(1), prefix_op=record, prefix_state=state)

    out = np.zeros(40, dtype=np.int32)
    kernel[1, 40](out)
    n = bc.callers(40, "raking")
    assert seen[: count[0]].tolist() == [[lane, lane * 100] for lane in range(n)]
    np.testing.assert_array_equal(out, np.arange(1, 41))


# ---------------------------------------------------------------------------
# entry points, payloads, options


ENTRY_CASES = [
    ScanCase(entry="inclusive_sum", mode="inclusive"),
    ScanCase(entry="exclusive_sum", mode="exclusive"),
    ScanCase(entry="inclusive_scan", mode="inclusive", op="max"),
    ScanCase(entry="exclusive_scan", mode="exclusive", op="min", initial_value=5),
    ScanCase(entry="scan", mode="exclusive", op="+"),
    ScanCase(entry="scan", mode="inclusive", op="user_add"),
    ScanCase(entry="inclusive_scan", mode="inclusive", op="+", initial_value=100),
    ScanCase(entry="exclusive_scan", mode="exclusive", op="*", initial_value=1, dtype="int64"),
]


@pytest.mark.parametrize("ipt", [0, 3])
@pytest.mark.parametrize("case", ENTRY_CASES, ids=lambda c: f"{c.entry}-{c.mode}-{c.op}")
def test_entry_points(case, ipt):
    check(ScanCase(**{**case.__dict__, "items_per_thread": ipt}))


@pytest.mark.parametrize(
    "case",
    [
        ScanCase(entry="inclusive_sum", aggregate=True, items_per_thread=2, block=(4, 8, 1)),
        ScanCase(
            entry="exclusive_scan", mode="exclusive", op="max", initial_value=-7, aggregate=True
        ),
        ScanCase(entry="scan", mode="inclusive", op="^", aggregate=True, items_per_thread=0),
    ],
)
def test_block_aggregate(case):
    got = check(case)
    assert (got["aggs"] == got["aggs"][..., :1]).all()  # every thread gets it


@pytest.mark.parametrize("out_of_place", [False, True])
def test_multi_tile_row_scan_int64_state_int32_values(out_of_place):
    case = ScanCase(
        prefix="running",
        items_per_thread=4,
        tiles=4,
        block=(64, 1, 1),
        out_of_place=out_of_place,
    )
    got = check(case, rows=2)
    src, state_init = bc.scan_inputs(case, 2)
    expected = np.cumsum(src, axis=1) + state_init[:, :1]
    np.testing.assert_array_equal(got["dst"], expected.astype(np.int32))
    np.testing.assert_array_equal(got["states"][:, -1, :32], expected[:, -1:].repeat(32, axis=1))


def test_int32_prefix_wraps_while_int64_state_does_not():
    case = ScanCase(entry="exclusive_sum", mode="exclusive", prefix="running", tiles=2)
    src = np.full((1, 64), 1, dtype=np.int32)
    state_init = np.full((1, 32), 2**31 - 10, dtype=np.int64)
    got = bc.run_scan(case, src, state_init)
    bc.assert_scan_matches(case, got, bc.scan_reference(case, src, state_init))
    assert got["dst"][0, 0] == 2**31 - 10
    assert got["dst"][0, 32] == np.int32(-(2**31)) + 22  # 2**31 + 22, wrapped in int32
    assert got["states"][0, 1, 0] == 2**31 - 10 + 64


def test_float64_state_float32_values():
    case = ScanCase(
        entry="inclusive_scan",
        mode="inclusive",
        dtype="float32",
        state_dtype="float64",
        prefix="running",
        items_per_thread=2,
        tiles=3,
        block=(8, 4, 1),
    )
    check(case, rows=2)


@pytest.mark.parametrize("op", ["min", "max", "*", "&"])
def test_generic_operators_with_running_prefix(op):
    case = ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op=op,
        prefix="running",
        tiles=2,
        dtype="int32",
        state_dtype="int32",
        items_per_thread=2,
    )
    check(case, seed=3)


def test_stateless_prefix_and_user_operator():
    check(ScanCase(entry="inclusive_scan", op="user_add", prefix="stateless", items_per_thread=2))
    check(ScanCase(entry="exclusive_sum", mode="exclusive", prefix="stateless", block=(48, 1, 1)))


def test_explicit_threads_matching_the_launch():
    check(ScanCase(block=(4, 4, 2), explicit_threads=True, algorithm="warp_scans"))


def test_auto_sync_off():
    check(ScanCase(auto_sync=False, prefix="running", tiles=2, items_per_thread=2))


def test_exclusive_sum_thread_zero_gets_zero():
    case = ScanCase(entry="exclusive_sum", mode="exclusive", items_per_thread=2, dtype="float64")
    got = check(case)
    assert got["dst"][0, 0] == 0.0


# ---------------------------------------------------------------------------
# errors


@pytest.mark.sim_only
def test_callback_exception_propagates():
    @statefn.stateless
    def broken(aggregate):
        raise ZeroDivisionError("callback failed on purpose")

    @cuda.jit
    def kernel(out):
        out[cuda.threadIdx.x] = block.inclusive_sum(np.int32(1), prefix_op=broken)

    with pytest.raises(ZeroDivisionError, match="callback failed on purpose"):
        kernel[1, 64](np.zeros(64, dtype=np.int32))


@pytest.mark.sim_only
def test_divergent_calls_are_reported():
    @cuda.jit
    def kernel(out):
        tid = cuda.threadIdx.x
        if tid < 16:
            out[tid] = block.inclusive_sum(np.int32(1))
        else:
            cuda.syncthreads()
            cuda.syncthreads()

    with pytest.raises(RuntimeError, match="at this call 16 of 32 threads arrived"):
        kernel[1, 32](np.zeros(32, dtype=np.int32))


@pytest.mark.sim_only
def test_host_call_is_refused():
    # the simulator is already on: the message must not tell the user to turn it on
    with pytest.raises(RuntimeError) as info:
        block.inclusive_sum(np.int32(1))
    message = str(info.value)
    assert message.startswith(
        "scan.block.inclusive_sum() was called from host code, not inside a @cuda.jit kernel;"
    )
    assert "kernel[blocks, threads](...)" in message
    assert "before importing numba" not in message


# ---------------------------------------------------------------------------
# other spellings and operands


@cuda.jit(device=True)
def plus_seven(block_aggregate):
    return block_aggregate - block_aggregate + 7


def times(a, b):
    return a * b


@cuda.jit
def spellings_kernel(src, dst):
    tid = cuda.threadIdx.x
    temp = cuda.shared.array(256, np.uint8)
    x = block.inclusive_sum(src[tid], prefix_op=plus_seven, temp_storage=temp)
    y = block.exclusive_scan(src[tid], scan_op=statefn.scan_op(times), initial_value=2)
    dst[0, tid] = x
    dst[1, tid] = y


@pytest.mark.sim_only
def test_device_function_prefix_python_operator_and_temp_storage():
    src = np.arange(1, 9, dtype=np.int64)
    dst = np.zeros((2, 8), dtype=np.int64)
    spellings_kernel[1, 8](src, dst)
    np.testing.assert_array_equal(dst[0], np.cumsum(src) + 7)
    np.testing.assert_array_equal(dst[1], 2 * np.concatenate([[1], np.cumprod(src)[:-1]]))


@cuda.jit
def wrong_temp_kernel(src):
    temp = cuda.shared.array(64, np.int32)
    src[cuda.threadIdx.x] = block.inclusive_sum(src[cuda.threadIdx.x], temp_storage=temp)


def test_temp_storage_must_be_uint8():
    with pytest.raises(ScanTypeError, match=r"temp_storage must be a 1-D uint8 shared array"):
        wrong_temp_kernel[1, 32](np.zeros(32, dtype=np.int32))
