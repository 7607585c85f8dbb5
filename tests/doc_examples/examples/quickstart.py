# SPDX-License-Identifier: Apache-2.0
"""Quickstart: the row-wise running total (docs/quickstart.md)."""

from __future__ import annotations

from typing import Any

# magictoken.quickstart_callback.begin
import numpy as np
from numba import cuda

import statefn
from scan import block


@statefn.stateful(np.int64)  # the state's dtype; the arity is checked now
def running_total(state, block_aggregate):
    prefix = state[0]  # the total of every earlier tile
    state[0] = prefix + block_aggregate
    return prefix  # seeds this tile's scan


# magictoken.quickstart_callback.end


# magictoken.quickstart_kernel.begin
THREADS = 128  # threads per block
ITEMS = 4  # items per thread


@cuda.jit
def row_cumsum(src, dst):
    row = cuda.blockIdx.x  # one block per row
    state = cuda.local.array(1, np.int64)
    state[0] = 0  # every thread initialises its copy equally
    items = cuda.local.array(ITEMS, np.int32)
    for base in block.tiles(src.shape[1], items):  # 0, THREADS * ITEMS, ...
        block.load(src[row], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[row], base, items)


# magictoken.quickstart_kernel.end


def run(rows: int = 2, cols: int = 3 * 512 + 100) -> tuple[Any, Any]:
    """Launch the kernel as docs/quickstart.md shows; return (result, expected)."""
    # magictoken.quickstart_launch.begin
    rng = np.random.default_rng(0)
    src = rng.integers(-3, 4, size=(rows, cols), dtype=np.int32)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(d_src)

    row_cumsum[rows, THREADS](d_src, d_dst)  # grid: one block per row

    result = d_dst.copy_to_host()
    expected = np.cumsum(src, axis=1, dtype=np.int32)
    assert np.array_equal(result, expected)
    # magictoken.quickstart_launch.end
    return result, expected
