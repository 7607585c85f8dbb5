# SPDX-License-Identifier: Apache-2.0
"""Choosing threads x items per thread with block.launch_shape (docs/quickstart.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from doc_examples.examples.quickstart import running_total
from scan import block

# magictoken.launch_shape_query.begin
print(block.launch_shape(2048, np.int32))  # LaunchShape(threads=128, items_per_thread=8)
print(block.launch_shape(65536, np.int32))  # LaunchShape(threads=256, items_per_thread=4)
print(block.launch_shape(65536, np.float64))  # LaunchShape(threads=256, items_per_thread=8)
# magictoken.launch_shape_query.end


# magictoken.launch_shape_kernel.begin
COLS = 2048  # the rows' length
# module-level ints: numba compiles them into the kernel as constants
THREADS, ITEMS = block.launch_shape(COLS, np.int32)


@cuda.jit
def row_cumsum(src, dst):
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in block.tiles(src.shape[1], items):  # THREADS * ITEMS apart
        block.load(src[row], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[row], base, items)


# magictoken.launch_shape_kernel.end


def run(rows: int = 2) -> tuple[Any, Any]:
    """Launch the kernel with the proposed shape; return (result, expected)."""
    rng = np.random.default_rng(0)
    src = rng.integers(-3, 4, size=(rows, COLS), dtype=np.int32)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(d_src)
    # magictoken.launch_shape_launch.begin
    row_cumsum[rows, THREADS](d_src, d_dst)  # one block of THREADS threads per row
    # magictoken.launch_shape_launch.end
    return d_dst.copy_to_host(), np.cumsum(src, axis=1, dtype=np.int32)
