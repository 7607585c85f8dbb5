# SPDX-License-Identifier: Apache-2.0
"""On a GPU: cross-block scans over many tiles, docs/lookback.md's programs against NumPy.

The block-semantics cases are tests/sim/test_sim_lookback.py, which runs here
too; these run sequences of thousands of tiles (more than the GPU holds at
once, so tiles really wait for each other), both tile-status layouts (values
packed with their status, and records of 16 bytes kept apart), statuses reset
on a stream and reused, and the docs' programs at full size.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numba import cuda

import scan
from scan import block

pytestmark = pytest.mark.gpu

PAIR64 = np.dtype([("a", np.float64), ("b", np.float64)], align=True)


@pytest.mark.sanitize
def test_docs_cumsum_of_one_long_array() -> None:
    from doc_examples.examples import lookback

    got, want = lookback.run_cumsum(n=3_000_001)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 1 << 24])
def test_docs_cumsum_lengths(n: int) -> None:
    from doc_examples.examples import lookback

    got, want = lookback.run_cumsum(n=n)
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_docs_selective_scan_of_16_rows() -> None:
    from doc_examples.examples import lookback

    got, want = lookback.run_selective_scan(rows=16, cols=40_000)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [7, 1_000_003])
def test_docs_stream_compaction(n: int) -> None:
    from doc_examples.examples import lookback

    (kept, count), want = lookback.run_compaction(n=n)
    assert count == want.size
    np.testing.assert_array_equal(kept, want)


@cuda.jit(device=True)
def compose(x: Any, y: Any) -> Any:
    return (x.a * y.a, y.a * x.b + y.b)


@cuda.jit
def recurrence64(ab: Any, h: Any, status: Any) -> None:
    items = cuda.local.array(2, PAIR64)
    base = cuda.blockIdx.x * 256 * 2
    block.load(ab, base, items, oob_default=(1.0, 0.0))
    block.inclusive_scan(items, scan_op=compose, prefix_op=scan.lookback, prefix_state=status)
    block.store(h, base, items)


def test_sixteen_byte_records_kept_apart_from_their_status() -> None:
    n = 2_000_000
    rng = np.random.default_rng(5)
    ab = np.zeros(n, PAIR64)
    ab["a"] = rng.uniform(0.999, 1.0, n)
    ab["b"] = rng.standard_normal(n) * 1e-3
    tiles = -(-n // 512)
    status = scan.tile_status(tiles, PAIR64)
    d_ab = cuda.to_device(ab)
    d_h = cuda.device_array_like(d_ab)
    recurrence64[tiles, 256](d_ab, d_h, status)
    h = d_h.copy_to_host()["b"]
    want = np.empty(n)
    acc = 0.0
    a, b = ab["a"], ab["b"]
    for start in range(0, n, 10_000):  # h = a * h + b, vectorised by chunks
        stop = min(n, start + 10_000)
        cum_a = np.cumprod(a[start:stop])
        want[start:stop] = cum_a * (acc + np.cumsum(b[start:stop] / cum_a))
        acc = want[stop - 1]
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-9)


@cuda.jit
def int64_sum(src: Any, dst: Any, status: Any) -> None:
    items = cuda.local.array(4, np.int64)
    base = cuda.blockIdx.x * 128 * 4
    block.load(src, base, items, oob_default=0)
    block.exclusive_sum(items, prefix_op=scan.lookback, prefix_state=status)
    block.store(dst, base, items)


def test_a_status_reset_on_a_stream_and_reused() -> None:
    n = 1_500_000
    tiles = -(-n // 512)
    stream = cuda.stream()
    status = scan.tile_status(tiles, np.int64, stream=stream)
    rng = np.random.default_rng(6)
    for _ in range(3):
        x = rng.integers(-(2**40), 2**40, n)
        d_x = cuda.to_device(x, stream=stream)
        d_y = cuda.device_array_like(d_x, stream=stream)
        int64_sum[tiles, 128, stream](d_x, d_y, status)
        status.reset(stream)
        got = d_y.copy_to_host(stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(got, np.cumsum(x) - x)


def test_tile_status_reports_its_size() -> None:
    status = scan.tile_status((4, 1000), np.int32)
    assert status.shape[0] == 4
    assert status.nbytes >= 4 * 1000 * 8
    assert not status.simulated
    assert status.__cuda_array_interface__["shape"] == status.shape


def _two_lookbacks(algorithm: str) -> Any:
    """Two look-back scans back to back in one kernel: the second reuses the first's storage."""

    @cuda.jit
    def kernel(src: Any, fwd: Any, bwd: Any, s1: Any, s2: Any) -> None:
        items = cuda.local.array(4, np.int64)
        base = cuda.blockIdx.x * 128 * 4
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(
            items, algorithm=algorithm, prefix_op=scan.lookback, prefix_state=s1, threads=128
        )
        block.store(fwd, base, items)
        base = ((src.shape[0] - 1) // 512 - cuda.blockIdx.x) * 512  # tile t: t-th from the end
        block.load(src, base, items, oob_default=0)
        block.exclusive_sum(
            items,
            algorithm=algorithm,
            prefix_op=scan.lookback,
            prefix_state=s2,
            reverse=True,
            threads=128,
        )
        block.store(bwd, base, items)

    return kernel


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ["warp_scans", "raking"])
def test_two_lookback_scans_in_one_kernel(algorithm: str) -> None:
    n = 300_001
    tiles = -(-n // 512)
    x = np.random.default_rng(7).integers(-(2**40), 2**40, n)
    d_x = cuda.to_device(x)
    d_f, d_b = cuda.device_array_like(d_x), cuda.device_array_like(d_x)
    s1, s2 = scan.tile_status(tiles, np.int64), scan.tile_status(tiles, np.int64)
    _two_lookbacks(algorithm)[tiles, 128](d_x, d_f, d_b, s1, s2)
    np.testing.assert_array_equal(d_f.copy_to_host(), np.cumsum(x))
    suffix = np.cumsum(x[::-1])[::-1]
    np.testing.assert_array_equal(d_b.copy_to_host(), suffix - x)
