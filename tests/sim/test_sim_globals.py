# SPDX-License-Identifier: Apache-2.0
"""A callback's globals: frozen per compilation on a GPU, read live in the simulator.

A compiled kernel freezes the values of its compilation, as Numba does: the
same dispatcher launched again keeps them, another ``cuda.jit`` of the kernel
compiles with the new ones. The simulator runs callbacks as Python, so every
launch reads the values of that moment; its per-block pinning of descriptor
keys (a plan memo) must not freeze them. Both backends run this file.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

import numpy as np
import pytest
from numba import cuda

import statefn
from scan import block

pytestmark = pytest.mark.sim

CAP = 1000


@statefn.stateful(np.int64)
def capped_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = min(prefix + block_aggregate, CAP)
    return prefix


SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def capped_scan(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for base in range(0, src.shape[0], 32 * 2):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=capped_total, prefix_state=state)
        block.store(dst, base, items)


def _reference(src: np.ndarray, cap: int) -> np.ndarray:
    out = np.empty_like(src)
    carry = 0
    for base in range(0, src.size, 64):
        tile = src[base : base + 64]
        out[base : base + 64] = carry + np.cumsum(tile)
        carry = min(carry + int(tile.sum()), cap)
    return out


def test_a_launch_reads_the_globals_of_its_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    src = np.full(256, 5, np.int32)
    dst = np.zeros_like(src)
    key = capped_total.key
    kernel = cuda.jit(capped_scan)
    kernel[1, 32](src, dst)
    np.testing.assert_array_equal(dst, _reference(src, 1000))
    monkeypatch.setitem(globals(), "CAP", 200)
    assert capped_total.key != key
    kernel[1, 32](src, dst)
    # compiled: the dispatcher keeps the values it was compiled with; simulated: Python
    np.testing.assert_array_equal(dst, _reference(src, 200 if SIMULATED else 1000))
    cuda.jit(capped_scan)[1, 32](src, dst)  # another compilation sees the new value
    np.testing.assert_array_equal(dst, _reference(src, 200))


class _Limits:
    cap = 100


LIMITS = _Limits()


@statefn.stateful(np.int64)
def limited_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = min(prefix + block_aggregate, LIMITS.cap)
    return prefix


def limited_scan(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for base in range(0, src.shape[0], 32 * 2):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=limited_total, prefix_state=state)
        block.store(dst, base, items)


@pytest.mark.sim_only
def test_a_global_the_key_cannot_encode_is_named() -> None:
    src = np.ones(64, np.int32)
    with pytest.raises(
        statefn.UnkeyableValueError, match=r"reads global 'LIMITS'.*_Limits"
    ) as info:
        cuda.jit(limited_scan)[1, 32](src, np.zeros_like(src))
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "_encode" not in frames  # the key's own frames are cut: the call is the last one
    assert "value" not in frames
