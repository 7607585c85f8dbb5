# SPDX-License-Identifier: Apache-2.0
"""Caller-owned temp storage and barriers (docs/temp-storage.md).

Compiled for ``cc=(9, 0)`` in the tests: the simulator cannot allocate shared
arrays with an ``alignment=``.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import statefn
from scan import block


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


# magictoken.temp_storage_query.begin
SCAN_TEMP = block.temp_storage("scan", np.int32, 128, 4, cc=(9, 0))
print(SCAN_TEMP)  # TempStorageLayout(size=..., alignment=...), read from compiled CUB code
# kernels see plain ints as constants (an attribute of a global tuple is not one)
SCAN_SIZE, SCAN_ALIGN = SCAN_TEMP
# magictoken.temp_storage_query.end


# magictoken.temp_storage_shared.begin
# one buffer serves load, scan and store in turn: take the largest layout
LAYOUTS = [block.temp_storage(p, np.int32, 128, 4, cc=(9, 0)) for p in ("load", "scan", "store")]
TEMP_SIZE = max(layout.size for layout in LAYOUTS)
TEMP_ALIGN = max(layout.alignment for layout in LAYOUTS)


@cuda.jit
def cumsum_one_buffer(src, dst):
    temp = cuda.shared.array(TEMP_SIZE, np.uint8, alignment=TEMP_ALIGN)
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items, threads=128):
        # each call ends with a barrier (auto_sync=True), so the next may reuse temp
        block.load(src, base, items, temp_storage=temp, threads=128)
        block.inclusive_sum(
            items,
            items,
            prefix_op=running_total,
            prefix_state=state,
            temp_storage=temp,
            threads=128,
        )
        block.store(dst, base, items, temp_storage=temp, threads=128)


# magictoken.temp_storage_shared.end


# magictoken.auto_sync_false.begin
@cuda.jit
def two_scans_one_barrier(a, b):
    temp_a = cuda.shared.array(SCAN_SIZE, np.uint8, alignment=SCAN_ALIGN)
    temp_b = cuda.shared.array(SCAN_SIZE, np.uint8, alignment=SCAN_ALIGN)
    items_a = cuda.local.array(4, np.int32)
    items_b = cuda.local.array(4, np.int32)
    base = cuda.threadIdx.x * 4
    for j in range(4):
        items_a[j] = a[base + j]
        items_b[j] = b[base + j]
    # two independent scans on two buffers: neither needs a barrier after it ...
    block.inclusive_sum(items_a, temp_storage=temp_a, threads=128, auto_sync=False)
    block.exclusive_sum(items_b, temp_storage=temp_b, threads=128, auto_sync=False)
    # ... until a buffer is used again: one barrier covers both
    cuda.syncthreads()
    block.inclusive_sum(items_b, temp_storage=temp_a, threads=128, auto_sync=False)
    for j in range(4):
        a[base + j] = items_a[j]
        b[base + j] = items_b[j]


# magictoken.auto_sync_false.end
