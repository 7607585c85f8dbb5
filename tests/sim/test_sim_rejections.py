# SPDX-License-Identifier: Apache-2.0
"""The simulator refuses exactly what the compiled path refuses, with the same words.

The expected messages are the compiled path's (tests/scan/test_plan_rejections.py);
the simulator prefixes them with the thread and block index.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import SIMULATOR
from numba import cuda

import statefn
from scan import PlanError, ScanTypeError, block

pytestmark = pytest.mark.sim


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def expect(kernel, launch, kind, message, arrays=None):
    arrays = arrays or (np.zeros(64, dtype=np.int32),)
    with pytest.raises(kind) as info:
        kernel[launch](*arrays)
    # compiled, the rejection is reported at the call's line first
    got = str(getattr(info.value, "rejection", info.value))
    if SIMULATOR:  # the simulator names the thread that raised
        assert re.fullmatch(r"tid=\[\d+, \d+, \d+\] ctaid=\[\d+, \d+, \d+\]: (.*)", got, re.S), got
        got = got.split(": ", 1)[1]
    assert got == message


@cuda.jit
def prefix_with_initial_value(a):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    a[cuda.threadIdx.x] = block.inclusive_scan(
        a[cuda.threadIdx.x],
        scan_op="max",
        initial_value=0,
        prefix_op=running_total,
        prefix_state=state,
    )


def test_prefix_op_with_initial_value():
    expect(
        prefix_with_initial_value,
        (1, 32),
        PlanError,
        "inclusive_scan: prefix_op= and initial_value= cannot be combined: the prefix "
        "callback's return value seeds the scan (CUB has no overload taking both); drop "
        "initial_value= or fold it into the callback's initial state",
    )


@cuda.jit
def stateful_without_state(a):
    a[cuda.threadIdx.x] = block.inclusive_sum(a[cuda.threadIdx.x], prefix_op=running_total)


def test_stateful_without_state():
    expect(
        stateful_without_state,
        (1, 32),
        PlanError,
        "inclusive_sum: prefix_op=running_total is stateful but prefix_state= is missing; "
        "pass a cuda.local.array(1, np.int64) initialised equally in every thread",
    )


@cuda.jit
def wrong_state_dtype(a):
    state = cuda.local.array(1, np.int32)
    state[0] = 0
    a[cuda.threadIdx.x] = block.inclusive_sum(
        a[cuda.threadIdx.x], prefix_op=running_total, prefix_state=state
    )


def test_state_dtype_mismatch():
    expect(
        wrong_state_dtype,
        (1, 32),
        ScanTypeError,
        "inclusive_sum: prefix_state has dtype int32 but the callback declares state dtype "
        "int64; allocate cuda.local.array(1, np.int64) (dtypes must match exactly)",
    )


@pytest.mark.parametrize(
    ("declared", "given"),
    [("int64", "uint64"), ("int64", "float64"), ("float64", "int64"), ("int32", "uint32")],
)
def test_same_width_or_other_kind_state_is_refused(declared, given):
    callback = statefn.stateful(np.dtype(declared), name="running_total")(running_total.op)
    state_type = np.dtype(given).type

    @cuda.jit
    def kernel(a):
        state = cuda.local.array(1, state_type)
        state[0] = 0
        a[cuda.threadIdx.x] = block.inclusive_sum(
            a[cuda.threadIdx.x], prefix_op=callback, prefix_state=state
        )

    expect(
        kernel,
        (1, 32),
        ScanTypeError,
        f"inclusive_sum: prefix_state has dtype {given} but the callback declares state dtype "
        f"{declared}; allocate cuda.local.array(1, np.{declared}) (dtypes must match exactly)",
    )


@cuda.jit
def warp_scans_48(a):
    a[cuda.threadIdx.x] = block.inclusive_sum(a[cuda.threadIdx.x], algorithm="warp_scans")


def test_warp_scans_needs_multiple_of_32():
    expect(
        warp_scans_48,
        (1, 48),
        PlanError,
        "inclusive_sum: algorithm='warp_scans' needs a block size that is a multiple of 32 "
        "(got 48 threads from block (48, 1, 1)); CUB would silently fall back to another "
        "algorithm, so choose one explicitly (e.g. 'raking' or 'transpose')",
    )


@cuda.jit
def exclusive_max_without_seed(a):
    a[cuda.threadIdx.x] = block.exclusive_scan(a[cuda.threadIdx.x], scan_op="max")


def test_exclusive_non_sum_needs_initial_value():
    expect(
        exclusive_max_without_seed,
        (1, 32),
        PlanError,
        "exclusive_scan: an exclusive scan with scan_op='max' needs initial_value= or "
        "prefix_op=: thread 0's first output would be undefined (only sums have an identity "
        "CUB can use)",
    )


@cuda.jit
def threads_disagree(a):
    a[cuda.threadIdx.x] = block.inclusive_sum(a[cuda.threadIdx.x], threads=64)


def test_threads_disagreeing_with_launch():
    expect(
        threads_disagree,
        (1, 32),
        PlanError,
        "inclusive_sum: the kernel was launched with block shape (32, 1, 1) but the call "
        "says threads=(64, 1, 1); make them agree (or drop threads= to use the launch's)",
    )


@cuda.jit
def bitwise_on_floats(a):
    a[cuda.threadIdx.x] = block.inclusive_scan(a[cuda.threadIdx.x], scan_op="^")


def test_bitwise_operator_on_floats():
    expect(
        bitwise_on_floats,
        (1, 32),
        ScanTypeError,
        "inclusive_scan: scan_op='^' is a bitwise operator but values are float32; use an "
        "integer dtype or another operator",
        arrays=(np.zeros(32, dtype=np.float32),),
    )


@cuda.jit
def warp_transpose_load_48(a):
    items = cuda.local.array(2, np.int32)
    block.load(a, 0, items, algorithm="warp_transpose")


def test_load_warp_transpose_needs_multiple_of_32():
    expect(
        warp_transpose_load_48,
        (1, 48),
        PlanError,
        "load: algorithm='warp_transpose' needs a block size that is a multiple of 32 "
        "(got 48 threads from block (48, 1, 1)); CUB would silently fall back to another "
        "algorithm, so choose one explicitly (e.g. 'raking' or 'transpose')",
    )


@cuda.jit
def store_with_oob_default(a):
    items = cuda.local.array(2, np.int32)
    block.store(a, 0, items, oob_default=0)


def test_store_has_no_oob_default():
    # store() has no oob_default parameter: refused as on the compiled path
    with pytest.raises(PlanError, match="store: unexpected keyword argument oob_default="):
        store_with_oob_default[1, 32](np.zeros(64, dtype=np.int32))


@cuda.jit
def boolean_value(a):
    a[cuda.threadIdx.x] = block.inclusive_sum(True)


def test_boolean_value():
    expect(
        boolean_value,
        (1, 32),
        ScanTypeError,
        "inclusive_sum: values is a boolean; use an integer dtype",
    )
