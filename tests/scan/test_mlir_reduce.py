# SPDX-License-Identifier: Apache-2.0
"""Block reduce under numba-cuda-mlir: the same kernels as under numba-cuda compile and link.

The kernel bodies are shared with the numba-cuda tests (tests/scan/test_reduce.py);
the generic operand emitter of the front end makes the reduce provider's
operands from the spec's table (no reduce-specific lowering).
"""

from __future__ import annotations

import pytest

import scan

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed (pip install 'statefn-scan[mlir]'): "
    "the numba-cuda-mlir front end is NOT tested",
)
from helpers.reduce_kernels import kernels  # noqa: E402
from numba_cuda_mlir import cuda  # noqa: E402
from numba_cuda_mlir.numba_cuda import types  # noqa: E402

pytestmark = pytest.mark.nvrtc

CC = (9, 0)
F32 = types.float32[::1]
row_stats, argmax = kernels(cuda)


def test_numeric_reductions_compile_and_link() -> None:
    kernel = cuda.jit(row_stats)
    cubin = scan.compile(kernel, (types.float32[:, ::1], F32), cc=CC, block=(128, 1, 1))
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"


def test_record_argmax_compiles_and_links() -> None:
    cubin = scan.compile(cuda.jit(argmax), (F32, types.int32[::1]), cc=CC, block=(64, 1, 1))
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"


def test_every_object_is_linked() -> None:
    objects = scan.compile(
        cuda.jit(argmax), (F32, types.int32[::1]), cc=CC, block=(64, 1, 1), output="ltoir"
    )
    # the kernel, the reduce provider, and the user operator behind the pointer ABI
    assert len(objects) == 3
