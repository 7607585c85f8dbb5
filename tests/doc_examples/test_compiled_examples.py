# SPDX-License-Identifier: Apache-2.0
"""Compile the documentation's kernels for sm_90 and link them, without a GPU.

These are the examples that pass a literal ``threads=`` (the others take the
block shape from the launch and run in the simulator, see test_sim_examples.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.kernels import compile_kernel, link_cubin
from numba.cuda import types

pytestmark = pytest.mark.nvrtc

I32 = types.int32[::1]


def build(kernel, argtypes):
    cubin = link_cubin(compile_kernel(kernel.py_func, argtypes))
    assert cubin[:4] == b"\x7fELF"


def test_temp_storage_query():
    from doc_examples.examples import temp_storage as ts

    size, alignment = ts.SCAN_TEMP
    assert size > 0
    assert alignment in (4, 8, 16)
    assert size <= ts.TEMP_SIZE
    assert alignment <= ts.TEMP_ALIGN


def test_one_buffer_for_load_scan_store():
    from doc_examples.examples import temp_storage as ts

    build(ts.cumsum_one_buffer, (I32, I32))


def test_auto_sync_false():
    from doc_examples.examples import temp_storage as ts

    build(ts.two_scans_one_barrier, (I32, I32))


@pytest.mark.parametrize(
    ("name", "argtypes"),
    [
        ("copy_rows", (types.float32[:, ::1], types.float32[:, ::1])),
        ("tile_sums", (I32, I32, types.int64)),
        ("copy_vectorized", (I32, I32)),
    ],
)
def test_tile_io(name, argtypes):
    from doc_examples.examples import tile_io

    build(getattr(tile_io, name), argtypes)


def test_errors_demo_is_refused_while_typing():
    from helpers.kernels import typing_error

    from doc_examples.examples import errors_demo

    got = typing_error(errors_demo.forgot_the_state.py_func, (I32,))
    assert got.startswith("PlanError: inclusive_sum: prefix_op=running_total is stateful")
    assert np.dtype(np.int64).name in got


def test_quickstart_kernel_compiles_without_a_gpu():
    from doc_examples.examples import compile_without_gpu as example

    assert example.cubin[:4] == b"\x7fELF"
    assert b"row_cumsum" in example.cubin
    # the kernel, the callback and the providers' unit: one, or more where
    # earlier kernels in this process compiled some of the same calls
    assert 3 <= len(example.objects) <= 5


@pytest.mark.parametrize(
    ("name", "argtypes"),
    [
        ("row_diff", (types.int32[:, ::1], types.int32[:, ::1])),
        ("run_ids", (types.float32[:, ::1], types.int32[:, ::1])),
    ],
)
def test_neighbours(name, argtypes):
    import scan
    from doc_examples.examples import neighbours

    kernel = getattr(neighbours, name)
    cubin = scan.compile(kernel, argtypes, cc=(9, 0), block=(neighbours.THREADS, 1, 1))
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize(
    ("name", "argtypes"),
    [
        ("normalize_rows", (types.float32[:, ::1], types.float32[:, ::1])),
        ("argmax_rows", (types.float32[:, ::1], I32)),
        ("count_positive", (types.float32[:, ::1], types.int64[::1])),
    ],
)
def test_reduce(name, argtypes):
    import scan
    from doc_examples.examples import reduce

    kernel = getattr(reduce, name)
    cubin = scan.compile(kernel, argtypes, cc=(9, 0), block=(reduce.THREADS, 1, 1))
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize(
    ("name", "argtypes"),
    [
        ("row_suffix_sums", (types.int32[:, ::1], types.int32[:, ::1])),
        ("backward", (types.float64[::1], types.float64[::1], types.float64[::1])),
        (
            "selective_backward",
            (types.float64[:, ::1], types.float64[::1]) + (types.float64[:, ::1],) * 7,
        ),
    ],
)
def test_reverse(name, argtypes):
    import scan
    from doc_examples.examples import reverse

    cubin = scan.compile(getattr(reverse, name), argtypes, cc=(9, 0), block=(64, 1, 1))
    assert cubin[:4] == b"\x7fELF"
