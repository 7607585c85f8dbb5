# SPDX-License-Identifier: Apache-2.0
"""On a GPU: half-precision and complex data, from torch tensors and NumPy arrays.

The block-semantics cases are tests/sim/test_sim_half_complex.py and the
docs' examples (tests/doc_examples), which run here too; these run the
bfloat16 row cumsum of docs/half-precision.md over long rows, with torch's
bfloat16 and float16 CUDA tensors passed as they are to ``kernel[grid,
block](...)`` and to ``scan.launcher(...)`` (no copy, no view), and the
callbacks whose float16 and bfloat16 arithmetic links numba-cuda's C++
helpers. Tests needing torch skip where it is not installed, and those of
bfloat16 where ml_dtypes is not (through which numba-cuda and cuda.core type
bfloat16 arrays, torch's included).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.torch_cuda import cuda_torch
from numba import cuda

import scan
import statefn
from scan import block

try:
    import ml_dtypes
except ImportError:  # the float16 and complex tests run without it
    ml_dtypes = None

pytestmark = pytest.mark.gpu
needs_bf16 = pytest.mark.skipif(ml_dtypes is None, reason="bfloat16 needs ml_dtypes")

BF16 = np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else None
THREADS = 256


def _bf16_cumsum_reference(x: Any) -> np.ndarray:
    """float32 running sums of bfloat16 rows (NumPy's order), rounded once to bfloat16."""
    return np.cumsum(x.astype(np.float32), axis=1, dtype=np.float32).astype(BF16)


def _assert_close_rows(got: np.ndarray, want: np.ndarray) -> None:
    """Within one bfloat16 step of each row's largest sum (the scan's order differs)."""
    got32, want32 = got.astype(np.float32), want.astype(np.float32)
    scale = np.abs(want32).max(axis=1, keepdims=True)
    assert np.all(np.abs(got32 - want32) <= 2.0**-7 * scale)


def _torch_bits(tensor: Any) -> np.ndarray:
    """A CUDA bfloat16 tensor's values as an ml_dtypes array (through its bits)."""
    torch = cuda_torch()
    return tensor.view(torch.int16).cpu().numpy().view(BF16)


@needs_bf16
@pytest.mark.sanitize
def test_torch_bfloat16_tensors_pass_to_a_kernel_as_they_are() -> None:
    torch = cuda_torch()
    from doc_examples.examples import half_precision as hp

    rows, cols = 64, 65536 + 333  # a partial last tile
    x = torch.randn(rows, cols, device="cuda").to(torch.bfloat16)
    y = torch.zeros_like(x)
    hp.bf16_row_cumsum[rows, THREADS](x, y)
    torch.cuda.synchronize()
    _assert_close_rows(_torch_bits(y), _bf16_cumsum_reference(_torch_bits(x)))


@needs_bf16
@pytest.mark.sanitize
def test_torch_tensors_pass_to_a_launcher_as_they_are() -> None:
    torch = cuda_torch()
    from doc_examples.examples import half_precision as hp

    rows, cols = 32, 10000
    launch = scan.launcher(hp.bf16_row_cumsum, rows, THREADS)
    for seed in range(3):  # the first launch compiles; the others launch through cuda.core
        torch.manual_seed(seed)
        x = torch.randn(rows, cols, device="cuda").to(torch.bfloat16)
        y = torch.zeros_like(x)
        launch(x, y)
        torch.cuda.synchronize()
        _assert_close_rows(_torch_bits(y), _bf16_cumsum_reference(_torch_bits(x)))
    assert launch.direct


@cuda.jit
def half_rows(src, dst):  # float16 rows through float32 items
    row = cuda.blockIdx.x
    items = cuda.local.array(8, np.float32)
    for base in range(0, src.shape[1], block.tile_size(items)):
        block.load(src[row], base, items, oob_default=0)
        for i in range(8):
            items[i] = items[i] * np.float32(3.0)
        block.store(dst[row], base, items)


def test_torch_float16_tensors_round_on_the_store() -> None:
    torch = cuda_torch()
    x = torch.randn(16, 4097, device="cuda").to(torch.float16)
    y = torch.zeros_like(x)
    half_rows[16, THREADS](x, y)
    torch.cuda.synchronize()
    want = (x.cpu().numpy().astype(np.float32) * np.float32(3.0)).astype(np.float16)
    np.testing.assert_array_equal(y.cpu().numpy(), want)
    # a launcher takes the same tensors; float16 tensors have a NumPy dtype of their own
    scan.launcher(half_rows, 16, THREADS)(x, y)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), want)


@needs_bf16
def test_host_bfloat16_arrays_move_as_their_bits() -> None:
    from doc_examples.examples import half_precision as hp

    got, want = hp.run_bf16_cumsum(rows=8, cols=20000)
    _assert_close_rows(got, want)


@statefn.stateful(np.float16)
def half_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _bfloat16_add(a: Any, b: Any) -> Any:
    return a + b


@cuda.jit
def half_callbacks(h, b, out_h, out_b):
    # float16 state and values: the callback's additions are numba-cuda's C++ helpers
    state = cuda.local.array(1, np.float16)
    state[0] = 0
    items = cuda.local.array(4, np.float16)
    for base in range(0, h.shape[0], block.tile_size(items)):
        block.load(h, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=half_total, prefix_state=state)
        block.store(out_h, base, items)
    # one bfloat16 value a thread, scanned with a user operator (bfloat16 helpers)
    t = cuda.threadIdx.x
    out_b[t] = block.inclusive_scan(b[t], scan_op=_bfloat16_add)


@needs_bf16
@pytest.mark.sanitize
def test_half_precision_callbacks_link_numba_cudas_helpers() -> None:
    h = (np.arange(3 * 1024 + 7) % 2).astype(np.float16)  # sums up to 1540: exact in float16
    b = (np.arange(THREADS) % 2).astype(BF16)  # sums up to 128: exact in bfloat16
    out_h = cuda.device_array_like(h)
    bits = cuda.to_device(b.view(np.uint16))
    out_bits = cuda.device_array(THREADS, np.uint16)
    half_callbacks[1, THREADS](h, bits.view(BF16), out_h, out_bits.view(BF16))
    np.testing.assert_array_equal(out_h.copy_to_host(), np.cumsum(h.astype(np.float32)))
    got = out_bits.copy_to_host().view(BF16).astype(np.float32)
    np.testing.assert_array_equal(got, np.cumsum(b.astype(np.float32)))


@needs_bf16  # the docs' examples module imports ml_dtypes
@pytest.mark.sanitize
def test_complex_rotation_long_rows() -> None:
    from doc_examples.examples import half_precision as hp

    got, want = hp.run_rotation(n=100000)
    # float32 products: the phase's error grows with the row, its magnitude stays 1
    np.testing.assert_allclose(np.abs(got), 1.0, atol=1e-3)
    np.testing.assert_allclose(got, want, atol=2e-2)


def test_complex128_sums_and_reductions() -> None:
    @cuda.jit
    def sums(src, dst, total):
        items = cuda.local.array(4, np.complex128)
        block.load(src, 0, items, oob_default=0)
        block.exclusive_sum(items, items)
        block.store(dst, 0, items)
        s = block.sum(items)
        if cuda.threadIdx.x == 0:
            total[0] = s

    rng = np.random.default_rng(2)
    src = (rng.integers(-9, 10, 1000) + 1j * rng.integers(-9, 10, 1000)).astype(np.complex128)
    dst = np.zeros_like(src)
    total = np.zeros(1, np.complex128)
    sums[1, THREADS](src, dst, total)
    np.testing.assert_array_equal(dst, np.concatenate([[0], np.cumsum(src)[:-1]]))
    # block.sum of the tile's exclusive sums: the items past the row (zeros when loaded)
    # hold the row's total after the scan, and count too
    tile = np.zeros(THREADS * 4, np.complex128)
    tile[: src.size] = src
    np.testing.assert_array_equal(total[0], np.concatenate([[0], np.cumsum(tile)[:-1]]).sum())
