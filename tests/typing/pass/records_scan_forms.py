# SPDX-License-Identifier: Apache-2.0
"""Record scans in every form: exclusive with a record or tuple initial value, scan(mode=),
stateless prefixes, a block aggregate, one record per thread, numeric values with record state."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import types
from numba.np.numpy_support import from_dtype
from numpy.typing import NDArray

import statefn
from scan import block

THREADS = 64
ITEMS = 2

pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
total_count = np.dtype([("total", np.float64), ("n", np.int32)], align=True)


@statefn.scan_op
def compose(x: Any, y: Any) -> tuple[Any, Any]:
    return (x.a * y.a, y.a * x.b + y.b)


def compose_fn(x: Any, y: Any) -> tuple[Any, Any]:
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateless
def seed(block_aggregate: Any) -> tuple[float, float]:
    return (1.0, 5.0)


@statefn.stateless(name="seed_named")
def seed_named(block_aggregate: Any) -> tuple[float, float]:
    return (1.0, 5.0)


def seed_fn(block_aggregate: Any) -> tuple[float, float]:
    return (1.0, 5.0)


@statefn.stateful(total_count)
def running_total(state: NDArray[np.void], block_aggregate: np.float32) -> np.float32:
    prefix = state[0].total
    state[0].total = prefix + block_aggregate
    state[0].n += 1
    return np.float32(prefix)


@cuda.jit
def record_forms(src: NDArray[np.void], dst: NDArray[np.void], agg: NDArray[np.void]) -> None:
    base = cuda.blockIdx.x * THREADS * ITEMS
    items = cuda.local.array(ITEMS, pair)
    out = cuda.local.array(ITEMS, pair)
    aggregate = cuda.local.array(1, pair)
    identity = cuda.local.array(1, pair)
    identity[0].a = 1.0
    identity[0].b = 0.0
    block.load(src, base, items, oob_default=identity[0], algorithm="direct", threads=THREADS)
    block.exclusive_scan(items, out, scan_op=compose, initial_value=(1.0, 0.0), threads=THREADS)
    block.exclusive_scan(items, out, scan_op=compose_fn, initial_value=identity[0], threads=THREADS)
    block.exclusive_scan(
        items, out, scan_op=compose, initial_value=(np.float32(1), 0), threads=THREADS
    )
    block.inclusive_scan(items, out, scan_op=compose, block_aggregate=aggregate, threads=THREADS)
    block.scan(items, out, mode="inclusive", scan_op=compose_fn, threads=THREADS)
    block.scan(items, out, mode="exclusive", scan_op=compose, prefix_op=seed, threads=THREADS)
    block.exclusive_scan(items, out, scan_op=compose, prefix_op=seed_named, threads=THREADS)
    block.inclusive_scan(items, out, scan_op=compose, prefix_op=seed_fn, threads=THREADS)
    block.store(dst, base, out, algorithm="direct", threads=THREADS)
    if cuda.threadIdx.x == 0:
        agg[cuda.blockIdx.x] = aggregate[0]


@cuda.jit
def one_record_per_thread(src: NDArray[np.void], dst: NDArray[np.void]) -> None:
    i = cuda.grid(1)
    item = cuda.local.array(1, pair)
    item[0].a = 1.0
    item[0].b = 0.0
    if i < src.shape[0]:
        item[0].a = src[i].a
        item[0].b = src[i].b
    h = block.inclusive_scan(item[0], scan_op=compose, threads=THREADS)
    g = block.scan(item[0], mode="exclusive", scan_op=compose, prefix_op=seed, threads=THREADS)
    if i < dst.shape[0]:
        dst[i].a = g.a
        dst[i].b = h.b


@cuda.jit
def float_cumsum(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    state = cuda.local.array(1, total_count)
    state[0].total = 0.0
    state[0].n = 0
    items = cuda.local.array(ITEMS, np.float32)
    for base in range(0, src.shape[0], THREADS * ITEMS):
        block.load(src, base, items, oob_default=np.float32(0), threads=THREADS)
        block.inclusive_scan(
            items, scan_op="+", prefix_op=running_total, prefix_state=state, threads=THREADS
        )
        block.store(dst, base, items, threads=THREADS)


_PAIRS = from_dtype(pair)[::1]
KERNELS: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
    (record_forms.py_func, (_PAIRS, _PAIRS, _PAIRS)),
    (one_record_per_thread.py_func, (_PAIRS, _PAIRS)),
    (float_cumsum.py_func, (types.float32[::1], types.float32[::1])),
]
