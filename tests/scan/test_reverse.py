# SPDX-License-Identifier: Apache-2.0
"""Reverse scans: the plan, its refusals, the generated exchange, and kernels that compile and link.

Their results are checked in the simulator and on a GPU (tests/sim/test_sim_reverse.py,
tests/doc_examples/examples/reverse.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.call_shapes import CALL_SHAPES, call_facts
from helpers.cccl import compile_variants_with_cccl_3_0, skip_reason, toolkit_cccl
from helpers.kernels import CC
from helpers.plans import scan_plan
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import PlanError, block
from scan._codegen import CallbackDecl
from scan._compile import compile_provider
from scan._plan import ArrayFact, ScalarFact, plan_fields
from scan._primitives.block_scan import render_scan


def test_forward_plans_keep_their_keys() -> None:
    forward = scan_plan()
    assert "reverse" not in plan_fields(forward)
    assert scan_plan(reverse=False).key == forward.key
    assert scan_plan(reverse=True).key != forward.key
    assert scan_plan(reverse=True).reverse


def test_reverse_must_be_a_literal_bool() -> None:
    with pytest.raises(PlanError, match="reverse= must be a literal True or False"):
        scan_plan(reverse=1)


def test_an_exchange_too_large_for_its_shared_memory_is_refused() -> None:
    wide = ArrayFact(np.dtype([(f"f{i}", np.float64) for i in range(3)]), 1, 1)  # 24 bytes

    def keep(a: Any, b: Any) -> Any:
        return a

    records = {"function": "inclusive_scan", "scan_op": keep, "values": wide, "reverse": True}
    with pytest.raises(PlanError, match=r"reverse=True exchanges one value a thread each way"):
        scan_plan(block=(1024, 1, 1), **records)  # 48 KiB
    scan_plan(block=(512, 1, 1), **records)  # 24 KiB
    big = ArrayFact(np.float64, 1, 16)  # the tile's size does not matter: 64 KiB
    scan_plan(values=big, block=(512, 1, 1), reverse=True)


def test_only_the_thread_totals_go_through_shared_memory() -> None:
    text = render_scan(scan_plan(reverse=True))  # 128 threads x 4 int32 items
    assert "for (int i = 0; i < 4; ++i) input[i] = tile_in[3 - i];" in text
    assert "__shared__ value_t reverse_slots[2][128];" in text
    assert "reverse_slots[0][mirror] = cub::ThreadReduce(input, ::cuda::std::plus<>{});" in text
    assert "ExclusiveSum(reverse_slots[0][rank], thread_prefix);" in text
    assert "if (mirror != 0) acc = " in text  # rank 0 of the scan is thread T-1
    assert "for (int i = 0; i < 4; ++i) tile_out[3 - i] = output[i];" in text
    # the two exchanges, and no trailing barrier: their slots differ
    assert text.count("__syncthreads()") == 2
    one = render_scan(scan_plan(values=ArrayFact(np.int32, 1, 1), reverse=True))
    assert "reverse_slots[0][mirror] = input[0];" in one  # the item itself, CUB's 1-item call
    assert "block_scan_t(temp_storage).InclusiveSum(input, output);" in one
    assert one.count("__syncthreads()") == 2
    assert "__syncthreads()" in render_scan(scan_plan())


def test_the_prefix_is_applied_where_cub_applies_it() -> None:
    exclusive = render_scan(scan_plan(function="exclusive_sum", mode="exclusive", reverse=True))
    assert "if (true) acc = " in exclusive  # the implicit zero
    assert "output[0] = thread_prefix;" in exclusive
    floats = ArrayFact(np.float64, 1, 4)
    seeded = scan_plan(
        values=floats, scan_op="max", initial_value=ScalarFact(np.float64), reverse=True
    )
    assert "if (true) acc = " in render_scan(seeded)
    plain = render_scan(scan_plan(values=floats, scan_op="max", reverse=True))
    assert "if (mirror != 0) acc = scan_op_t{}(thread_prefix, acc);" in plain
    assert "ExclusiveScan(reverse_slots[0][rank], thread_prefix, scan_op_t{});" in plain


def test_a_user_operator_takes_its_operands_swapped() -> None:
    decl = CallbackDecl(symbol="user_op", c_decl='extern "C" __device__ int user_op(void*, ...);')

    def op(a: Any, b: Any) -> Any:
        return a

    text = render_scan(scan_plan(scan_op=op, reverse=True), scan_callback=decl)
    assert "user_op(&r, &b, &a)" in text
    text = render_scan(scan_plan(scan_op=op), scan_callback=decl)
    assert "user_op(&r, &a, &b)" in text


@statefn.stateful(np.int64)
def suffix_total(state: Any, block_aggregate: Any) -> Any:
    suffix = state[0]
    state[0] = suffix + block_aggregate
    return suffix


@cuda.jit(device=True)
def first(a: Any, b: Any) -> Any:
    return a


def _kernel(call: str) -> Any:
    source = f"""
def k(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    total = cuda.local.array(1, np.int32)
    block.load(src, 0, items, oob_default=0)
    {call}
    block.store(dst, 0, items)
    dst[0] = total[0]
"""
    scope: dict[str, Any] = {
        "cuda": cuda, "np": np, "block": block, "suffix_total": suffix_total, "first": first,
    }  # fmt: skip
    exec(source, scope)
    return scope["k"]


CALLS = [
    "block.inclusive_sum(items, reverse=True)",
    "block.exclusive_sum(items, prefix_op=suffix_total, prefix_state=state, reverse=True)",
    "block.inclusive_scan(items, scan_op=first, block_aggregate=total, reverse=True)",
    "block.exclusive_scan(items, scan_op='max', initial_value=3, reverse=True)",
    "block.scan(items, mode='inclusive', algorithm='warp_scans', reverse=True)",
    "items[0] = block.inclusive_sum(items[0], reverse=True)",
]


@pytest.mark.nvrtc
@pytest.mark.parametrize("call", CALLS)
def test_kernels_compile_and_link(call: str) -> None:
    kernel = cuda.jit(_kernel(call))
    cubin = scan.compile(kernel, (types.int32[::1], types.int32[::1]), cc=CC, block=(64, 1, 1))
    assert cubin[:4] == b"\x7fELF"


# ---------------------------------------------------------------- every call shape, NVRTC

#: every call shape, one item a thread (CUB's one-item call) and four (the totals' exchange)
_VARIANTS = CALL_SHAPES


def variant_source(dtype: str, items: int, mode: str, op: str, extra: str) -> str:
    """The provider of one reverse call shape, 128 threads."""
    kwargs, prefix = call_facts(dtype, items, mode, op, extra, aggregate="block_aggregate")
    algorithm = "warp_scans" if items == 1 else "raking"
    plan = scan_plan(function="scan", algorithm=algorithm, reverse=True, **kwargs)
    return render_scan(plan, prefix_callback=prefix)


@pytest.mark.nvrtc
def test_every_call_shape_compiles() -> None:
    for variant in _VARIANTS:
        compile_provider("reverse", variant_source(*variant), cc=CC, what=f"reverse {variant}")


@pytest.mark.nvrtc
@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_every_call_shape_compiles_with_cccl_3_0(tmp_path: Path) -> None:
    assert compile_variants_with_cccl_3_0(__file__, tmp_path) == f"ok {len(_VARIANTS)}"
