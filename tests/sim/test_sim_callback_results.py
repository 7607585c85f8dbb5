# SPDX-License-Identifier: Apache-2.0
"""The simulator names a callback's wrong result in the compiler's words, once.

A callback without ``return``, one returning its state array, one returning a
record where a number is expected, and a scan operator without ``return``:
each raises ``CallbackCompileError`` naming the callback and its ``def`` line,
the text the compiler gives (``tests/helpers/callback_results.py``), and the
traceback holds one thread's frames, not every thread's.
"""

from __future__ import annotations

import re
import traceback

import numpy as np
import pytest
from helpers import callback_results as cr
from numba import cuda

import statefn
from scan import block

pytestmark = [pytest.mark.sim, pytest.mark.sim_only]


def _kernel(callback, state_dtype):
    if state_dtype is None:

        @cuda.jit
        def operator_scan(a):
            i = cuda.threadIdx.x
            a[i] = block.inclusive_scan(a[i], scan_op=callback, threads=64)

        return operator_scan

    @cuda.jit
    def prefix_scan(a):
        state = cuda.local.array(1, state_dtype)
        state[0] = 0
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=callback, prefix_state=state, threads=64)

    return prefix_scan


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


@pytest.mark.parametrize("case", sorted(cr.CASES))
def test_wrong_result_is_named_once(case):
    callback, state_dtype, name, _ = cr.CASES[case]
    with pytest.raises(statefn.CallbackCompileError) as info:
        _kernel(callback, state_dtype)[1, 64](-np.arange(64, dtype=np.int32))
    prefix, _, message = str(info.value).partition(": ")
    assert re.fullmatch(r"tid=\[\d+, 0, 0\] ctaid=\[0, 0, 0\]", prefix), prefix
    assert message == cr.expected(case)
    # one thread's frames: the block call appears once, the callback's def once
    tb = _traceback(info.value)
    assert tb.count("in scan_call") == 1, tb
    assert tb.count(f"in {name}\n") == 1, tb
    assert len(tb.splitlines()) < 60, tb


def divides_by_zero(state, block_aggregate):
    return block_aggregate + 1 // int(state[0] - state[0])


def test_error_inside_a_callback_keeps_its_line_once():
    """An exception from the callback's own code shows the failing line, not
    once per thread that waited for the callback."""
    callback = statefn.stateful(np.int64)(divides_by_zero)
    with pytest.raises(ZeroDivisionError) as info:
        _kernel(callback, np.int64)[1, 64](-np.arange(64, dtype=np.int32))
    tb = _traceback(info.value)
    assert tb.count("in divides_by_zero") == 1, tb
    assert tb.count("in scan_call") == 1, tb
