# SPDX-License-Identifier: Apache-2.0
"""Rejections made while a kernel is typed name the user's file, line and call first."""

from __future__ import annotations

import inspect
import traceback
from typing import Any

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import block

pytestmark = pytest.mark.nvrtc

ARR = types.int32[::1]


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def forgot_the_state(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, threads=128)
    block.inclusive_sum(items, items, prefix_op=running_total, threads=128)
    block.store(dst, 0, items, threads=128)


def wrong_role(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.inclusive_scan(items, items, scan_op=running_total, threads=128)


def _line_of(fn: Any, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_rejection_names_the_call_first_and_keeps_its_class() -> None:
    with pytest.raises(scan.PlanError) as info:
        scan.compile(forgot_the_state, (ARR, ARR), cc=(9, 0))
    message = str(info.value).splitlines()
    line = _line_of(forgot_the_state, "block.inclusive_sum")
    assert message[0] == f'File "{__file__}", line {line}, in forgot_the_state'
    assert message[1].strip() == (
        "block.inclusive_sum(items, items, prefix_op=running_total, threads=128)"
    )
    assert message[2].startswith("inclusive_sum: prefix_op=running_total is stateful")
    assert len(message) == 3  # no pipeline step, no "During:" lines
    assert type(info.value).__module__ == "scan"
    assert type(info.value).__name__ == "PlanError"
    rejection = info.value.rejection  # type: ignore[attr-defined]
    assert type(rejection) is scan.PlanError
    assert str(rejection) == message[2]
    # scan.compile raises it from its own frame: no frames of numba's compiler
    frames = traceback.extract_tb(info.value.__traceback__)
    assert not [f for f in frames if "numba_cuda/numba/" in f.filename]
    assert len(frames) <= 3  # the test, scan.compile and its helper


def test_statefn_rejections_are_located_too() -> None:
    with pytest.raises(statefn.RoleError) as info:
        scan.compile(wrong_role, (ARR, ARR), cc=(9, 0))
    first = str(info.value).splitlines()[0]
    assert first.endswith(f"line {_line_of(wrong_role, 'block.inclusive_scan')}, in wrong_role")
    assert type(info.value).__module__ == "statefn"


@pytest.mark.parametrize(
    ("compile_it", "what"),
    [
        (lambda fn, sig: cuda.compile_ptx(fn, sig, device=False, cc=(9, 0)), "compile_ptx"),
        (
            lambda fn, sig: cuda.compile(
                fn, sig, device=False, abi="numba", output="ltoir", cc=(9, 0)
            ),
            "compile",
        ),
    ],
)
def test_compiles_that_would_drop_the_cub_code_are_refused(compile_it: Any, what: str) -> None:
    def kernel(src: Any, dst: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items, threads=128)
        block.store(dst, 0, items, threads=128)

    with pytest.raises(scan.PlanError, match=r"compile with scan\.compile\(kernel, signature"):
        compile_it(kernel, (ARR, ARR))
