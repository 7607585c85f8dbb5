# SPDX-License-Identifier: Apache-2.0
"""On a GPU: prefix callbacks that call device helpers give NumPy's results.

The helpers are compiled as copies for the kernel's compute capability
(``scan._numba_cuda._callbacks._Helpers``); here the kernels run, each row one
block walking its tiles, and the carried prefixes are compared with NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numba import cuda

import statefn
from scan import block

pytestmark = pytest.mark.gpu

THREADS = 128
TILES = 6
ROWS = 4


@cuda.jit(device=True)
def triple(x: Any) -> Any:
    return x * 3


@cuda.jit(device=True)
def triple_plus(x: Any, offset: Any = 5) -> Any:
    return triple(x) + offset  # a helper calling a helper, with a default


@statefn.stateful(np.int64)
def tripled_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + triple_plus(block_aggregate)
    return prefix


def _minus_seven(helper: Any) -> Any:
    def shifted(block_aggregate: Any) -> Any:
        return helper(block_aggregate, offset=-7)  # a keyword argument, through a closure

    return statefn.stateless(shifted)


minus_seven = _minus_seven(triple_plus)


@cuda.jit
def carried_rows(values: Any, out: Any, totals: Any) -> None:
    row = cuda.blockIdx.x
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    for tile in range(TILES):
        j = tile * THREADS + i
        out[row, j] = block.inclusive_sum(
            values[row, j], prefix_op=tripled_total, prefix_state=state, threads=THREADS
        )
    totals[row, i] = state[0]


@cuda.jit
def stateless_tiles(values: Any, out: Any) -> None:
    row = cuda.blockIdx.x
    i = cuda.threadIdx.x
    out[row, i] = block.inclusive_sum(values[row, i], prefix_op=minus_seven, threads=THREADS)


def _values(cols: int) -> Any:
    rng = np.random.default_rng(7)
    return rng.integers(-50, 50, size=(ROWS, cols), dtype=np.int32)


def test_stateful_callback_calling_helpers() -> None:
    values = _values(TILES * THREADS)
    out = cuda.device_array_like(values)
    totals = cuda.device_array((ROWS, THREADS), dtype=np.int64)
    carried_rows[ROWS, THREADS](cuda.to_device(values), out, totals)

    tiles = values.reshape(ROWS, TILES, THREADS).astype(np.int64)
    aggregates = tiles.sum(axis=2)
    added = 3 * aggregates + 5
    prefixes = np.cumsum(added, axis=1) - added  # the state before each tile
    expected = (np.cumsum(tiles, axis=2) + prefixes[:, :, None]).astype(np.int32)
    np.testing.assert_array_equal(out.copy_to_host(), expected.reshape(ROWS, -1))
    # thread 0 calls the callback with its own state at every tile
    np.testing.assert_array_equal(totals.copy_to_host()[:, 0], added.sum(axis=1))


def test_stateless_closure_helper_with_keyword() -> None:
    values = _values(THREADS)
    out = cuda.device_array_like(values)
    stateless_tiles[ROWS, THREADS](cuda.to_device(values), out)

    prefix = 3 * values.astype(np.int64).sum(axis=1) - 7
    expected = np.cumsum(values, axis=1) + prefix[:, None]
    np.testing.assert_array_equal(out.copy_to_host(), expected.astype(np.int32))
