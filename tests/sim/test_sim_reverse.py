# SPDX-License-Identifier: Apache-2.0
"""Reverse scans (``reverse=True``) against NumPy, in the simulator and on a GPU.

One tile per row: each item's result combines it with the items after it
(inclusive) or only those (exclusive), seeded from the right by
``initial_value=`` or a prefix callback that carries the suffix of the tiles
to the right; the block aggregate is the tile's items in order. A row walked
tile by tile from its end carries the suffix through a stateful callback.
The tests marked ``sanitize`` run under compute-sanitizer in tools/gpu_suite.sh.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

import statefn
from scan import block

pytestmark = pytest.mark.sim


@statefn.stateful(np.int64)
def suffix_total(state: Any, block_aggregate: Any) -> Any:
    suffix = state[0]
    state[0] = suffix + block_aggregate
    return suffix


@cuda.jit(device=True)
def first_wins(a: Any, b: Any) -> Any:
    # not commutative: the result depends on the order the operands come in
    return a


_NP = {"+": np.add, "max": np.maximum, "min": np.minimum, "^": np.bitwise_xor}


@functools.cache
def tile_kernel(
    dtype: str, ipt: int, mode: str, op: str, seeded: bool, aggregate: bool, algorithm: str
) -> Any:
    """One tile per row: every thread's results and the block aggregate."""
    value = np.dtype(dtype)
    IPT, MODE, ALGO = ipt, mode, algorithm
    OP = first_wins if op == "first" else op
    if ipt == 0:

        def kernel(src: Any, dst: Any, agg: Any) -> None:
            rank = cuda.threadIdx.x
            row = cuda.blockIdx.x
            total = cuda.local.array(1, value)
            x = src[row, rank]
            if seeded and aggregate:
                r = block.scan(
                    x, mode=MODE, scan_op=OP, initial_value=7, block_aggregate=total,
                    algorithm=ALGO, reverse=True,
                )  # fmt: skip
            elif seeded:
                r = block.scan(x, mode=MODE, scan_op=OP, initial_value=7, algorithm=ALGO,
                               reverse=True)  # fmt: skip
            elif aggregate:
                r = block.scan(x, mode=MODE, scan_op=OP, block_aggregate=total, algorithm=ALGO,
                               reverse=True)  # fmt: skip
            else:
                r = block.scan(x, mode=MODE, scan_op=OP, algorithm=ALGO, reverse=True)
            dst[row, rank] = r
            if aggregate and rank == 0:
                agg[row] = total[0]

    else:

        def kernel(src: Any, dst: Any, agg: Any) -> None:
            rank = cuda.threadIdx.x
            row = cuda.blockIdx.x
            total = cuda.local.array(1, value)
            items = cuda.local.array(IPT, value)
            for i in range(IPT):
                items[i] = src[row, rank * IPT + i]
            if seeded and aggregate:
                block.scan(
                    items, mode=MODE, scan_op=OP, initial_value=7, block_aggregate=total,
                    algorithm=ALGO, reverse=True,
                )  # fmt: skip
            elif seeded:
                block.scan(items, mode=MODE, scan_op=OP, initial_value=7, algorithm=ALGO,
                           reverse=True)  # fmt: skip
            elif aggregate:
                block.scan(items, mode=MODE, scan_op=OP, block_aggregate=total, algorithm=ALGO,
                           reverse=True)  # fmt: skip
            else:
                block.scan(items, mode=MODE, scan_op=OP, algorithm=ALGO, reverse=True)
            for i in range(IPT):
                dst[row, rank * IPT + i] = items[i]
            if aggregate and rank == 0:
                agg[row] = total[0]

    return cuda.jit(kernel)


def reference(row: np.ndarray, mode: str, op: str, seed: Any) -> tuple[np.ndarray, Any]:
    """The suffix scan of `row` and its aggregate (items in order)."""
    combine = (lambda a, b: a) if op == "first" else _NP[op]
    out = np.empty_like(row)
    acc = None if seed is None else row.dtype.type(seed)
    with np.errstate(all="ignore"):
        for k in range(len(row) - 1, -1, -1):
            if mode == "inclusive":
                acc = row[k] if acc is None else combine(row[k], acc)
                out[k] = acc
            else:
                out[k] = acc if acc is not None else 0
                acc = row[k] if acc is None else combine(row[k], acc)
        total = row[0]
        for x in row[1:]:
            total = combine(total, x)
    return out, total


@settings(deadline=None)
@given(
    dtype=st.sampled_from(["int32", "int64", "uint8", "float64"]),
    threads=st.sampled_from([1, 7, 32, 64, 96]),
    ipt=st.sampled_from([0, 1, 3, 4]),
    mode=st.sampled_from(["inclusive", "exclusive"]),
    op=st.sampled_from(["+", "max", "min", "^", "first"]),
    seeded=st.booleans(),
    aggregate=st.booleans(),
    algorithm=st.sampled_from(["raking", "raking_memoize", "warp_scans"]),
    seed=st.integers(0, 2**16),
)
def test_tile_matches_numpy(
    dtype: str,
    threads: int,
    ipt: int,
    mode: str,
    op: str,
    seeded: bool,
    aggregate: bool,
    algorithm: str,
    seed: int,
) -> None:
    if algorithm == "warp_scans" and threads % 32:
        algorithm = "raking"
    if np.dtype(dtype).kind == "f" and op == "^":
        op = "max"
    if mode == "exclusive" and op != "+":
        seeded = True  # an exclusive scan with another operator needs a seed
    rng = np.random.default_rng(seed)
    tile = threads * max(ipt, 1)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is None:
        src = rng.integers(-40, 40, (2, tile)).astype(dtype)  # exact sums in float64
    else:
        src = rng.integers(info.min, info.max, (2, tile), dtype=dtype, endpoint=True)
    dst = np.zeros_like(src)
    agg = np.zeros(2, dtype=dtype)
    tile_kernel(dtype, ipt, mode, op, seeded, aggregate, algorithm)[2, threads](src, dst, agg)
    for r in range(2):
        want, total = reference(src[r], mode, op, 7 if seeded else None)
        np.testing.assert_array_equal(dst[r], want)
        if aggregate:
            assert agg[r] == total


@cuda.jit
def row_suffix(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
    tile = block.tile_size(items)
    for base in range((row.shape[0] - 1) // tile * tile, -1, -tile):
        block.load(row, base, items, oob_default=0)
        block.exclusive_sum(items, prefix_op=suffix_total, prefix_state=state, reverse=True)
        block.store(out, base, items)


@pytest.mark.sanitize
@pytest.mark.parametrize("cols", [1, 255, 256, 257, 1000])
def test_row_walked_from_its_end(cols: int) -> None:
    src = np.random.default_rng(cols).integers(-9, 9, (3, cols)).astype(np.int32)
    dst = np.zeros_like(src)
    row_suffix[3, 64](src, dst)
    inclusive = np.cumsum(src[:, ::-1], axis=1)[:, ::-1]
    np.testing.assert_array_equal(dst, (inclusive - src).astype(np.int32))
