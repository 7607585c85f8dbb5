# SPDX-License-Identifier: Apache-2.0
"""One plan per call: the lowering reuses the plan the typing made, and every
front end plans through the one call table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.kernels import compile_kernel
from numba import cuda
from numba.cuda import types

import statefn
from scan import block

pytestmark = pytest.mark.nvrtc


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def kernel(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, threads=64)
    block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state, threads=64)
    block.exclusive_scan(items, items, scan_op="max", initial_value=0, threads=64)
    block.store(dst, 0, items, threads=64)


def test_lowering_reuses_the_typed_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    # imported here: the simulator run collects this module too
    from scan._numba_cuda import _lowering, _typing

    planned: list[tuple[str, bool]] = []
    lowering = [False]
    plan_call, typed_plan = _typing.plan_call, _lowering.typed_plan

    def counting_plan_call(name: str, facts: Any, launch: Any) -> Any:
        planned.append((name, lowering[0]))
        return plan_call(name, facts, launch)

    def watched_typed_plan(name: str, argtys: Any) -> Any:
        lowering[0] = True
        try:
            return typed_plan(name, argtys)
        finally:
            lowering[0] = False

    monkeypatch.setattr(_typing, "plan_call", counting_plan_call)
    monkeypatch.setattr(_lowering, "typed_plan", watched_typed_plan)
    arr = types.int32[::1]
    compile_kernel(kernel, (arr, arr))
    names = {name for name, _ in planned}
    assert names == {"load", "inclusive_sum", "exclusive_scan", "store"}
    assert not [name for name, during_lowering in planned if during_lowering]
