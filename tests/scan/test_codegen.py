# SPDX-License-Identifier: Apache-2.0
"""Generated C++ is deterministic, readable and pinned by golden files.

A change of the generated text fails here with its diff and the value that
confirms it; rerun with ``STATEFN_SCAN_UPDATE_GOLDEN=<value>`` to rewrite the
golden file (tests/helpers/golden.py). What the text computes is checked by
running it on the host (tests/hostexec).
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from helpers import golden
from helpers.plans import ZIP_PAIR as PAIR32  # a record of two float32: 8 bytes, aligned to 4
from helpers.plans import scan_plan, zipped_plan

import scan
import statefn
from scan._codegen import CallbackDecl
from scan._plan import ArrayFact, ScalarFact, TupleFact, ZipFact
from scan._primitives.block_scan import render_scan
from scan._primitives.block_scan._unit import thread_items_first
from scan._primitives.tile_io import render_tile_io
from scan._primitives.tile_io._plan import plan_tile_io
from scan._primitives.tile_io._unit import whole_warps_partial

GOLDEN = Path(__file__).parent / "golden"
BF16 = np.dtype(ml_dtypes.bfloat16)


@statefn.stateful(np.int64, name="running_total")
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


PREFIX = CallbackDecl(
    symbol="statefn_stateful_cb",
    c_decl='extern "C" __device__ int statefn_stateful_cb(void* result, void* state, '
    "const void* aggregate);",
)


CASES = {
    "inclusive_sum_stateful": (
        scan_plan(prefix_op=running_total, prefix_state=ArrayFact(np.int64, 1, 1)),
        {"prefix_callback": PREFIX},
    ),
    "inclusive_sum_stateful_warp_scans": (
        scan_plan(
            prefix_op=running_total,
            prefix_state=ArrayFact(np.int64, 1, 1),
            algorithm="warp_scans",
            block=(256, 1, 1),
            values=ArrayFact(np.int32, 1, 8),
        ),
        {"prefix_callback": PREFIX},
    ),
    # prefix_op=scan.lookback: tile 0 scans alone and publishes, later tiles look back
    "inclusive_sum_lookback": (
        scan_plan(
            prefix_op=scan.lookback,
            prefix_state=ArrayFact(scan.tile_status_dtype(np.int32), 1),
            block=(256, 1, 1),
            values=ArrayFact(np.int32, 1, 8),
        ),
        {},
    ),
    # a deterministic status: the ordered look-back (anchors every 32 tiles)
    "inclusive_sum_lookback_deterministic": (
        scan_plan(
            prefix_op=scan.lookback,
            prefix_state=ArrayFact(scan.tile_status_dtype(np.int32, deterministic=True), 1),
            block=(128, 1, 1),
            values=ArrayFact(np.int32, 1, 8),
        ),
        {},
    ),
    "exclusive_max_lookback_seeded": (
        scan_plan(
            function="exclusive_scan",
            mode="exclusive",
            scan_op="max",
            initial_value=ScalarFact(np.float32),
            prefix_op=scan.lookback,
            prefix_state=ArrayFact(scan.tile_status_dtype(np.float32), 1),
            values=ArrayFact(np.float32, 1, 2),
        ),
        {},
    ),
    "exclusive_max_init_caller_temp": (
        scan_plan(
            function="exclusive_scan",
            mode="exclusive",
            scan_op="max",
            initial_value=ScalarFact(np.float32),
            values=ArrayFact(np.float32, 1, 2),
            temp_storage=ArrayFact(np.uint8),
            algorithm="warp_scans",
            block=(8, 4, 2),
        ),
        {},
    ),
}


def io_plan(**over):
    kwargs = {
        "function": "load",
        "array": ArrayFact(np.float64),
        "items": ArrayFact(np.float64, 1, 4),
        "algorithm": "vectorize",
        "oob_default": ScalarFact(np.float64),
        "temp_storage": None,
        "block": (256, 1, 1),
    }
    kwargs.update(over)
    return plan_tile_io(**kwargs)


IO_CASES = {
    "load_vectorize_oob": io_plan(),
    "store_warp_transpose": io_plan(function="store", algorithm="warp_transpose", oob_default=None),
    # 64 bytes a thread: the warps of a partial tile whose items are all valid
    # take the full tile's code
    "load_warp_transpose_whole_warps": io_plan(
        algorithm="warp_transpose",
        array=ArrayFact(np.int32),
        items=ArrayFact(np.int32, 1, 16),
        oob_default=ScalarFact(np.int32),
    ),
    # zipped tile I/O: a vector load per field, gathered into the records
    "load_zipped_vectorize_oob": zipped_plan("load", oob=True),
    # one field of the records stored to its array
    "store_zipped_field": zipped_plan("store", "warp_transpose", field="b"),
    # bf16 arrays into float32 fields: a full tile loads both arrays' words, then converts
    "load_zipped_half_words": plan_tile_io(
        function="load",
        array=ZipFact((ArrayFact(BF16, 1), ArrayFact(BF16, 1))),
        items=ArrayFact(PAIR32, 1, 8),
        algorithm="vectorize",
        oob_default=TupleFact((np.float64, np.float64)),
        temp_storage=None,
        block=(256, 1, 1),
    ),
    # fields whose exchanges would take more than ZIPPED_OWN_STORAGE share a buffer
    "load_zipped_shared_storage": zipped_plan("load", "transpose", threads=512, items=16),
    # records of 8 bytes aligned to 4: full tiles move 8-byte words where the tile is aligned
    "load_record_words": io_plan(
        algorithm="warp_transpose",
        array=ArrayFact(PAIR32),
        items=ArrayFact(PAIR32, 1, 4),
        oob_default=None,
        block=(128, 1, 1),
    ),
    "store_complex64_words": io_plan(
        function="store",
        algorithm="direct",
        array=ArrayFact(np.complex64),
        items=ArrayFact(np.complex64, 1, 2),
        oob_default=None,
        block=(64, 1, 1),
    ),
}


def check_golden(name: str, text: str) -> None:
    golden.check_golden(GOLDEN / f"{name}.cu", text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scan_golden(name):
    plan, kw = CASES[name]
    text = render_scan(plan, **kw)
    assert text == render_scan(plan, **kw)  # deterministic
    check_golden(name, text)


@pytest.mark.parametrize("name", sorted(IO_CASES))
def test_tile_io_golden(name):
    check_golden(name, render_tile_io(IO_CASES[name]))


def test_structure_of_a_stateful_scan():
    plan, kw = CASES["inclusive_sum_stateful"]
    text = render_scan(plan, **kw)
    symbol = plan.symbol
    assert f'extern "C" __device__ int {symbol}(' in text
    assert "cub::BlockScan<value_t, 128, cub::BLOCK_SCAN_RAKING, 1, 1>" in text
    assert "using value_t = int;" in text
    assert PREFIX.c_decl in text
    assert "statefn_stateful_cb(&r, state, &block_aggregate)" in text
    # int32 and +: the thread's items are scanned first (see the next test)
    assert (
        "block_scan_t(temp_storage).ExclusiveScan(partial[3], thread_prefix, "
        "scan_op_t{}, prefix_op);" in text
    )
    assert "__shared__ temp_storage_t library_temp_storage;" in text
    assert "__syncthreads();" in text
    assert f"{symbol}_temp_bytes = sizeof(temp_storage_t)" in text
    assert f"plan key: {plan.key}" in text


STATE = {"prefix_op": running_total, "prefix_state": ArrayFact(np.int64, 1, 1)}


@pytest.mark.parametrize("mode", ["inclusive", "exclusive"])
@pytest.mark.parametrize("op", ["+", "*", "min", "max", "&", "|", "^"])
def test_integer_callback_scans_scan_thread_items_first(mode, op):
    plan = scan_plan(
        function="scan", mode=mode, scan_op=op, values=ArrayFact(np.uint16, 1, 4), **STATE
    )
    assert thread_items_first(plan)
    text = render_scan(plan, prefix_callback=PREFIX)
    assert "partial[i] = scan_op_t{}(partial[i - 1], input[i]);" in text
    call = "ExclusiveScan(partial[3], thread_prefix, scan_op_t{}, prefix_op);"
    assert f"block_scan_t(temp_storage).{call}" in text
    if mode == "inclusive":
        assert (
            "for (int i = 0; i < 4; ++i) output[i] = scan_op_t{}(thread_prefix, partial[i]);"
            in text
        )
    else:
        assert "output[0] = thread_prefix;" in text
        assert (
            "for (int i = 1; i < 4; ++i) output[i] = scan_op_t{}(thread_prefix, partial[i - 1]);"
            in text
        )


@pytest.mark.parametrize(
    "over",
    [
        {  # rounding: CUB's order (a float state: an integer one cannot hold the sums)
            "values": ArrayFact(np.float32, 1, 4),
            "prefix_op": running_total.with_state_dtype(np.float64),
            "prefix_state": ArrayFact(np.float64, 1, 1),
        },
        {"values": ArrayFact(np.int32, 1, 1)},  # one item: nothing to gain
        {"values": ArrayFact(np.int32, 1, 4), "prefix_op": None, "prefix_state": None},
    ],
)
def test_other_scans_keep_cubs_own_order(over):
    plan = scan_plan(**{**STATE, **over})
    _assert_cub_order(plan)


@pytest.mark.parametrize(("threads", "items"), [(256, 4), (256, 8), (512, 4)])
def test_integer_sums_scan_items_first_with_cubs_plus(threads, items):
    """bench/codegen_ablation.py: with plus<> the two orders measured equal at
    256 x 4 and 256 x 8 (with the unit's functor items first was 9-12% slower
    there); 512 x 4 keeps the functor (OWN_PLUS) and scans items first too."""
    plan = scan_plan(**STATE, values=ArrayFact(np.int32, 1, items), block=(threads, 1, 1))
    assert thread_items_first(plan)
    text = render_scan(plan, prefix_callback=PREFIX)
    plus = "using scan_op_t = ::cuda::std::plus<>;" in text
    assert plus == (threads != 512)
    assert ("struct scan_op_t" in text) == (not plus)


def _assert_cub_order(plan):
    assert not thread_items_first(plan)
    text = render_scan(plan, prefix_callback=PREFIX if plan.prefix_op is not None else None)
    assert "partial" not in text
    assert "block_scan_t(temp_storage).InclusiveSum(input, output" in text


def test_no_barrier_when_opted_out_or_not_needed():
    plan = scan_plan(auto_sync=False)
    assert "__syncthreads" not in render_scan(plan)
    assert "__syncthreads" not in render_tile_io(io_plan(algorithm="direct"))
    assert "__syncthreads" in render_tile_io(io_plan(algorithm="transpose"))


def test_callback_scan_relies_on_cubs_barrier_only_where_that_is_safe():
    guard = "#if CCCL_VERSION >= 3000000 && CCCL_VERSION < 3006000"
    sync = "  __syncthreads(); // temp storage may be reused after this barrier"
    stateful = {"prefix_op": running_total, "prefix_state": ArrayFact(np.int64, 1, 1)}
    kw = {"prefix_callback": PREFIX}
    # warp_scans, library-owned storage: no barrier of its own on CCCL 3.0-3.5
    text = render_scan(scan_plan(algorithm="warp_scans", **stateful), **kw)
    body = text.split(guard, 1)[1]
    assert "#else\n" + sync + "\n#endif" in body
    assert body.split("#else")[0].count("__syncthreads") == 0
    assert text.count("__syncthreads") == 1
    # otherwise the barrier stays unconditional
    for plan in (
        scan_plan(**stateful),  # raking
        scan_plan(algorithm="warp_scans", temp_storage=ArrayFact(np.uint8), **stateful),
    ):
        text = render_scan(plan, **kw)
        assert guard not in text
        assert sync in text
    for plan in (scan_plan(algorithm="warp_scans"), scan_plan(algorithm="raking")):
        text = render_scan(plan)
        assert guard not in text
        assert sync in text
    assert "__syncthreads" not in render_scan(
        scan_plan(algorithm="warp_scans", auto_sync=False, **stateful), **kw
    )


@pytest.mark.parametrize(
    ("over", "call"),
    [
        ({}, "InclusiveSum(input, output)"),
        ({"mode": "exclusive", "function": "exclusive_sum"}, "ExclusiveSum(input, output)"),
        ({"scan_op": "min"}, "InclusiveScan(input, output, scan_op_t{})"),
        (
            {"scan_op": "*", "initial_value": ScalarFact(np.int32)},
            "InclusiveScan(input, output, *static_cast<const value_t*>(initial_value), "
            "scan_op_t{})",
        ),
        (
            {"block_aggregate": ArrayFact(np.int32, 1, 1)},
            "InclusiveSum(input, output, *static_cast<value_t*>(block_aggregate))",
        ),
        (
            {"mode": "exclusive", "scan_op": "|", "initial_value": ScalarFact(np.int32)},
            "ExclusiveScan(input, output, *static_cast<const value_t*>(initial_value), "
            "scan_op_t{})",
        ),
    ],
)
def test_cub_overload_per_option(over, call):
    assert f"block_scan_t(temp_storage).{call};" in render_scan(scan_plan(**over))


@pytest.mark.parametrize(
    ("algorithm", "dtype", "items", "threads", "whole_warps"),
    [
        ("warp_transpose", np.int32, 16, 256, True),  # 64 bytes a thread
        ("warp_transpose", np.int32, 16, 128, True),
        ("warp_transpose", np.float64, 8, 256, True),
        ("warp_transpose", np.int32, 16, 512, False),  # raised registers at 512 threads
        ("warp_transpose", np.int32, 8, 256, False),  # 32 bytes: blocked vectors do
        ("warp_transpose", np.float64, 4, 256, False),
        ("transpose", np.int32, 16, 256, False),  # block exchange: barriers inside
        ("vectorize", np.int32, 16, 256, False),
        ("direct", np.int32, 16, 256, False),
    ],
)
def test_partial_warp_transpose_tiles_take_the_full_path_per_whole_warp(
    algorithm, dtype, items, threads, whole_warps
):
    """Only warp_transpose (per-warp exchange, no block barrier) may run the full
    tile's code in some warps of a partial tile; the rule is the measured one."""
    for function in ("load", "store"):
        plan = io_plan(
            function=function,
            algorithm=algorithm,
            array=ArrayFact(dtype),
            items=ArrayFact(dtype, 1, items),
            oob_default=None,
            block=(threads, 1, 1),
        )
        assert whole_warps_partial(plan) is whole_warps
        text = render_tile_io(plan)
        per_warp = f"/ 32) * {32 * items} + {32 * items} <= valid)"
        assert (per_warp in text) is whole_warps
        assert (f"if (valid >= {threads * items})" in text) is not whole_warps
