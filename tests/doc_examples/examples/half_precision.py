# SPDX-License-Identifier: Apache-2.0
"""Half precision and complex: the worked programs of docs/half-precision.md.

Each ``run_*`` function launches its kernel (in the simulator, or on a GPU)
and returns the result with a NumPy reference. A bfloat16 array is an
``ml_dtypes.bfloat16`` array in the simulator; on a GPU, numba-cuda 0.30 cannot
copy one from the host (NumPy's DLPack export refuses the dtype), so it moves
as its bits and is viewed as bfloat16 on the device (:func:`device_bfloat16`).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from numba import cuda
from numba.cuda.core import config

import statefn
from scan import block

THREADS = 32
ITEMS = 8


def device_bfloat16(host: np.ndarray) -> tuple[Any, Any]:
    """(the kernel's argument, a function returning the array after the launch)."""
    if config.ENABLE_CUDASIM:
        return host, lambda: host
    # magictoken.device_bfloat16.begin
    bits = cuda.to_device(host.view(np.uint16))  # the bfloat16 values' bits
    on_device = bits.view(ml_dtypes.bfloat16)  # the same memory, typed as bfloat16
    # magictoken.device_bfloat16.end
    return on_device, lambda: bits.copy_to_host().view(ml_dtypes.bfloat16)


# magictoken.bf16_cumsum.begin
@statefn.stateful(np.float32)  # the carry: float32 holds every bfloat16 sum of a tile exactly
def carry(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@cuda.jit
def bf16_row_cumsum(src, dst):  # src, dst: bfloat16 rows
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.float32)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float32)  # float32 items of bfloat16 data
    for base in block.tiles(src.shape[1], items):
        block.load(src[row], base, items, oob_default=0)  # widens exactly
        block.inclusive_sum(items, items, prefix_op=carry, prefix_state=state)
        block.store(dst[row], base, items)  # rounds to nearest, ties to even
# magictoken.bf16_cumsum.end


def run_bf16_cumsum(rows: int = 2, cols: int = 700) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(ml_dtypes.bfloat16)
    src, _ = device_bfloat16(x)
    dst, result = device_bfloat16(np.zeros_like(x))
    bf16_row_cumsum[rows, THREADS](src, dst)
    # the same in NumPy: float32 sums (in the scan's order, up to float32 rounding)
    want = np.cumsum(x.astype(np.float32), axis=1, dtype=np.float32).astype(ml_dtypes.bfloat16)
    return result(), want


# magictoken.rotation.begin
@statefn.stateful(np.complex64)
def turn(state, block_aggregate):  # the rotation of every earlier tile
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return prefix


@cuda.jit
def running_rotation(steps, out):  # steps: unit complex numbers e^(i theta)
    state = cuda.local.array(1, np.complex64)
    state[0] = 1  # the identity rotation, in every thread
    items = cuda.local.array(4, np.complex64)
    for base in block.tiles(steps.shape[0], items):
        block.load(steps, base, items, oob_default=1)  # 1: the product's identity
        block.inclusive_scan(items, items, scan_op="*", prefix_op=turn, prefix_state=state)
        block.store(out, base, items)
# magictoken.rotation.end


def run_rotation(n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    theta = np.random.default_rng(1).uniform(-0.05, 0.05, n)
    steps = np.exp(1j * theta).astype(np.complex64)
    out = np.zeros_like(steps)
    running_rotation[1, THREADS](steps, out)
    return out, np.exp(1j * np.cumsum(theta))


# magictoken.half_items.begin
@cuda.jit
def half_sums(src, dst):  # float16 items: every addition rounds to float16
    items = cuda.local.array(4, np.float16)
    base = cuda.blockIdx.x * block.tile_size(items)
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, items)
    block.store(dst, base, items)


@cuda.jit
def wide_sums(src, dst):  # float32 items of the same float16 arrays: one rounding, at the store
    items = cuda.local.array(4, np.float32)
    base = cuda.blockIdx.x * block.tile_size(items)
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, items)
    block.store(dst, base, items)
# magictoken.half_items.end


def run_half_sums() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    src = np.full(128, 0.1, np.float16)  # 0.0999755859375 in float16
    half, wide = np.zeros_like(src), np.zeros_like(src)
    half_sums[1, THREADS](src, half)
    wide_sums[1, THREADS](src, wide)
    return half, wide, np.cumsum(src.astype(np.float64))
