# SPDX-License-Identifier: Apache-2.0
"""On a GPU: scan.block in numba-cuda-mlir kernels gives the numba-cuda results.

The block-semantics cases of ``tests/cases/block_cases.py`` run with their
kernel bodies compiled by numba-cuda-mlir (the same code, ``cuda`` bound to
``numba_cuda_mlir.cuda``) and are compared with the cases' NumPy reference;
a row cumsum carries its prefix through a stateful callback, with the block
shape taken from the launch.
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
from numba_cuda_mlir import cuda  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    # numba-cuda-mlir's own NumbaPerformanceWarning class (small test grids, no
    # disk cache for launch-config-specialised kernels), as tools/gpu_suite_mlir.sh
    pytest.mark.filterwarnings(
        "ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning"
    ),
]


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _row_cumsum(threads: int, ipt: int, dtype: Any) -> Any:
    @cuda.jit
    def kernel(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(ipt, dtype)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], threads * ipt):
            block.load(src[row], base, items, oob_default=0)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
            block.store(dst[row], base, items)

    return kernel


@pytest.mark.parametrize(
    ("threads", "ipt", "dtype", "cols"),
    [(128, 4, np.int32, 5000), (256, 8, np.int64, 65536), (64, 1, np.int32, 100)],
)
def test_row_cumsum_block_from_launch(threads: int, ipt: int, dtype: Any, cols: int) -> None:
    rng = np.random.default_rng(0)
    src = rng.integers(-50, 50, size=(8, cols)).astype(dtype)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(src)
    _row_cumsum(threads, ipt, dtype)[src.shape[0], threads](d_src, d_dst)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.cumsum(src, axis=1).astype(dtype))


def test_other_launch_shape_recompiles() -> None:
    src = np.arange(4 * 512, dtype=np.int32).reshape(4, 512)

    @cuda.jit
    def scan_rows(src: Any, dst: Any) -> None:
        items = cuda.local.array(2, np.int32)
        row = cuda.blockIdx.x
        block.load(src[row], 0, items)
        block.inclusive_sum(items, items)
        block.store(dst[row], 0, items)

    for threads in (256, 128):
        d_dst = cuda.device_array((4, 512), np.int32)
        scan_rows[4, threads](cuda.to_device(src), d_dst)
        tile = threads * 2
        want = np.cumsum(src[:, :tile], axis=1)
        np.testing.assert_array_equal(d_dst.copy_to_host()[:, :tile], want)


# ---------------------------------------------------------------------------
# the block-semantics cases, compiled by numba-cuda-mlir


def _cases() -> list[Any]:
    from cases.block_cases import ScanCase

    entry = [
        ScanCase(entry="inclusive_sum", mode="inclusive"),
        ScanCase(entry="exclusive_sum", mode="exclusive"),
        ScanCase(entry="inclusive_scan", mode="inclusive", op="max"),
        ScanCase(entry="exclusive_scan", mode="exclusive", op="min", initial_value=5),
        ScanCase(entry="scan", mode="exclusive", op="+"),
        ScanCase(entry="inclusive_scan", mode="inclusive", op="+", initial_value=100),
        ScanCase(entry="exclusive_scan", mode="exclusive", op="*", initial_value=1, dtype="int64"),
    ]
    out = [ScanCase(**{**c.__dict__, "items_per_thread": ipt}) for c in entry for ipt in (0, 3)]
    out += [
        ScanCase(entry="inclusive_sum", aggregate=True, items_per_thread=2, block=(4, 8, 1)),
        ScanCase(prefix="running", items_per_thread=4, tiles=4, block=(64, 1, 1)),
        ScanCase(prefix="running", items_per_thread=4, tiles=4, out_of_place=True),
        ScanCase(prefix="count", state_dtype="int32", tiles=2, block=(40, 1, 1)),
        ScanCase(prefix="count", state_dtype="int32", tiles=2, algorithm="warp_scans"),
        ScanCase(prefix="stateless", entry="exclusive_scan", mode="exclusive", op="max"),
        ScanCase(
            entry="inclusive_scan",
            op="max",
            prefix="running",
            dtype="float32",
            state_dtype="float64",
            items_per_thread=2,
            tiles=3,
        ),
        ScanCase(algorithm="raking_memoize", items_per_thread=2, block=(8, 4, 2)),
        ScanCase(prefix="running", items_per_thread=4, tiles=3, io="default", short=5),
        ScanCase(prefix="running", items_per_thread=4, tiles=2, io="vectorize", oob_default=0),
        ScanCase(items_per_thread=2, io="warp_transpose", temp_storage="caller"),
        ScanCase(items_per_thread=2, io="transpose", temp_storage="dynamic"),
        ScanCase(items_per_thread=2, tiles=2, auto_sync=False, explicit_threads=True),
    ]
    return out


def _mlir_kernel(kernel: Any) -> Any:
    fn = kernel.py_func
    namespace = {**fn.__globals__, "cuda": cuda}
    body = pytypes.FunctionType(
        fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
    )
    return cuda.jit(body)


@pytest.mark.parametrize("case", _cases(), ids=str)
def test_block_cases(case: Any) -> None:
    from cases import block_cases as bc

    src, state_init = bc.scan_inputs(case, rows=3)
    temp = bc.temp_layout(case, None)
    kernel = _mlir_kernel(bc.scan_kernel(case, temp))
    rows = src.shape[0]
    dst = np.full_like(src, bc.SENTINEL)
    states = np.zeros((rows, case.tiles, case.threads), dtype=np.dtype(case.state_dtype))
    aggs = np.zeros((rows, case.tiles, case.threads), dtype=np.dtype(case.dtype))
    arrays = [
        cuda.to_device(a)
        for a in (
            src,
            dst,
            states,
            aggs,
            np.ascontiguousarray(state_init.astype(np.dtype(case.state_array or case.state_dtype))),
        )
    ]
    dynamic = temp[0] if case.temp_storage == "dynamic" else 0
    kernel[rows, case.block, 0, dynamic](*arrays)
    got = {"dst": arrays[1].copy_to_host(), "states": arrays[2].copy_to_host()}
    got["aggs"] = arrays[3].copy_to_host()
    bc.assert_scan_matches(case, got, bc.scan_reference(case, src, state_init))
