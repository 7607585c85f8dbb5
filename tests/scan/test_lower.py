# SPDX-License-Identifier: Apache-2.0
"""Whole kernels using each entry point compile for sm_90 and link into one cubin.

No GPU is needed: numba compiles the kernels to LTO-IR with an explicit
compute capability, NVRTC compiles the CUB providers, and nvJitLink links
everything. Together the cases cover every value dtype and every option value
at least once.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.kernels import compile_kernel, link_cubin
from numba import cuda
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import statefn
from scan import block

pytestmark = pytest.mark.nvrtc

DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
]


def arr(dtype, ndim=1):
    return types.Array(from_dtype(np.dtype(dtype)), ndim, "C")


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.float64)
def running_max(state, block_aggregate):
    prefix = state[0]
    if block_aggregate > prefix:
        state[0] = block_aggregate
    return prefix


@statefn.stateless
def constant_prefix(block_aggregate):
    return block_aggregate - block_aggregate + 7


@cuda.jit(device=True)
def saturating_add(a, b):
    s = a + b
    return 100 if s > 100 else s


def build(kernel, argtypes):
    codes = compile_kernel(kernel, argtypes)
    cubin = link_cubin(codes)
    assert cubin[:4] == b"\x7fELF"
    return codes, cubin


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scalar_exclusive_sum_every_dtype(dtype):
    def k(a):
        i = cuda.threadIdx.x
        a[i] = block.exclusive_sum(a[i], threads=64)

    build(k, (arr(dtype),))


@pytest.mark.parametrize(
    ("dtype", "algorithm", "ipt"),
    [
        (np.int8, "direct", 4),
        (np.uint16, "striped", 3),
        (np.int32, "vectorize", 4),
        (np.uint32, "transpose", 2),
        (np.int64, "warp_transpose", 2),
        (np.float64, "warp_transpose_timesliced", 2),
        (np.uint8, "vectorize", 16),
        (np.int16, "transpose", 1),
        (np.float32, "warp_transpose", 8),
        (np.uint64, "direct", 1),
    ],
)
def test_tile_io_every_algorithm(dtype, algorithm, ipt):
    def k(src, dst, n):
        items = cuda.local.array(ipt, dtype)
        block.load(src, n, items, algorithm=algorithm, oob_default=0, threads=64)
        block.store(dst, n, items, algorithm=algorithm, valid_items=n, threads=64)

    build(k, (arr(dtype), arr(dtype), types.int64))


def test_row_scan_stateful_all_entry_points_link_once():
    """Load, five scan spellings and store in one kernel; one callback used twice links once."""

    def k(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(4, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 512):
            block.load(src[row], base, items, threads=128)
            block.inclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, threads=128
            )
            block.exclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, threads=128
            )
            block.store(dst[row], base, items, threads=128)

    codes, _ = build(k, (arr(np.int32, 2), arr(np.int32, 2)))
    names = sorted(c.name for c in codes[1:])
    # the providers' units (one, or more where earlier kernels compiled some of
    # the calls) and the callback, each exactly once
    callbacks = [n for n in names if n.startswith("statefn_stateful_")]
    assert len(callbacks) == 1, names
    units = [n for n in names if n.startswith("statefn_scan_")]
    assert 1 <= len(units) <= 4, names
    assert len(set(names)) == len(names) == len(units) + 1, names


def test_two_callbacks_never_collide():
    def k(a, b):
        s1 = cuda.local.array(1, np.int64)
        s1[0] = 0
        s2 = cuda.local.array(1, np.float64)
        s2[0] = 0
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=s1, threads=32)
        b[i] = block.inclusive_scan(
            b[i], scan_op="max", prefix_op=running_max, prefix_state=s2, threads=32
        )

    codes, _ = build(k, (arr(np.int32), arr(np.float32)))
    names = [c.name for c in codes[1:] if c.name.startswith("statefn_stateful_")]
    assert len(set(names)) == 2, names


@pytest.mark.parametrize(
    "case",
    [
        "scan_inclusive_mul",
        "scan_exclusive_min_init",
        "inclusive_scan_user_op",
        "exclusive_scan_stateless_prefix",
        "inclusive_scan_and_or_xor",
        "block_aggregate",
        "raking_memoize_2d",
        "warp_scans_3d",
        "caller_temp",
        "dynamic_temp",
        "no_auto_sync",
        "items_per_thread_explicit",
    ],
)
def test_scan_options(case):
    if case == "scan_inclusive_mul":

        def k(a):
            i = cuda.threadIdx.x
            a[i] = block.scan(a[i], mode="inclusive", scan_op="*", threads=32)

        argtypes = (arr(np.uint32),)
    elif case == "scan_exclusive_min_init":

        def k(a):
            items = cuda.local.array(3, np.float64)
            for j in range(3):
                items[j] = a[cuda.threadIdx.x * 3 + j]
            block.scan(
                items, items, mode="exclusive", scan_op=np.minimum, initial_value=1e30, threads=32
            )
            for j in range(3):
                a[cuda.threadIdx.x * 3 + j] = items[j]

        argtypes = (arr(np.float64),)
    elif case == "inclusive_scan_user_op":

        def k(a):
            i = cuda.threadIdx.x
            a[i] = block.inclusive_scan(a[i], scan_op=saturating_add, threads=32)

        argtypes = (arr(np.int32),)
    elif case == "exclusive_scan_stateless_prefix":

        def k(a):
            i = cuda.threadIdx.x
            a[i] = block.exclusive_scan(a[i], scan_op="max", prefix_op=constant_prefix, threads=32)

        argtypes = (arr(np.int16),)
    elif case == "inclusive_scan_and_or_xor":

        def k(a):
            i = cuda.threadIdx.x
            x = block.inclusive_scan(a[i], scan_op="&", threads=32)
            y = block.inclusive_scan(a[i], scan_op="|", threads=32)
            a[i] = block.inclusive_scan(x + y, scan_op="^", threads=32)

        argtypes = (arr(np.uint64),)
    elif case == "block_aggregate":

        def k(a):
            agg = cuda.local.array(1, np.int32)
            i = cuda.threadIdx.x
            a[i] = block.inclusive_sum(a[i], block_aggregate=agg, threads=32)
            a[i] += agg[0]

        argtypes = (arr(np.int32),)
    elif case == "raking_memoize_2d":

        def k(a):
            items = cuda.local.array(2, np.int32)
            block.inclusive_sum(items, algorithm="raking_memoize", threads=(8, 16))
            a[0] = items[0]

        argtypes = (arr(np.int32),)
    elif case == "warp_scans_3d":

        def k(a):
            items = cuda.local.array(2, np.float32)
            out = cuda.local.array(2, np.float32)
            block.exclusive_sum(items, out, algorithm="warp_scans", threads=(4, 4, 8))
            a[0] = out[1]

        argtypes = (arr(np.float32),)
    elif case == "caller_temp":
        layout = block.temp_storage("scan", np.int32, 128, 4, cc=(9, 0))
        nbytes, align = layout

        def k(a):
            temp = cuda.shared.array(nbytes, np.uint8, alignment=align)
            items = cuda.local.array(4, np.int32)
            block.load(a, 0, items, temp_storage=temp, threads=128)
            block.inclusive_sum(items, items, temp_storage=temp, threads=128)
            block.store(a, 0, items, temp_storage=temp, threads=128)

        argtypes = (arr(np.int32),)
    elif case == "dynamic_temp":

        def k(a):
            temp = cuda.shared.array(0, np.uint8)
            a[0] = block.inclusive_sum(a[0], temp_storage=temp, threads=128)

        argtypes = (arr(np.int32),)
    elif case == "no_auto_sync":

        def k(a):
            a[0] = block.inclusive_sum(a[0], auto_sync=False, threads=32)
            cuda.syncthreads()

        argtypes = (arr(np.int32),)
    else:

        @cuda.jit(device=True)
        def unused(x):
            return x

        def k(a):
            items = cuda.local.array(2, np.int32)
            view = items[:]
            block.inclusive_sum(view, items_per_thread=2, threads=32)
            a[0] = items[0]

        argtypes = (arr(np.int32),)
    build(k, argtypes)


def test_temp_storage_layout_comes_from_compiled_code():
    raking = block.temp_storage("scan", np.int32, 128, cc=(9, 0))
    warp = block.temp_storage("scan", np.int32, 128, algorithm="warp_scans", cc=(9, 0))
    load = block.temp_storage("load", np.int32, 128, 4, algorithm="warp_transpose", cc=(9, 0))
    direct = block.temp_storage("load", np.int32, 128, 4, algorithm="direct", cc=(9, 0))
    for layout in (raking, warp, load):
        assert layout.size > 0
        assert layout.alignment in (4, 8, 16)
    assert raking != warp
    # warp-transposed tiles stage the whole tile in shared memory
    assert load.size >= 128 * 4 * 4
    assert direct.size <= 1


def _maxntid(block_shape, **assume):
    """The kernel's maxntidx annotations in its LLVM IR, compiled for `block_shape`."""
    from numba.cuda.compiler import compile_cuda

    from scan._numba_cuda._typing import assume_block

    def kernel(src, dst):
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items)
        block.inclusive_sum(items, items)
        block.store(dst, 0, items)

    with assume_block(block_shape, **assume):
        cres = compile_cuda(kernel, types.void, (arr(np.int32), arr(np.int32)), cc=(9, 0), lto=True)
    text = cres.library.get_llvm_str()
    return [line for line in text.splitlines() if '!"maxntidx"' in line]


def test_kernel_declares_its_block_size_as_launch_bounds():
    """The block size is the kernel's maxntidx (as __launch_bounds__ in CUDA C++),
    declared once for its three calls; none when the kernel declares its own."""
    found = _maxntid((128, 2, 1))
    assert len(found) == 1, found
    assert found[0].endswith('!"maxntidx", i32 256 }'), found
    assert _maxntid((128, 2, 1), launch_bounds=512) == []
