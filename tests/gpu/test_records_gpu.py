# SPDX-License-Identifier: Apache-2.0
"""Record values on the GPU: the worked programs over long rows, and no local memory.

The per-entry-point matrix (every entry point x payload x algorithm with record
values, tile I/O of records, 2-D/3-D blocks, caller temp storage) is
``tests/sim/test_sim_records.py``, which the GPU suite runs on the device too.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from numba.cuda.np.numpy_support import from_dtype

import scan

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
