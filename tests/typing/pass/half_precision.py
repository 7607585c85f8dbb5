# SPDX-License-Identifier: Apache-2.0
"""Half precision and complex: bfloat16 rows scanned in float32, float16 and complex scans.

A load widens float16 and bfloat16 arrays into float32 (or float64) items and a
store rounds them back; float16 items scan with a float16 state; complex items
with a complex state and operator.
"""

from collections.abc import Callable
from typing import Any, assert_type

import ml_dtypes
import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block, warp

THREADS = 128
ITEMS = 8
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@statefn.stateful(np.float32)
def carry(state: NDArray[np.float32], block_aggregate: np.float32) -> np.float32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.float32(prefix)


@statefn.stateful(np.float16)
def half_carry(state: NDArray[np.float16], block_aggregate: np.float16) -> np.float16:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.float16(prefix)


@statefn.stateful(np.complex64)
def rotation(state: NDArray[np.complex64], block_aggregate: np.complex64) -> np.complex64:
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return np.complex64(prefix)


assert_type(half_carry, statefn.StatefulFunction[np.float16, np.float16])
assert_type(rotation, statefn.StatefulFunction[np.complex64, np.complex64])


@cuda.jit
def bfloat16_rows(src: NDArray[ml_dtypes.bfloat16], dst: NDArray[ml_dtypes.bfloat16]) -> None:
    state = cuda.local.array(1, np.float32)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float32)
    row = cuda.blockIdx.x
    for base in range(0, src.shape[1], block.tile_size(items, threads=THREADS)):
        block.load(src[row], base, items, oob_default=0, threads=THREADS)  # widens exactly
        block.inclusive_sum(items, items, prefix_op=carry, prefix_state=state, threads=THREADS)
        block.store(dst[row], base, items, threads=THREADS)  # rounds to nearest, ties to even


@cuda.jit
def float16_items(src: NDArray[np.float16], dst: NDArray[np.float16]) -> None:
    state = cuda.local.array(1, np.float16)
    state[0] = 0
    items = cuda.local.array(4, np.float16)
    wide = cuda.local.array(4, np.float64)
    block.load(src, 0, items, threads=THREADS)
    block.inclusive_sum(items, items, prefix_op=half_carry, prefix_state=state, threads=THREADS)
    block.store(dst, 0, items, threads=THREADS)
    warp.load(src, 0, wide, oob_default=0.0, threads=THREADS)
    warp.store(dst, 0, wide, threads=THREADS)


@cuda.jit
def complex_rotation(src: NDArray[np.complex64], dst: NDArray[np.complex64]) -> None:
    state = cuda.local.array(1, np.complex64)
    state[0] = 1
    items = cuda.local.array(4, np.complex64)
    block.load(src, 0, items, oob_default=1, threads=THREADS)
    block.inclusive_scan(
        items, items, scan_op="*", prefix_op=rotation, prefix_state=state, threads=THREADS
    )
    block.store(dst, 0, items, threads=THREADS)


@cuda.jit
def half_fields(a: NDArray[np.float16], b: NDArray[ml_dtypes.bfloat16]) -> None:
    items = cuda.local.array(4, PAIR)
    block.load((a, b), 0, items, threads=THREADS)
    block.store(b, 0, items, field="b", threads=THREADS)


_ROWS = types.bfloat16[:, ::1]
KERNELS: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (bfloat16_rows.py_func, (_ROWS, _ROWS)),
    (float16_items.py_func, (types.float16[::1], types.float16[::1])),
    (complex_rotation.py_func, (types.complex64[::1], types.complex64[::1])),
    (half_fields.py_func, (types.float16[::1], types.bfloat16[::1])),
]
