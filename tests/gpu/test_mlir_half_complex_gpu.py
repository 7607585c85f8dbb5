# SPDX-License-Identifier: Apache-2.0
"""On a GPU: half-precision and complex data in numba-cuda-mlir kernels.

The kernels of docs/half-precision.md compiled by numba-cuda-mlir (the same
bodies, ``cuda`` bound to ``numba_cuda_mlir.cuda``), with torch's bfloat16
tensors passed as they are, and bfloat16 items and state (local arrays of
bfloat16, which numba-cuda-mlir has).
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import numpy as np
import pytest

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


def _torch() -> Any:
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


def test_bfloat16_row_cumsum_from_torch_tensors() -> None:
    torch = _torch()
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
    items = cuda.local.array(4, ml_dtypes.bfloat16)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=bfloat16_total, prefix_state=state)
        block.store(dst, base, items)


def test_bfloat16_items_and_state() -> None:
    torch = _torch()
    src = (torch.arange(3000, device="cuda") % 2 == 0).to(torch.bfloat16)  # sums up to 128
    src[256:] = 0
    dst = torch.zeros_like(src)
    _mlir(bfloat16_items)[1, THREADS](src, dst)
    torch.cuda.synchronize()
    want = torch.cumsum(src.float(), 0)
    assert torch.equal(dst.float(), want)
