# SPDX-License-Identifier: Apache-2.0
"""Runtime input that is out of range: what load, store and scans do with it.

Offsets and ``valid_items`` are kernel arguments here, read per block from
device arrays, so nothing about them is known when the kernel compiles: an
offset at or past the end of the array, a negative, zero or huge
``valid_items``, a misaligned ``vectorize`` tile. The defined behaviour
(docs/tile-io.md, "Out-of-range offsets and counts"): only items before
``min(len(array), offset + valid_items)`` are read or written, nothing else is
touched, and an empty range loads ``oob_default`` (or leaves the items alone).
A launch whose block shape differs from ``threads=`` (fewer threads too) is
refused with :class:`scan.PlanError`.

Marked ``sanitize``: tools/gpu_suite.sh runs these on the GPU under
compute-sanitizer's memcheck, racecheck, synccheck and initcheck.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from cases import block_cases as bc
from numba import cuda

from scan import PlanError, block

pytestmark = [pytest.mark.sim, pytest.mark.sanitize]

THREADS = 64
IPT = 2
TILE = THREADS * IPT
N = 300
FILL = 77
OOB = -5
BIG = 1 << 40

# (offset, valid_items) per block
RANGES = [
    (0, BIG),  # valid_items far larger than the tile: a full tile
    (0, TILE + 5),
    (N - TILE, BIG),  # a full tile that ends at the end of the array
    (N - 5, BIG),  # a partial tile: five items
    (N, BIG),  # starts at the end
    (N + 1000, BIG),  # starts past the end
    ((1 << 31) + 7, 3),  # far past the end, past 32-bit offsets
    (0, -1),  # negative valid_items: nothing
    (0, -BIG),
    (3, 0),
    (5, 7),  # fewer valid items than threads
    (3, BIG),  # a full tile at an offset that misaligns vector loads
]


@functools.cache
def io_kernel(algorithm: str, dtype: str, oob: bool):
    value = np.dtype(dtype).type
    fill = value(FILL)
    oob_default = value(OOB) if oob else None

    @cuda.jit
    def kernel(src, dst, offsets, valids, loaded):
        b = cuda.blockIdx.x
        rank = cuda.threadIdx.x
        items = cuda.local.array(IPT, value)
        for i in range(IPT):
            items[i] = fill
        block.load(
            src,
            offsets[b],
            items,
            valid_items=valids[b],
            oob_default=oob_default,
            algorithm=algorithm,
        )
        for i in range(IPT):
            loaded[b, rank * IPT + i] = items[i]
        block.store(dst[b], offsets[b], items, valid_items=valids[b], algorithm=algorithm)

    return kernel


def reference(algorithm: str, src, oob: bool):
    t, i = np.indices((THREADS, IPT))
    pos = (i * THREADS + t if algorithm == "striped" else t * IPT + i).reshape(-1)
    loaded = np.full((len(RANGES), TILE), OOB if oob else FILL, dtype=src.dtype)
    dst = np.full((len(RANGES), N), FILL, dtype=src.dtype)
    for b, (offset, valid_items) in enumerate(RANGES):
        valid = min(N - offset, valid_items)
        inside = pos < valid
        loaded[b, np.flatnonzero(inside)] = src[offset + pos[inside]]
        dst[b, offset + pos[inside]] = src[offset + pos[inside]]
    return loaded, dst


@pytest.mark.parametrize("algorithm", bc.TILE_ALGORITHMS)
@pytest.mark.parametrize(("dtype", "oob"), [("int32", True), ("float64", False)])
def test_out_of_range_offsets_and_counts(algorithm, dtype, oob):
    src = (np.arange(N) % 50 + 1).astype(dtype)
    offsets = np.array([r[0] for r in RANGES], dtype=np.int64)
    valids = np.array([r[1] for r in RANGES], dtype=np.int64)
    dst = np.full((len(RANGES), N), FILL, dtype=dtype)
    loaded = np.zeros((len(RANGES), TILE), dtype=dtype)
    d_dst, d_loaded = cuda.to_device(dst), cuda.to_device(loaded)
    io_kernel(algorithm, dtype, oob)[len(RANGES), THREADS](
        cuda.to_device(src), d_dst, cuda.to_device(offsets), cuda.to_device(valids), d_loaded
    )
    want_loaded, want_dst = reference(algorithm, src, oob)
    np.testing.assert_array_equal(d_loaded.copy_to_host(), want_loaded, strict=True)
    np.testing.assert_array_equal(d_dst.copy_to_host(), want_dst, strict=True)


# ---------------------------------------------------------------- launch shape


@cuda.jit
def fixed_scan(a):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_sum(a[i], threads=64)


@cuda.jit
def fixed_io(a):
    items = cuda.local.array(2, np.int32)
    block.load(a, 0, items, threads=64, algorithm="direct")
    block.store(a, 0, items, threads=64, algorithm="direct")


@pytest.mark.parametrize("kernel", [fixed_scan, fixed_io], ids=["scan", "load_store"])
def test_launch_with_fewer_threads_than_threads_is_refused(kernel):
    a = np.arange(128, dtype=np.int32)
    d = cuda.to_device(a)
    kernel[1, 64](d)  # the shape the code says: runs
    for launch in (32, (8, 4), (63, 1, 1)):
        with pytest.raises(PlanError, match=r"launched with block shape \(\d+, \d+, \d+\) but"):
            kernel[1, launch](d)
    got = d.copy_to_host()
    want = np.cumsum(a[:64]) if kernel is fixed_scan else a[:64]
    np.testing.assert_array_equal(got[:64], want)
    np.testing.assert_array_equal(got[64:], a[64:])  # the refused launches wrote nothing


# ---------------------------------------------------------------- negative offsets


@pytest.mark.parametrize("algorithm", bc.TILE_ALGORITHMS)
def test_negative_offset_is_an_empty_tile_on_a_gpu_and_an_error_in_the_simulator(algorithm):
    from conftest import SIMULATOR

    src = (np.arange(N) % 50 + 1).astype(np.int32)
    offsets = np.array([-5, -TILE, -(1 << 40)], dtype=np.int64)
    valids = np.full(len(offsets), BIG, dtype=np.int64)
    dst = np.full((len(offsets), N), FILL, dtype=np.int32)
    loaded = np.zeros((len(offsets), TILE), dtype=np.int32)
    d_dst, d_loaded = cuda.to_device(dst), cuda.to_device(loaded)
    launch = io_kernel(algorithm, "int32", True)[len(offsets), THREADS]
    args = (cuda.to_device(src), d_dst, cuda.to_device(offsets), cuda.to_device(valids), d_loaded)
    if SIMULATOR:
        with pytest.raises(IndexError, match="is negative; the tile would start before the array"):
            launch(*args)
        return
    launch(*args)
    np.testing.assert_array_equal(d_loaded.copy_to_host(), np.full_like(loaded, OOB))
    np.testing.assert_array_equal(d_dst.copy_to_host(), dst)
