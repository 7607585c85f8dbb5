# SPDX-License-Identifier: Apache-2.0
"""A refused call found at a kernel's first launch: the user's line first, the
library's class, no library frames but the one that raises."""

from __future__ import annotations

import inspect
import traceback
from typing import Any

import numpy as np
import pytest
from numba import cuda

import scan
import statefn
from scan import block

pytestmark = pytest.mark.gpu


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@cuda.jit
def forgot_the_state(a: Any) -> None:
    i = cuda.threadIdx.x
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total)


def test_launch_rejection_names_the_call_first() -> None:
    with pytest.raises(scan.PlanError) as info:
        forgot_the_state[1, 32](np.zeros(32, np.int64))
    lines, first = inspect.getsourcelines(forgot_the_state.py_func)
    call = first + next(i for i, line in enumerate(lines) if "block.inclusive_sum" in line)
    message = str(info.value).splitlines()
    assert message[0] == f'File "{__file__}", line {call}, in forgot_the_state'
    assert message[2].startswith("inclusive_sum: prefix_op=running_total is stateful")
    # numba-cuda's launch path keeps its own frames (it does so for its own
    # errors too); of the library, only the frame that raises is there
    frames = traceback.extract_tb(info.value.__traceback__)
    ours = [f for f in frames if "/scan/" in f.filename or "/statefn/" in f.filename]
    assert [f.name for f in ours] == ["get_call_type"]
