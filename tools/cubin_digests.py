# SPDX-License-Identifier: Apache-2.0
"""Digests of a fixed set of compiled kernels, to show a refactor leaves the GPU code unchanged.

Compiles four kernels for sm_90 without a GPU (a stateful int64 running total,
a float64 state calling a device helper, a stateless callback with a user scan
operator, a records recurrence) and prints the sha256 of each linked cubin and
of its LTO-IR objects, and of the PTX nvJitLink makes of them with Numba's
record type numbers in mangled names replaced (``RecordILi<n>E``: Numba
numbers record types in the order a process creates them, so a kernel's name,
and with it its cubin, changes when anything else creates a record type
first; the code does not). Run it in a fresh process with an empty cache
(``STATEFN_SCAN_CACHE_DIR=$(mktemp -d) python tools/cubin_digests.py``) before
and after a change, and compare.
"""

import hashlib
import re

import numpy as np
from numba import cuda
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan
import statefn
from scan import block


@cuda.jit(device=True)
def clamp(x):
    return x if x < 1000.0 else 1000.0


@statefn.stateful(np.int64)
def total(state, agg):
    p = state[0]
    state[0] = p + agg
    return p


@statefn.stateful(np.float64)
def ctotal(state, agg):
    p = state[0]
    state[0] = clamp(p + agg)
    return p


@statefn.stateless
def ten(agg):
    return agg - agg + 10


def sat(a, b):
    s = a + b
    return 100 if s > 100 else s


pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def affine(x, y):
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateful(pair)
def carry(state, agg):
    prefix = (state[0].a, state[0].b)
    state[0].a = prefix[0] * agg.a
    state[0].b = agg.a * prefix[1] + agg.b
    return prefix


def k_total(src, dst):
    s = cuda.local.array(1, np.int64)
    s[0] = 0
    items = cuda.local.array(8, np.int32)
    for base in range(0, src.shape[1], 256 * 8):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=total, prefix_state=s)
        block.store(dst[cuda.blockIdx.x], base, items)


def k_ctotal(src, dst):
    s = cuda.local.array(1, np.float64)
    s[0] = 0
    items = cuda.local.array(4, np.float32)
    for base in range(0, src.shape[1], 128 * 4):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.exclusive_sum(items, items, prefix_op=ctotal, prefix_state=s)
        block.store(dst[cuda.blockIdx.x], base, items)


def k_ten(src, dst):
    items = cuda.local.array(4, np.int32)
    block.load(src[cuda.blockIdx.x], 0, items, oob_default=0)
    block.inclusive_scan(items, items, scan_op=sat, prefix_op=ten)
    block.store(dst[cuda.blockIdx.x], 0, items)


def k_rec(src, dst):
    s = cuda.local.array(1, pair)
    s[0].a = 1.0
    s[0].b = 0.0
    items = cuda.local.array(4, pair)
    for base in range(0, src.shape[1], 128 * 4):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=(1.0, 0.0))
        block.inclusive_scan(items, items, scan_op=affine, prefix_op=carry, prefix_state=s)
        block.store(dst[cuda.blockIdx.x], base, items)


i32 = types.Array(types.int32, 2, "C")
f32 = types.Array(types.float32, 2, "C")
rec = types.Array(from_dtype(pair), 2, "C")


def ptx_digest(objects):
    """sha256 of the linked PTX, record type numbers in mangled names replaced."""
    from cuda.core import Linker, LinkerOptions, ObjectCode

    options = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
    code = Linker(*[ObjectCode.from_ltoir(o) for o in objects], options=options).link("ptx").code
    text = code if isinstance(code, str) else bytes(code).decode()
    return hashlib.sha256(re.sub(r"RecordILi\d+E", "RecordILiNE", text).encode()).hexdigest()[:16]


for name, k, arg, blk in [
    ("total", k_total, i32, 256),
    ("ctotal", k_ctotal, f32, 128),
    ("ten", k_ten, i32, 64),
    ("rec", k_rec, rec, 128),
]:
    cubin = scan.compile(cuda.jit(k), (arg, arg), cc=(9, 0), block=blk)
    objs = scan.compile(cuda.jit(k), (arg, arg), cc=(9, 0), block=blk, output="ltoir")
    print(
        name,
        hashlib.sha256(cubin).hexdigest()[:16],
        [hashlib.sha256(o).hexdigest()[:12] for o in objs[1:]],
        "ptx",
        ptx_digest(objs),
    )
