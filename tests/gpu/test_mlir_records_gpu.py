# SPDX-License-Identifier: Apache-2.0
"""On a GPU: record values and state in numba-cuda-mlir kernels give NumPy's results.

The worked programs of ``docs/records.md`` (their kernel bodies, ``cuda``
bound to ``numba_cuda_mlir.cuda``) over long rows against their sequential
NumPy references, as ``test_records_gpu.py`` runs them under numba-cuda (the
float32 recurrence against float64); every record case of
``tests/helpers/record_cases.py`` (entry points, record scalars and local
arrays of records, algorithms, 2-D/3-D blocks, caller temp storage); and the
record operands: a block aggregate (also broadcast through a shared array of
records), an initial value and an out-of-bounds default given as records, a
record state carried with numeric values.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import numpy as np
import pytest
from helpers import record_cases as rc

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

PAIR = rc.PAIR
COUNT = np.dtype([("n", np.int64), ("total", np.float64)], align=True)


def mlir_kernel(kernel: Any) -> Any:
    """A numba-cuda kernel's body compiled by numba-cuda-mlir."""
    fn = getattr(kernel, "py_func", kernel)
    namespace = {**fn.__globals__, "cuda": cuda}
    body = pytypes.FunctionType(
        fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
    )
    return cuda.jit(body)


def assert_records_equal(got: Any, expected: Any) -> None:
    """Field by field, exactly."""
    for name in PAIR.names or ():
        np.testing.assert_array_equal(got[name], np.asarray(expected[name], np.float32))


def launch(kernel: Any, grid: Any, threads: Any, *arrays: np.ndarray[Any, Any]) -> list[Any]:
    """Run `kernel` on copies of `arrays` on the device; their contents afterwards."""
    on_device = [cuda.to_device(a) for a in arrays]
    kernel[grid, threads](*on_device)
    return [d.copy_to_host() for d in on_device]


# ---------------------------------------------------------------------------
# the programs of docs/records.md, over long rows


@pytest.fixture
def records(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``doc_examples.examples.records`` with its three kernels compiled by numba-cuda-mlir.

    Its ``run_*`` functions launch them on the same inputs and compare with the
    same references as under numba-cuda.
    """
    from doc_examples.examples import records as module

    for name in ("segmented_sum", "running_argmax", "selective_scan"):
        monkeypatch.setattr(module, name, mlir_kernel(getattr(module, name)))
    return module


def test_segmented_sum_long_rows(records: Any) -> None:
    got, expected = records.run_segmented(rows=16, cols=20000)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-3)


def test_running_argmax_long_rows(records: Any) -> None:
    got, expected = records.run_argmax(rows=16, cols=20000)
    np.testing.assert_array_equal(got, expected)


def test_selective_scan_recurrence_long_rows(records: Any) -> None:
    got, expected = records.run_recurrence(rows=8, cols=65536)
    scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - expected) <= records.RECURRENCE_TOLERANCE * scale)


# ---------------------------------------------------------------------------
# every record case


@pytest.mark.parametrize("case", rc.record_cases(), ids=str)
def test_record_case_matches_reference(case: rc.RecordCase) -> None:
    temp = (16, 16)
    if case.temp == "caller":
        layout = block.temp_storage(
            "scan", PAIR, case.block, case.items, algorithm=case.algorithm, cc=(9, 0)
        )
        temp = (layout.size, layout.alignment)
    src = rc.inputs(case, rows=2)
    _, got = launch(mlir_kernel(rc.kernel(case, temp)), 2, case.block, src, np.zeros_like(src))
    assert_records_equal(got, rc.reference(case, src))


# ---------------------------------------------------------------------------
# record operands


def compose(x: Any, y: Any) -> Any:  # x first, then y
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateful(COUNT)
def counting_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0].total
    state[0].n += 1
    state[0].total = prefix + block_aggregate
    return prefix


def _maps(n: int, seed: int = 0) -> np.ndarray[Any, Any]:
    """Affine maps whose compositions are exact in float32 (a in {1, -1}, small integer b)."""
    rng = np.random.default_rng(seed)
    out = np.zeros(n, PAIR)
    out["a"] = rng.choice(np.array([1.0, -1.0], np.float32), size=n)
    out["b"] = rng.integers(-3, 4, size=n).astype(np.float32)
    return out


def _composed(maps: np.ndarray[Any, Any], exclusive: bool) -> np.ndarray[Any, Any]:
    """The running composition of `maps` from the identity (1, 0), in float64."""
    out = np.zeros_like(maps)
    acc = (1.0, 0.0)
    for i, (a, b) in enumerate(zip(maps["a"].astype(float), maps["b"].astype(float), strict=True)):
        if exclusive:
            out[i] = acc
        acc = (acc[0] * a, a * acc[1] + b)
        if not exclusive:
            out[i] = acc
    return out


def test_record_block_aggregate() -> None:
    @cuda.jit
    def kernel(a: Any, out: Any) -> None:
        agg = cuda.local.array(1, PAIR)
        items = cuda.local.array(2, PAIR)
        block.load(a, 0, items)
        block.inclusive_scan(items, items, scan_op=compose, block_aggregate=agg)
        block.store(a, 0, items)
        if cuda.threadIdx.x == 0:
            out[0] = agg[0]

    maps = _maps(64)
    scanned, aggregate = launch(kernel, 1, 32, maps, np.zeros(1, PAIR))
    expected = _composed(maps, exclusive=False)
    assert_records_equal(scanned, expected)
    assert_records_equal(aggregate, expected[-1:])


def test_shared_array_of_records_broadcasts_the_aggregate() -> None:
    @cuda.jit
    def kernel(a: Any) -> None:
        agg = cuda.local.array(1, PAIR)
        shown = cuda.shared.array((2, 1), PAIR)
        i = cuda.threadIdx.x
        a[i] = block.inclusive_scan(a[i], scan_op=compose, block_aggregate=agg)
        if i == 0:
            shown[1, 0] = agg[0]
        cuda.syncthreads()
        a[i] = shown[1, 0]

    maps = _maps(64, seed=4)
    (got,) = launch(kernel, 1, 64, maps)
    total = _composed(maps, exclusive=False)[-1:]
    assert_records_equal(got, np.repeat(total, 64))


def test_record_initial_value_of_record_scalars() -> None:
    @cuda.jit
    def kernel(a: Any, out: Any) -> None:
        init = cuda.local.array(1, PAIR)
        init[0].a = 1.0
        init[0].b = 0.0
        i = cuda.threadIdx.x
        out[i] = block.exclusive_scan(a[i], scan_op=compose, initial_value=init[0])

    maps = _maps(96, seed=1)
    _, got = launch(kernel, 1, 96, maps, np.zeros_like(maps))
    assert_records_equal(got, _composed(maps, exclusive=True))


def test_record_oob_default_fills_the_tile() -> None:
    @cuda.jit
    def kernel(a: Any, out: Any) -> None:
        fill = cuda.local.array(1, PAIR)
        fill[0].a = 1.0
        fill[0].b = -2.0
        items = cuda.local.array(3, PAIR)
        block.load(a, 0, items, oob_default=fill[0])
        block.store(out, 0, items)

    maps = _maps(100, seed=2)
    _, got = launch(kernel, 1, 64, maps, np.zeros(64 * 3, PAIR))
    assert_records_equal(got[:100], maps)
    assert np.all(got["a"][100:] == 1.0)
    assert np.all(got["b"][100:] == -2.0)


def test_record_state_carries_numeric_values() -> None:
    @cuda.jit
    def kernel(a: Any, n: Any) -> None:
        state = cuda.local.array(1, COUNT)
        state[0].n = 0
        state[0].total = 0.0
        items = cuda.local.array(4, np.float64)
        for base in range(0, a.shape[0], 32 * 4):
            block.load(a, base, items, oob_default=0.0)
            block.inclusive_scan(
                items, items, scan_op="+", prefix_op=counting_total, prefix_state=state
            )
            block.store(a, base, items)
        if cuda.threadIdx.x == 0:
            n[0] = state[0].n

    values = np.random.default_rng(3).integers(-9, 10, size=1000).astype(np.float64)
    got, calls = launch(kernel, 1, 32, values, np.zeros(1, np.int64))
    np.testing.assert_array_equal(got, np.cumsum(values))
    assert calls[0] == -(-values.size // 128)  # once a tile, in thread 0's own state
