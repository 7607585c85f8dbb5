# SPDX-License-Identifier: Apache-2.0
"""Every call the library refuses is refused while typing, before any C++ exists.

Each test compiles a small kernel for sm_90 (no GPU needed) and checks the
exception type and its whole message.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.kernels import typing_error
from helpers.plans import scan_plan
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import PlanError, block
from scan._plan import ArrayFact, ScalarFact, resolve_block
from scan._primitives.tile_io._plan import plan_tile_io

I32 = types.int32[::1]


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateless
def zero_prefix(block_aggregate):
    return block_aggregate * 0


def expect(kernel, message, kind="PlanError", argtypes=(I32,)):
    got = typing_error(kernel, argtypes)
    assert got == f"{kind}: {message}", got


def test_prefix_op_with_initial_value():
    def k(a):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        a[0] = block.inclusive_scan(
            a[0],
            scan_op="max",
            initial_value=0,
            prefix_op=running_total,
            prefix_state=state,
            threads=32,
        )

    expect(
        k,
        "inclusive_scan: prefix_op= and initial_value= cannot be combined: the prefix "
        "callback's return value seeds the scan (CUB has no overload taking both); drop "
        "initial_value= or fold it into the callback's initial state",
    )


def test_prefix_op_with_block_aggregate():
    def k(a):
        agg = cuda.local.array(1, np.int32)
        a[0] = block.inclusive_sum(a[0], prefix_op=zero_prefix, block_aggregate=agg, threads=32)

    expect(
        k,
        "inclusive_sum: prefix_op= and block_aggregate= cannot be combined: CUB passes the "
        "block aggregate to the callback instead; read it there (block_aggregate argument)",
    )


def test_stateful_without_state():
    def k(a):
        a[0] = block.inclusive_sum(a[0], prefix_op=running_total, threads=32)

    expect(
        k,
        "inclusive_sum: prefix_op=running_total is stateful but prefix_state= is missing; "
        "pass a cuda.local.array(1, np.int64) initialised equally in every thread",
    )


def test_state_without_stateful():
    def k(a):
        state = cuda.local.array(1, np.int64)
        a[0] = block.exclusive_sum(a[0], prefix_state=state, threads=32)

    expect(
        k,
        "exclusive_sum: prefix_state= was given with no prefix_op=; prefix_state is only for "
        "stateful callbacks declared with @statefn.stateful(dtype)",
    )


def test_state_with_stateless_callback():
    def k(a):
        state = cuda.local.array(1, np.int64)
        a[0] = block.exclusive_sum(a[0], prefix_op=zero_prefix, prefix_state=state, threads=32)

    expect(
        k,
        "exclusive_sum: prefix_state= was given with a stateless prefix_op=; prefix_state is "
        "only for stateful callbacks declared with @statefn.stateful(dtype)",
    )


def test_state_dtype_mismatch():
    def k(a):
        state = cuda.local.array(1, np.int32)
        state[0] = 0
        a[0] = block.inclusive_sum(a[0], prefix_op=running_total, prefix_state=state, threads=32)

    expect(
        k,
        "inclusive_sum: prefix_state has dtype int32 but the callback declares state dtype "
        "int64; allocate cuda.local.array(1, np.int64) (dtypes must match exactly)",
        kind="ScanTypeError",
    )


# The pointer ABI would reinterpret a same-width state of another kind (uint64
# or float64 for an int64 callback) without a word: only the exact dtype passes.
STATE_MISMATCHES = [
    ("int64", "uint64"),
    ("int64", "float64"),
    ("float64", "int64"),
    ("uint64", "int64"),
    ("int32", "uint32"),
    ("int32", "float32"),
    ("float32", "int32"),
    ("uint8", "int8"),
    ("float32", "float64"),
    ("int16", "int64"),
]


@pytest.mark.parametrize(("declared", "given"), STATE_MISMATCHES)
def test_state_dtype_must_match_exactly(declared, given):
    callback = statefn.stateful(np.dtype(declared), name="running_total")(running_total.op)
    state_type = np.dtype(given).type

    def k(a):
        state = cuda.local.array(1, state_type)
        state[0] = 0
        a[0] = block.inclusive_sum(a[0], prefix_op=callback, prefix_state=state, threads=32)

    expect(
        k,
        f"inclusive_sum: prefix_state has dtype {given} but the callback declares state dtype "
        f"{declared}; allocate cuda.local.array(1, np.{declared}) (dtypes must match exactly)",
        kind="ScanTypeError",
    )


def test_state_length_not_one():
    def k(a):
        state = cuda.local.array(2, np.int64)
        state[0] = 0
        a[0] = block.inclusive_sum(a[0], prefix_op=running_total, prefix_state=state, threads=32)

    expect(
        k,
        "inclusive_sum: prefix_state must hold exactly one item per thread (got length 2); "
        "allocate cuda.local.array(1, np.int64)",
    )


def test_stateful_scan_operator():
    def k(a):
        a[0] = block.inclusive_scan(a[0], scan_op=running_total, threads=32)

    got = typing_error(k, (I32,))
    assert got.startswith("RoleError: ")
    assert "offered as a scan operator" in got
    assert "prefix_op=" in got


def test_wrong_callback_arity_device_function():
    @cuda.jit(device=True)
    def two_args(a, b):
        return a

    def k(a):
        a[0] = block.inclusive_sum(a[0], prefix_op=two_args, threads=32)

    got = typing_error(k, (I32,))
    assert got.startswith("ArityError: "), got
    assert "two_args" in got


def test_old_keyword():
    def k(a):
        a[0] = block.scan(a[0], mode="inclusive", block_prefix_callback_op=zero_prefix, threads=32)

    expect(
        k,
        "scan: the keyword block_prefix_callback_op= is not supported; use prefix_op= (and "
        "prefix_state= for stateful callbacks)",
    )


def test_warp_scans_block_not_multiple_of_32():
    def k(a):
        a[0] = block.inclusive_sum(a[0], algorithm="warp_scans", threads=48)

    expect(
        k,
        "inclusive_sum: algorithm='warp_scans' needs a block size that is a multiple of 32 "
        "(got 48 threads from block (48, 1, 1)); CUB would silently fall back to another "
        "algorithm, so choose one explicitly (e.g. 'raking' or 'transpose')",
    )


def test_non_sum_exclusive_without_seed():
    def k(a):
        a[0] = block.exclusive_scan(a[0], scan_op="max", threads=32)

    expect(
        k,
        "exclusive_scan: an exclusive scan with scan_op='max' needs initial_value= or "
        "prefix_op=: thread 0's first output would be undefined (only sums have an identity "
        "CUB can use)",
    )


def test_no_block_shape():
    def k(a):
        a[0] = block.inclusive_sum(a[0])

    expect(
        k,
        "inclusive_sum: the block shape is unknown; launch the kernel with a block shape "
        "(kernel[grid, block](...)) or pass a literal threads= (int or 2/3-tuple); "
        "scan.compile takes the launch's block shape as block=",
    )


def test_launch_differs_from_threads():
    # A launch's block shape reaches the plan through numba's launch config.
    with pytest.raises(Exception, match=re.escape("launched with block shape (64, 1, 1)")):
        resolve_block("inclusive_sum", 32, (64, 1, 1))
    assert resolve_block("inclusive_sum", (8, 4), (8, 4, 1)) == (8, 4, 1)


def test_launch_with_more_threads_than_the_kernels_launch_bounds():
    """Refused while typing, through scan.compile as through a launch (numba would
    otherwise fail the launch with a driver error)."""
    from scan._plan import check_launch_bounds

    @cuda.jit(launch_bounds=256)
    def k(src, dst):
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items)
        block.store(dst, 0, items)

    with pytest.raises(PlanError, match=re.escape("declares launch_bounds=256 (at most 256")):
        scan.compile(k, "void(int32[::1], int32[::1])", cc=(9, 0), block=512)
    check_launch_bounds("load", (256, 1, 1), 256)
    check_launch_bounds("load", (128, 2, 1), (256, 2))
    with pytest.raises(PlanError, match=re.escape("(64, 8, 1), 512 threads")):
        check_launch_bounds("load", (64, 8, 1), (256, 2))


def test_scalar_with_out():
    def k(a):
        out = cuda.local.array(1, np.int32)
        block.inclusive_sum(a[0], out, threads=32)

    expect(
        k,
        "inclusive_sum: out= was given with a scalar value; a scalar scan returns its result "
        "(x = block.inclusive_sum(x)), only array payloads write out=",
    )


def test_unknown_algorithm_and_mode():
    def k(a):
        a[0] = block.inclusive_sum(a[0], algorithm="fast", threads=32)

    expect(
        k,
        "inclusive_sum: algorithm must be one of 'raking', 'raking_memoize', 'warp_scans' "
        "(got 'fast')",
    )

    def k2(a):
        a[0] = block.scan(a[0], mode="sideways", threads=32)

    expect(k2, "scan: mode must be 'inclusive' or 'exclusive' (got 'sideways')")


def test_runtime_string_option():
    def k(a, n):
        a[0] = block.inclusive_sum(a[0], threads=n)

    got = typing_error(k, (I32, types.int32))
    assert got.startswith("PlanError: inclusive_sum: threads= must be a literal constant"), got


def test_bitwise_on_floats():
    def k(a):
        a[0] = block.inclusive_scan(a[0], scan_op="^", threads=32)

    expect(
        k,
        "inclusive_scan: scan_op='^' is a bitwise operator but values are float32; use an "
        "integer dtype or another operator",
        kind="ScanTypeError",
        argtypes=(types.float32[::1],),
    )


def test_items_per_thread_unknown():
    def k(a, items):
        block.inclusive_sum(items, threads=32)

    got = typing_error(k, (I32, I32))
    assert "cannot tell how many items each thread holds" in got


def test_load_rejections():
    def wrong_dtype(a):
        items = cuda.local.array(4, np.float32)
        block.load(a, 0, items, threads=32)

    expect(
        wrong_dtype,
        "load: items have dtype float32 but src has int32; use the same dtype for both",
        kind="ScanTypeError",
    )

    def warp_transpose_odd(a):
        items = cuda.local.array(4, np.int32)
        block.store(a, 0, items, algorithm="warp_transpose", threads=40)

    expect(
        warp_transpose_odd,
        "store: algorithm='warp_transpose' needs a block size that is a multiple of 32 (got 40 "
        "threads from block (40, 1, 1)); CUB would silently fall back to another algorithm, so "
        "choose one explicitly (e.g. 'raking' or 'transpose')",
    )

    def two_d(a2):
        items = cuda.local.array(4, np.int32)
        block.load(a2, 0, items, threads=32)

    expect(
        two_d,
        "load: src must be a 1-D array (got 2-D); index a row first, e.g. src[row]",
        kind="ScanTypeError",
        argtypes=(types.int32[:, ::1],),
    )


def test_plan_is_pure_and_keys_are_stable():
    kwargs = {"prefix_op": running_total, "prefix_state": ArrayFact(np.int64, 1, 1)}
    a, b = scan_plan(**kwargs), scan_plan(**kwargs)
    assert a == b
    assert a.key == b.key
    c = scan_plan(**{**kwargs, "algorithm": "warp_scans"})
    assert c.key != a.key
    io = plan_tile_io(
        function="load",
        array=ArrayFact(np.int32),
        items=ArrayFact(np.int32, 1, 4),
        algorithm=None,
        oob_default=ScalarFact(np.int32),
        temp_storage=None,
        block=(96, 1, 1),
    )
    assert io.algorithm == "warp_transpose"
    assert io.tile_items == 384
