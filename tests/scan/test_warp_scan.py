# SPDX-License-Identifier: Apache-2.0
"""Warp scans' plans, refusals and providers (``scan._primitives.warp_scan``).

The providers are compiled by NVRTC against the pip wheels' CCCL and, when
one is found, a CUDA 13.0 toolkit's CCCL 3.0 (the GPU machine's headers).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.call_shapes import CALL_SHAPES, PREFIX_DECL, call_facts, float_total, int_total
from helpers.cccl import compile_variants_with_cccl_3_0, skip_reason, toolkit_cccl
from helpers.plans import warp_plan

from scan import PlanError, ScanTypeError
from scan._compile import compile_provider
from scan._plan import ArrayFact, ScalarFact
from scan._primitives.warp_scan import render_warp_scan

# ---------------------------------------------------------------- plans and refusals


def test_the_default_warp_is_the_hardware_warp() -> None:
    plan = warp_plan()
    assert (plan.lanes, plan.warps, plan.items_per_thread) == (32, 2, 4)
    assert warp_plan(lanes=8).warps == 8
    assert warp_plan(lanes=8).key != plan.key


@pytest.mark.parametrize("lanes", [0, 3, 12, 33, 64, True, "32"])
def test_lanes_must_be_a_power_of_two_up_to_32(lanes: object) -> None:
    with pytest.raises(PlanError, match="lanes= must be a literal power of two from 1 to 32"):
        warp_plan(lanes=lanes)


def test_the_block_must_hold_whole_logical_warps() -> None:
    with pytest.raises(PlanError, match="not a multiple of lanes=32"):
        warp_plan(block=(48, 1, 1))
    assert warp_plan(block=(48, 1, 1), lanes=16).warps == 3


def test_an_exclusive_scan_without_identity_needs_a_seed() -> None:
    with pytest.raises(PlanError, match="each warp's lane 0 would have no first output"):
        warp_plan(function="warp.exclusive_scan", mode="exclusive", scan_op="max")
    warp_plan(mode="exclusive", scan_op="max", initial_value=ScalarFact(np.int32))
    warp_plan(mode="exclusive")  # sums start from 0


def test_the_warp_aggregate_is_checked() -> None:
    state = ArrayFact(np.int64, 1, 1)
    with pytest.raises(PlanError, match="prefix_op= and warp_aggregate= cannot be combined"):
        warp_plan(prefix_op=int_total, prefix_state=state, warp_aggregate=ArrayFact(np.int32, 1, 1))
    with pytest.raises(ScanTypeError, match="warp_aggregate must be a 1-D array of the values'"):
        warp_plan(warp_aggregate=ArrayFact(np.int64, 1, 1))


def test_the_block_scans_checks_apply() -> None:
    with pytest.raises(PlanError, match="prefix_state= is missing"):
        warp_plan(prefix_op=int_total)
    with pytest.raises(ScanTypeError, match="bitwise operator"):
        warp_plan(values=ArrayFact(np.float32, 1, 4), scan_op="^")


# ---------------------------------------------------------------- generated code


def test_each_warp_scans_its_threads_totals() -> None:
    text = render_warp_scan(warp_plan(lanes=8))
    assert "using warp_scan_t = cub::WarpScan<value_t, 8>;" in text
    assert "using temp_storage_t = warp_scan_t::TempStorage[8];" in text
    assert "warp_scan_t warp_scan(temp_storage[rank / 8]);" in text
    assert "thread_total = cub::ThreadReduce(input, ::cuda::std::plus<>{});" in text
    assert "warp_scan.ExclusiveSum(thread_total, thread_prefix);" in text
    assert "if (rank % 8 != 0) acc = " in text  # lane 0 of each warp has no prefix
    assert "__syncthreads" not in text
    assert "__syncwarp" not in text


def test_lane_zeros_return_seeds_the_warp() -> None:
    state = ArrayFact(np.int64, 1, 1)
    text = render_warp_scan(
        warp_plan(prefix_op=int_total, prefix_state=state), prefix_callback=PREFIX_DECL
    )
    # an integer sum: lane 0's exclusive sum is 0, every lane adds lane 0's return
    assert "warp_scan.ExclusiveSum(thread_total, thread_prefix, aggregate);" in text
    assert "warp_prefix = warp_scan.Broadcast(prefix_op(aggregate), 0);" in text
    assert "thread_prefix = ::cuda::std::plus<>{}(warp_prefix, thread_prefix);" in text
    assert "cb(&r, state, &aggregate)" in text
    assert "if (true) acc = " in text
    # another operator (or a float sum): lane 0 takes lane 0's return as it is
    for plan in (
        warp_plan(prefix_op=int_total, prefix_state=state, scan_op="max"),
        warp_plan(
            values=ArrayFact(np.float32, 1, 4),
            prefix_op=float_total,
            prefix_state=ArrayFact(np.float32, 1, 1),
        ),
    ):
        text = render_warp_scan(plan, prefix_callback=PREFIX_DECL)
        assert "warp_scan.ExclusiveScan(thread_total, thread_prefix, " in text
        assert "thread_prefix = rank % 32 == 0 ? warp_prefix : " in text


@pytest.mark.parametrize(
    "variant", [v for v in CALL_SHAPES if v[2] == "exclusive"], ids=lambda v: "-".join(map(str, v))
)
def test_an_exclusive_scan_in_place_reads_each_item_before_its_slot_is_written(
    variant: tuple[str, int, str, str, str],
) -> None:
    # values and output are one array when the call scans in place (the usual
    # warp.exclusive_sum(items)): writing output[i] first would scan the
    # exclusive result in place of item i
    text = variant_source(*variant)
    loop = next(line for line in text.splitlines() if line.strip().startswith("for (int i = 1;"))
    assert loop.index("input[i]") < loop.index("output[i] ="), loop


# ---------------------------------------------------------------- NVRTC

#: (dtype, items, lanes, mode, operator, extra operand): every call shape of
#: both modes, sums and an operator, with one item (4-lane warps) and four (32)
#: every call shape, with 4-lane warps at one item and 32 at four
_VARIANTS = CALL_SHAPES


def variant_source(dtype: str, items: int, mode: str, op: str, extra: str) -> str:
    """The provider of one warp-scan call shape."""
    kwargs, prefix = call_facts(dtype, items, mode, op, extra, aggregate="warp_aggregate")
    plan = warp_plan(function="warp.scan", lanes=4 if items == 1 else 32, **kwargs)
    return render_warp_scan(plan, prefix_callback=prefix)


@pytest.mark.nvrtc
def test_every_variant_compiles() -> None:
    for variant in _VARIANTS:
        source = variant_source(*variant)
        compile_provider("warp_scan", source, cc=(9, 0), what=f"warp scan {variant}")


@pytest.mark.nvrtc
@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_every_variant_compiles_with_cccl_3_0(tmp_path: Path) -> None:
    assert compile_variants_with_cccl_3_0(__file__, tmp_path) == f"ok {len(_VARIANTS)}"
