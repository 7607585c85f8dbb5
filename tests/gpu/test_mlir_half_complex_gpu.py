# SPDX-License-Identifier: Apache-2.0
"""On a GPU: half-precision and complex data in numba-cuda-mlir kernels.

bfloat16 items and state (local arrays of bfloat16, which numba-cuda-mlir
has) scanned with a bfloat16 callback. numba-cuda-mlir 0.6.0 takes no
bfloat16 array from outside a kernel (torch tensors of any dtype fail at
launch, a device array of ``ml_dtypes.bfloat16`` cannot be made, torch's
``__cuda_array_interface__`` says ``<V2``), so the data cross the launch as
float32 and become bfloat16 items in the kernel. The docs' torch program
under numba-cuda-mlir is kept as an expected failure: it passes (and this
test fails, strict) once numba-cuda-mlir launches torch tensors.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import numpy as np
import pytest
from helpers.torch_cuda import cuda_torch

import statefn
from scan import block

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed: its GPU tests do NOT run",
)
ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 needs ml_dtypes")
from numba_cuda_mlir import cuda  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings(
        "ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning"
    ),
]

BF16 = np.dtype(ml_dtypes.bfloat16)
THREADS = 256


def _mlir(fn: Any) -> Any:
    """`fn`'s body as a numba-cuda-mlir kernel."""
    fn = getattr(fn, "py_func", fn)
    return cuda.jit(
        pytypes.FunctionType(fn.__code__, {**fn.__globals__, "cuda": cuda}, fn.__name__)
    )


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="numba-cuda-mlir 0.6.0 launches no torch tensor: its launch calls "
    "np.dtype(tensor.dtype) ('Cannot interpret torch.bfloat16 as a data type', "
    "torch.float32 alike)",
)
def test_bfloat16_row_cumsum_from_torch_tensors() -> None:
    torch = cuda_torch()
    from doc_examples.examples import half_precision as hp

    rows, cols = 16, 20000
    x = torch.randn(rows, cols, device="cuda").to(torch.bfloat16)
    y = torch.zeros_like(x)
    _mlir(hp.bf16_row_cumsum)[rows, THREADS](x, y)
    torch.cuda.synchronize()
    bits = [t.view(torch.int16).cpu().numpy().view(BF16) for t in (x, y)]
    want = np.cumsum(bits[0].astype(np.float32), axis=1, dtype=np.float32)
    got = bits[1].astype(np.float32)
    scale = np.abs(want).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - want.astype(BF16).astype(np.float32)) <= 2.0**-7 * scale)


@statefn.stateful(BF16)
def bfloat16_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def bfloat16_items(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, ml_dtypes.bfloat16)
    state[0] = 0
    wide = cuda.local.array(4, np.float32)
    items = cuda.local.array(4, ml_dtypes.bfloat16)
    for base in block.tiles(src.shape[0], items):
        block.load(src, base, wide, oob_default=0)
        for j in range(4):
            items[j] = wide[j]
        block.inclusive_sum(items, items, prefix_op=bfloat16_total, prefix_state=state)
        for j in range(4):
            wide[j] = items[j]
        block.store(dst, base, wide)


def test_bfloat16_items_and_state() -> None:
    src = (np.arange(3000) % 2 == 0).astype(np.float32)  # sums up to 128: exact in bfloat16
    src[256:] = 0
    d_dst = cuda.to_device(np.full(src.shape, np.nan, np.float32))
    _mlir(bfloat16_items)[1, THREADS](cuda.to_device(src), d_dst)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.cumsum(src))
