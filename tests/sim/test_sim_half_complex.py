# SPDX-License-Identifier: Apache-2.0
"""Half precision and complex values against NumPy, in the simulator and unchanged on a GPU.

A load widens float16 and bfloat16 (``ml_dtypes.bfloat16``) arrays into
float32 or float64 items exactly, and a store rounds them back to nearest,
ties to even (NumPy's and ml_dtypes' casts, CUDA's ``_rn`` conversions);
half-precision items scan in their own type; complex items scan with complex
callbacks and operators. The refusals carry the compiled path's words.

On a GPU, numba-cuda 0.30 cannot copy a host ``ml_dtypes.bfloat16`` array to
the device (NumPy's DLPack export refuses the dtype): bfloat16 data moves as
its bits (uint16) and is viewed as bfloat16 on the device (:func:`_bf16`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from conftest import GPU_BACKEND, SIMULATOR
from numba import cuda

import statefn
from scan import ScanTypeError, block, warp
from scan._vocab import round_to_bfloat16

try:
    import ml_dtypes
except ImportError:  # the float16 and complex tests run without it
    ml_dtypes = None

pytestmark = pytest.mark.sim
#: the tests of bfloat16 arrays need ml_dtypes (the bf16 extra)
needs_bf16 = pytest.mark.skipif(ml_dtypes is None, reason="bfloat16 needs ml_dtypes")

BF16 = np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else None
THREADS = 32
ITEMS = 4
TILE = THREADS * ITEMS
PAIR = np.dtype([("a", np.float32), ("b", np.float64)], align=True)


class _Bf16:
    """A bfloat16 array as a kernel argument, and its contents after the launch."""

    def __init__(self, host: np.ndarray) -> None:
        self.host = host
        self.raw = cuda.to_device(host.view(np.uint16)) if GPU_BACKEND else None

    @property
    def arg(self) -> Any:
        return self.host if self.raw is None else self.raw.view(BF16)

    def result(self) -> np.ndarray:
        return self.host if self.raw is None else self.raw.copy_to_host().view(BF16)


@statefn.stateful(np.float32)
def carry(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.float16)
def half_carry(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.complex64)
def rotation(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return prefix


def _row_cumsum(algorithm: str | None) -> Any:
    @cuda.jit
    def row_cumsum(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.float32)
        state[0] = 0
        items = cuda.local.array(ITEMS, np.float32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], block.tile_size(items)):
            block.load(src[row], base, items, oob_default=0, algorithm=algorithm)
            block.inclusive_sum(items, items, prefix_op=carry, prefix_state=state)
            block.store(dst[row], base, items, algorithm=algorithm)

    return row_cumsum


@needs_bf16
@pytest.mark.parametrize("algorithm", [None, "direct", "vectorize"])
def test_bfloat16_rows_scan_with_a_float32_carry(algorithm: str | None) -> None:
    rows, cols = 2, 3 * TILE + 37
    rng = np.random.default_rng(7)
    # integers: the float32 sums are exact, so only the store rounds
    src = _Bf16(rng.integers(0, 8, (rows, cols)).astype(BF16))
    dst = _Bf16(np.zeros((rows, cols), BF16))
    _row_cumsum(algorithm)[rows, THREADS](src.arg, dst.arg)
    want = np.cumsum(src.host.astype(np.float32), axis=1).astype(BF16)
    np.testing.assert_array_equal(dst.result().view(np.uint16), want.view(np.uint16))


@cuda.jit
def round_trip(src: Any, half: Any, bf: Any) -> None:
    items = cuda.local.array(ITEMS, np.float64)
    base = cuda.blockIdx.x * block.tile_size(items)
    block.load(src, base, items)
    block.store(half, base, items)
    block.store(bf, base, items)


@needs_bf16
def test_a_store_rounds_to_nearest_ties_to_even() -> None:
    # ties, values just past them, overflow and subnormals of both types
    eps16, eps_bf = 2.0**-10, 2.0**-7
    special = [1 + eps16 / 2, 1 + 3 * eps16 / 2, 1 + eps16 / 2 + 2**-40, 65519.0, 65520.0]
    special += [1 + eps_bf / 2, 1 + 3 * eps_bf / 2, 1 + eps_bf / 2 + 2**-30, 3.4e38, 1e-42]
    rng = np.random.default_rng(3)
    src = rng.standard_normal(2 * TILE) * 10.0 ** rng.integers(-8, 8, 2 * TILE)
    src[: len(special)] = special
    src[len(special) : 2 * len(special)] = [-s for s in special]
    half = np.zeros(src.shape, np.float16)
    bf = _Bf16(np.zeros(src.shape, BF16))
    round_trip[2, THREADS](src, half, bf.arg)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(half.view(np.uint16), src.astype(np.float16).view(np.uint16))
        # rounded once from float64 (some ml_dtypes versions round twice, through float32)
        want = round_to_bfloat16(src).view(np.uint16)
        np.testing.assert_array_equal(bf.result().view(np.uint16), want)


def _partial(algorithm: str) -> Any:
    @cuda.jit
    def by_block(src: Any, out: Any) -> None:
        items = cuda.local.array(ITEMS, np.float32)
        for i in range(ITEMS):
            items[i] = 7.0
        block.load(src, 0, items, oob_default=-1.0, algorithm=algorithm)
        for i in range(ITEMS):
            out[cuda.threadIdx.x * ITEMS + i] = items[i]

    @cuda.jit
    def by_warp(src: Any, out: Any) -> None:
        items = cuda.local.array(ITEMS, np.float32)
        for i in range(ITEMS):
            items[i] = 7.0
        warp.load(src, 0, items, oob_default=-1.0)
        for i in range(ITEMS):
            out[cuda.threadIdx.x * ITEMS + i] = items[i]

    @cuda.jit
    def keeping(src: Any, out: Any) -> None:
        items = cuda.local.array(ITEMS, np.float32)
        for i in range(ITEMS):
            items[i] = 7.0
        block.load(src, 0, items)
        for i in range(ITEMS):
            out[cuda.threadIdx.x * ITEMS + i] = items[i]

    return {"warp": by_warp, "keep": keeping}.get(algorithm, by_block)


@pytest.mark.parametrize("algorithm", ["direct", "striped", "warp_transpose", "warp", "keep"])
def test_a_partial_tile_widens_its_valid_items_only(algorithm: str) -> None:
    src = np.arange(1, 51, dtype=np.float16) / 4  # 50 valid items of a 128-item tile
    out = np.zeros(TILE, np.float32)
    _partial(algorithm)[1, THREADS](src, out)
    fill = 7.0 if algorithm == "keep" else -1.0
    if algorithm == "striped":  # item i of thread t is tile item i * THREADS + t
        positions = (np.arange(ITEMS) * THREADS + np.arange(THREADS)[:, None]).ravel()
    else:
        positions = np.arange(TILE)
    want = np.where(positions < len(src), 0.0, fill).astype(np.float32)
    valid = positions < len(src)
    want[valid] = src[positions[valid]].astype(np.float32)
    np.testing.assert_array_equal(out, want)


@cuda.jit
def zipped(a: Any, b: Any, out_b: Any) -> None:
    items = cuda.local.array(ITEMS, PAIR)
    base = cuda.blockIdx.x * block.tile_size(items)
    block.load((a, b), base, items, oob_default=(0.0, 0.0))
    for i in range(ITEMS):
        items[i].b = items[i].a * 3.0 + items[i].b
    block.store(out_b, base, items, field="b")


@needs_bf16
def test_zipped_fields_widen_from_and_round_to_half_arrays() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal(TILE + 9).astype(np.float16)
    b = _Bf16(rng.standard_normal(TILE + 9).astype(BF16))
    out = _Bf16(np.zeros(TILE + 9, BF16))
    zipped[2, THREADS](a, b.arg, out.arg)
    want = (a.astype(np.float64) * 3.0 + b.host.astype(np.float64)).astype(BF16)
    np.testing.assert_array_equal(out.result().view(np.uint16), want.view(np.uint16))


@cuda.jit
def half_cumsum(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.float16)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float16)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=half_carry, prefix_state=state)
        block.store(dst, base, items)


def test_float16_items_sum_in_float16() -> None:
    src = (np.arange(3 * TILE + 5) % 3).astype(np.float16)
    dst = np.zeros_like(src)
    half_cumsum[1, THREADS](src, dst)
    np.testing.assert_array_equal(dst, np.cumsum(src.astype(np.float32)).astype(np.float16))


@cuda.jit
def rotate(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.complex64)
    state[0] = 1
    items = cuda.local.array(ITEMS, np.complex64)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items, oob_default=1)
        block.inclusive_scan(items, items, scan_op="*", prefix_op=rotation, prefix_state=state)
        block.store(dst, base, items)


def test_a_complex_running_product_turns_unit_numbers() -> None:
    angles = np.random.default_rng(11).uniform(-0.1, 0.1, 2 * TILE + 3)
    src = np.exp(1j * angles).astype(np.complex64)
    dst = np.zeros_like(src)
    rotate[1, THREADS](src, dst)
    want = np.exp(1j * np.cumsum(angles))
    np.testing.assert_allclose(dst, want, atol=2e-5)
    np.testing.assert_allclose(np.abs(dst), 1.0, atol=2e-5)


def _bfloat16_sum(a: Any, b: Any) -> Any:
    return a + b


@cuda.jit
def bfloat16_values(src: Any, out: Any) -> None:
    t = cuda.threadIdx.x
    x = src[t]
    total = block.inclusive_sum(x)
    out[t] = block.inclusive_scan(total, scan_op=_bfloat16_sum)
    top = block.reduce(x, "max")
    if t == 0:
        out[THREADS] = top


@needs_bf16
def test_bfloat16_values_scan_and_reduce_in_bfloat16() -> None:
    # every partial sum, in any order CUB adds them, is an integer below 256: exact in
    # bfloat16's 8 significant bits, so the GPU's tree and the simulator's order agree
    src = _Bf16((np.arange(THREADS) % 7 == 3).astype(BF16))
    out = _Bf16(np.zeros(THREADS + 1, BF16))
    bfloat16_values[1, THREADS](src.arg, out.arg)
    x = src.host.astype(np.float32)
    total = np.cumsum(x)
    want = np.append(np.cumsum(total), x.max())
    assert want.max() < 256
    np.testing.assert_array_equal(out.result().astype(np.float32), want)


# ---------------------------------------------------------------- refusals


def _expect(kernel: Any, arrays: tuple[Any, ...], kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as info:
        kernel[1, THREADS](*arrays)
    got = str(getattr(info.value, "rejection", info.value))
    if SIMULATOR:  # the simulator names the thread that raised
        assert re.fullmatch(r"tid=\[\d+, \d+, \d+\] ctaid=\[\d+, \d+, \d+\]: (.*)", got, re.S), got
        got = got.split(": ", 1)[1]
    assert got.split("\n")[0] == message


@cuda.jit
def huge_half_default(src: Any) -> None:
    items = cuda.local.array(ITEMS, np.float16)
    block.load(src, 0, items, oob_default=1e6)


@cuda.jit
def bfloat16_into_integers(src: Any) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    block.load(src, 0, items)


@cuda.jit
def half_state_float_values(src: Any) -> None:
    state = cuda.local.array(1, np.float16)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.float32)
    block.load(src, 0, items, oob_default=0)
    block.inclusive_sum(items, items, prefix_op=half_carry, prefix_state=state)


@cuda.jit
def complex_state_real_values(src: Any) -> None:
    state = cuda.local.array(1, np.complex64)
    state[0] = 1
    items = cuda.local.array(ITEMS, np.float32)
    block.load(src, 0, items, oob_default=0)
    block.inclusive_sum(items, items, prefix_op=rotation, prefix_state=state)


def test_a_half_default_outside_the_range_is_refused() -> None:
    _expect(
        huge_half_default,
        (np.zeros(8, np.float16),),
        ScanTypeError,
        "load: oob_default is 1000000.0 (float64), outside the range of float16 values "
        "(largest finite value 65504): it would become inf; pass a number within +-65504 (or "
        "inf, -inf), or use float32 items (block.load widens float16 arrays into them exactly)",
    )


@needs_bf16
def test_bfloat16_into_integer_items_is_refused() -> None:
    _expect(
        bfloat16_into_integers,
        (_Bf16(np.zeros(8, BF16)).arg,),
        ScanTypeError,
        "load: src has dtype bfloat16 but items have dtype int32; a load converts only "
        "float16 and bfloat16 arrays into float32 or float64 items (widening them exactly): "
        "use float32 items, or convert the data outside the kernel",
    )


def test_a_float16_state_for_float32_values_is_refused() -> None:
    _expect(
        half_state_float_values,
        (np.zeros(8, np.float32),),
        ScanTypeError,
        "inclusive_sum: prefix_op=half_carry declares state dtype float16, which cannot hold "
        "the aggregate of float32 values: float16 is narrower than float32; declare the "
        "callback with a state dtype that holds the values, e.g. @statefn.stateful(np.float32), "
        "or cast the values to the state's dtype before the scan",
    )


def test_a_complex_result_for_real_values_is_refused() -> None:
    _expect(
        complex_state_real_values,
        (np.ones(8, np.float32),),
        statefn.CallbackCompileError,
        f"stateful prefix callback {__name__}.rotation returned a complex64 number but the "
        "values are float32: converting it would drop its imaginary part. Return a real "
        "number: its real part (prefix.real) or its magnitude (abs(prefix)) if that is what "
        "the scan needs, or scan complex values (load them into complex64 items).",
    )
