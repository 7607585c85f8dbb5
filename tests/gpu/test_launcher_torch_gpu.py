# SPDX-License-Identifier: Apache-2.0
"""``scan.launcher`` on torch CUDA tensors: typed and packed from the tensor itself.

After its first launch a launcher types a plain CUDA tensor by its dtype, shape and strides
(remembered) and packs its address, shape and strides without DLPack or the array interface.
These launches must give what ``kernel[grid, block](...)`` gives on the same tensors, for
contiguous and strided views, new tensors at each call and new shapes, and refuse what the
kernel was not compiled for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.torch_cuda import cuda_torch
from numba import cuda

import scan
from scan import block
from scan._numba_cuda._launch import _cuda_tensor

pytestmark = pytest.mark.gpu

THREADS, ITEMS = 64, 4


@cuda.jit
def scaled_rows(src: Any, dst: Any, scale: Any) -> None:
    # a strided view's rows are strided too: plain indexing, no tile I/O
    row = cuda.blockIdx.x
    for col in range(cuda.threadIdx.x, src.shape[1], cuda.blockDim.x):
        dst[row, col] = src[row, col] * scale


@cuda.jit
def row_sums(src: Any, dst: Any) -> None:
    items = cuda.local.array(ITEMS, np.float32)
    row = cuda.blockIdx.x
    for base in block.tiles(src.shape[1], items):
        block.load(src[row], base, items, oob_default=0)
        block.inclusive_sum(items, items)
        block.store(dst[row], base, items)


def test_which_values_take_the_tensor_path() -> None:
    torch = cuda_torch()
    t = torch.zeros(4, 5, device="cuda")
    assert _cuda_tensor(t)
    assert _cuda_tensor(t.t())  # strided views too
    assert not _cuda_tensor(t.cpu())
    assert not _cuda_tensor(t.clone().requires_grad_())  # numba-cuda's typing refuses it
    assert not _cuda_tensor(torch.nn.Parameter(t))  # subclasses keep the array interface
    assert not _cuda_tensor(torch.zeros(3, dtype=torch.complex64, device="cuda").conj())
    assert not _cuda_tensor(cuda.to_device(np.zeros(3)))


def test_new_tensors_at_each_call_equal_the_kernels_own() -> None:
    torch = cuda_torch()
    rows, cols = 6, THREADS * ITEMS  # one tile a row: the row's cumsum
    launch = scan.launcher(row_sums, rows, THREADS)
    for seed in range(4):  # the first launch compiles; the others pack the tensors directly
        torch.manual_seed(seed)
        x = torch.randint(-9, 9, (rows, cols), device="cuda").float()
        y, want = torch.zeros_like(x), torch.zeros_like(x)
        launch(x, y)
        row_sums[rows, THREADS](x, want)
        torch.cuda.synchronize()
        assert torch.equal(y, want)
        assert torch.equal(y, x.cumsum(1))
    assert launch.direct


def test_strided_views_keep_their_strides() -> None:
    torch = cuda_torch()
    launch = scan.launcher(scaled_rows, 5, THREADS)
    for cols in (70, 130):  # a new shape: typed again, the same type
        base = torch.arange(cols * 5 * 2, device="cuda", dtype=torch.float64).reshape(cols, 10)
        x = base[:, ::2].t()  # (5, cols), strides (2, 10) elements
        y = torch.zeros(cols, 5, device="cuda", dtype=torch.float64).t()
        launch(x, y, 3.0)
        torch.cuda.synchronize()
        assert torch.equal(y, x * 3)
    assert launch.direct
    c = torch.zeros(5, 70, device="cuda", dtype=torch.float64)  # C-contiguous: another type
    with pytest.raises(TypeError, match="where the kernel was compiled"):
        launch(c, c, 1.0)


def test_another_dtype_and_a_tensor_that_requires_grad_are_refused() -> None:
    torch = cuda_torch()
    x = torch.ones(2, 100, device="cuda")
    launch = scan.launcher(row_sums, 2, THREADS)
    launch(x, torch.empty_like(x))
    with pytest.raises(TypeError, match=r"argument 0 is .*float64.* where the kernel"):
        launch(x.double(), torch.empty_like(x))
    with pytest.raises((RuntimeError, TypeError, ValueError, BufferError), match="grad"):
        launch(x.clone().requires_grad_(), torch.empty_like(x))
