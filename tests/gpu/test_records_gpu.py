# SPDX-License-Identifier: Apache-2.0
"""Record values on the GPU: the worked programs over long rows, and no local memory.

The per-entry-point matrix (every entry point x payload x algorithm with record
values, tile I/O of records, 2-D/3-D blocks, caller temp storage) is
``tests/sim/test_sim_records.py``, which the GPU suite runs on the device too.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import numpy as np
import pytest
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

import scan
from scan import block

pytestmark = pytest.mark.gpu


def test_segmented_sum_long_rows():
    from doc_examples.examples import records

    got, expected = records.run_segmented(rows=16, cols=20000)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-3)


def test_running_argmax_long_rows():
    from doc_examples.examples import records

    got, expected = records.run_argmax(rows=16, cols=20000)
    np.testing.assert_array_equal(got, expected)


def test_selective_scan_recurrence_long_rows():
    from doc_examples.examples import records

    got, expected = records.run_recurrence(rows=8, cols=65536)
    scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - expected) <= records.RECURRENCE_TOLERANCE * scale)


@pytest.mark.skipif(shutil.which("cuobjdump") is None, reason="needs cuobjdump")
def test_recurrence_has_no_local_memory(tmp_path):
    from doc_examples.examples import records

    rows = from_dtype(np.float32)[:, ::1]
    cubin = scan.compile(records.selective_scan, (rows, rows, rows), cc=(9, 0), block=32)
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    sass = subprocess.run(
        ["cuobjdump", "-sass", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "LDL" not in sass
    assert "STL" not in sass


PAIR32 = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def _copy_kernel(algorithm: str, threads: int, items: int) -> Any:
    @cuda.jit
    def copy(src, dst):
        buf = cuda.local.array(items, PAIR32)
        for base in block.tiles(src.shape[0], items):
            block.load(src, base, buf, algorithm=algorithm)
            block.store(dst, base, buf, algorithm=algorithm)

    return copy


@pytest.mark.sanitize
@pytest.mark.parametrize("shift", [0, 4])
@pytest.mark.parametrize("algorithm", ["warp_transpose", "direct", "transpose", "striped"])
def test_records_move_the_same_at_any_4_byte_alignment(algorithm, shift):
    """8-byte records aligned to 4 move as 8-byte words where the array is 8-byte aligned, and
    field by field where a view starts 4 bytes past that: the same bits, and no misaligned
    access (memcheck reports one; without it the GPU faults)."""
    threads, items, n = 128, 4, 128 * 4 * 5 + 37  # five full tiles and a partial one
    rng = np.random.default_rng(shift)
    values = np.zeros(n, PAIR32)
    values["a"] = rng.standard_normal(n)
    values["b"] = rng.standard_normal(n)
    raw = np.zeros(n * 8 + 8, np.uint8)
    raw[shift : shift + n * 8] = values.view(np.uint8)
    d_src = cuda.to_device(raw)
    d_dst = cuda.to_device(np.zeros_like(raw))
    src = d_src[shift : shift + n * 8].view(PAIR32)
    dst = d_dst[shift : shift + n * 8].view(PAIR32)
    assert src.__cuda_array_interface__["data"][0] % 8 == shift
    _copy_kernel(algorithm, threads, items)[1, threads](src, dst)
    got = d_dst.copy_to_host()
    np.testing.assert_array_equal(got[shift : shift + n * 8], raw[shift : shift + n * 8])
