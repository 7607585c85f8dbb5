# SPDX-License-Identifier: Apache-2.0
"""Reverse scans: the plan, its refusals, the generated exchange, and kernels that compile and link.

Their results are checked in the simulator and on a GPU (tests/sim/test_sim_reverse.py,
tests/doc_examples/examples/reverse.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.kernels import CC
from helpers.plans import scan_plan
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import PlanError, block
from scan._codegen import CallbackDecl
from scan._plan import ArrayFact, plan_fields
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


def test_a_tile_too_large_to_exchange_is_refused() -> None:
    big = ArrayFact(np.float64, 1, 16)
    with pytest.raises(PlanError, match=r"reverse=True exchanges the tile through shared memory"):
        scan_plan(values=big, block=(512, 1, 1), reverse=True)
    scan_plan(values=big, block=(256, 1, 1), reverse=True)  # 32 KiB: accepted


def test_the_tile_goes_through_shared_memory_and_back() -> None:
    text = render_scan(scan_plan(reverse=True))
    assert "__shared__ value_t reverse_tile[528];" in text  # 512 items, 16 padding slots
    assert "reverse_tile[slot((127 - rank) * 4 + (3 - i))] = tile_in[i];" in text
    assert "tile_out[i] = reverse_tile[slot((127 - rank) * 4 + (3 - i))];" in text
    assert text.count("__syncthreads()") == 4  # in, before and after the way back, auto_sync
    assert "__syncthreads()" in render_scan(scan_plan())


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
