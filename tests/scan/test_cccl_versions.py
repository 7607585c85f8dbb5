# SPDX-License-Identifier: Apache-2.0
"""Providers compile cleanly against the CCCL headers of a CUDA 13.0 toolkit too.

Scans, block reduce and reverse scans of float32 and int16 items are linked.

The GPU machine compiles with the CUDA 13.0 toolkit's CCCL 3.0 headers, not the
3.5 of the pip wheels. With FP16 and BF16 support both disabled, CCCL 3.0's
ThreadReduce takes a SIMD path for float and 8/16-bit sums that ends in a
device-side ``assert(false)``; providers keep FP16 support on to avoid it. This
test links such scans to PTX against a local CUDA 13.0 toolkit's headers, when
one is installed, and checks that no assertion call survives.
"""

from __future__ import annotations

import textwrap

import pytest
from helpers.cccl import run_with_cccl_3_0, skip_reason, toolkit_cccl

pytestmark = pytest.mark.nvrtc

CHILD = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda
    from numba.cuda import types
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from scan import block
    from helpers.kernels import compile_kernel

    def float_sum(a):
        items = cuda.local.array(16, np.float32)
        for j in range(16):
            items[j] = a[cuda.threadIdx.x * 16 + j]
        block.inclusive_sum(items, items, threads=128, algorithm="warp_scans")
        for j in range(16):
            a[cuda.threadIdx.x * 16 + j] = items[j]

    def short_sum(a):
        items = cuda.local.array(8, np.int16)
        for j in range(8):
            items[j] = a[cuda.threadIdx.x * 8 + j]
        block.exclusive_sum(items, items, threads=64)
        for j in range(8):
            a[cuda.threadIdx.x * 8 + j] = items[j]

    def float_reduce(a):
        items = cuda.local.array(16, np.float32)
        for j in range(16):
            items[j] = a[cuda.threadIdx.x * 16 + j]
        total = block.sum(items, threads=128)
        top = block.reduce(items, "max", valid=a.shape[0], broadcast=True, threads=128)
        a[cuda.threadIdx.x] = total + top

    def short_reduce(a):
        items = cuda.local.array(8, np.int16)
        for j in range(8):
            items[j] = a[cuda.threadIdx.x * 8 + j]
        a[0] = block.sum(items, threads=64, algorithm="raking")

    def float_reverse(a):
        items = cuda.local.array(8, np.float32)
        for j in range(8):
            items[j] = a[cuda.threadIdx.x * 8 + j]
        block.inclusive_sum(items, items, threads=128, algorithm="warp_scans", reverse=True)
        for j in range(8):
            a[cuda.threadIdx.x * 8 + j] = items[j]

    kernels = (
        (float_sum, types.float32[::1]),
        (short_sum, types.int16[::1]),
        (float_reduce, types.float32[::1]),
        (short_reduce, types.int16[::1]),
        (float_reverse, types.float32[::1]),
    )
    for kernel, ty in kernels:
        codes = compile_kernel(kernel, (ty,))
        objs = [ObjectCode.from_ltoir(c if isinstance(c, bytes) else c.data) for c in codes]
        opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
        ptx = Linker(*objs, options=opts).link("ptx").code
        text = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
        assert "__assertfail" not in text, kernel.__name__
    print("ok")
    """
)


@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_sums_carry_no_device_assert_with_cccl_3_0(tmp_path):
    out = run_with_cccl_3_0(CHILD, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
