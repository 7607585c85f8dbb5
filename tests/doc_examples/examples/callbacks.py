# SPDX-License-Identifier: Apache-2.0
"""Declaring callbacks (docs/callbacks.md): host-side, no CUDA needed."""

from __future__ import annotations

# magictoken.declare_stateful.begin
from typing import Any

import numpy as np

import statefn


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


# magictoken.declare_stateful.end


# magictoken.declare_others.begin
import operator  # noqa: E402


@statefn.stateless
def offset(block_aggregate):
    return block_aggregate * 0 + 100


@statefn.scan_op
def larger(a, b):
    return a if a > b else b


statefn.normalize("max", role="scan_op")  # built-in, CUB's functor
statefn.normalize(operator.add, role="scan_op")  # == ScanOperator(builtin="+")
# magictoken.declare_others.end


def host_calls() -> None:
    """What docs/callbacks.md says about calling descriptors on the host."""
    # magictoken.host_call.begin
    state = np.zeros(1, dtype=np.int64)
    assert running_total(state, 5) == 0
    assert state[0] == 5
    assert running_total(state, 3) == 5
    assert state[0] == 8
    assert larger(2, 7) == 7
    assert statefn.normalize("max", role="scan_op")(2, 7) == 7  # NumPy semantics
    # magictoken.host_call.end


def keys() -> Any:
    """What docs/callbacks.md says about keys; returns the example's ``make``."""

    # magictoken.keys.begin
    def make(limit):
        @statefn.stateful(np.int32)
        def clamp_total(state, block_aggregate):
            prefix = state[0]
            state[0] = min(prefix + block_aggregate, limit)  # `limit` is a closure cell
            return prefix

        return clamp_total

    assert make(100) == make(100)  # same code, same cell: equal, same key
    assert make(100).key != make(200).key  # the closure cell is part of the key
    assert make(100).key != make(100).with_state_dtype(np.int64).key  # so is the dtype
    assert len({make(100), make(100)}) == 1  # usable as dict/set keys
    # magictoken.keys.end
    return make
