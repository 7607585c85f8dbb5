# SPDX-License-Identifier: Apache-2.0
"""Half precision and complex values: converting tile I/O, half and complex scans, refusals.

The plans and the generated code of converting loads and stores (a float16
or bfloat16 array, float32 or float64 items); every refusal of the issue's
"bad input", with its exact words, under both front ends; one kernel per
front end that calls every conversion and every new value dtype (one NVRTC
unit each, linked for sm_90), also against CCCL 3.0; the rounding of
constant bfloat16 operands, run on the host; and how bfloat16 arrays are
spelled and typed (``scan.compile`` signatures, ml_dtypes and torch arrays).
"""

from __future__ import annotations

import ctypes
import types as pytypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cccl import compile_variants_with_cccl_3_0, skip_reason, toolkit_cccl
from helpers.kernels import compile_kernel, link_cubin
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import _cache, block, warp
from scan._codegen import render_group
from scan._plan import ArrayFact, ScalarFact, ZipFact, plan_fields
from scan._primitives import for_plan
from scan._primitives.block_reduce import plan_reduce
from scan._primitives.block_scan._plan import plan_scan
from scan._primitives.tile_io._plan import plan_tile_io
from scan._primitives.warp_io import plan_warp_io

ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 needs ml_dtypes")

pytestmark = pytest.mark.nvrtc

CC = (9, 0)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
PAIR = np.dtype([("a", np.float32), ("b", np.float64)], align=True)


def _io(direction: str, array: Any, items: Any, algorithm: str | None = None, **kw: Any) -> Any:
    return plan_tile_io(
        function=direction,  # type: ignore[arg-type]
        array=ArrayFact(array, 1) if not isinstance(array, ZipFact) else array,
        items=ArrayFact(items, 1, length=kw.pop("ipt", 4)),
        algorithm=algorithm,
        oob_default=kw.pop("oob", None),
        temp_storage=None,
        block=kw.pop("block", (128, 1, 1)),
    )


# ---------------------------------------------------------------- plans and code


def test_a_converting_load_moves_the_arrays_type() -> None:
    plan = _io("load", BF16, np.float32, "vectorize")
    assert plan.array_dtypes == (BF16,)
    assert plan.value_dtype == np.float32
    assert plan_fields(plan)["array_dtypes"] == (BF16,)
    text = for_plan(plan).render(plan, [], None, None)
    assert "#include <cuda_bf16.h>" in text
    assert "using memory_t = __nv_bfloat16;" in text
    assert "cub::BlockLoad<memory_t, 128, 4, cub::BLOCK_LOAD_VECTORIZE, 1, 1>" in text
    assert "return static_cast<value_t>(__bfloat162float(x));" in text
    # a plan without a conversion keeps its key and its text (no array_dtypes field)
    same = _io("load", np.float32, np.float32, "vectorize")
    assert same.array_dtypes is None
    assert "array_dtypes" not in plan_fields(same)
    assert plan.key != same.key


@pytest.mark.parametrize(
    ("array", "items", "conversion"),
    [
        (F16, np.float32, "__float2half_rn(x)"),
        (F16, np.float64, "__double2half(x)"),
        (BF16, np.float32, "__float2bfloat16_rn(x)"),
        (BF16, np.float64, "__double2bfloat16(x)"),
    ],
)
def test_a_converting_store_rounds_to_nearest_even(array: Any, items: Any, conversion: str) -> None:
    plan = _io("store", array, items)
    text = for_plan(plan).render(plan, [], None, None)
    assert f"{{ return {conversion}; }}" in text
    assert "memory_items[i] = to_memory(thread_items[i]);" in text


def test_the_default_algorithm_follows_the_arrays_items() -> None:
    # 256 x 4 float32 items: vector accesses of four-byte items; from bfloat16,
    # the measured default for two-byte items (warp_transpose)
    assert _io("load", np.float32, np.float32, block=(256, 1, 1)).algorithm == "vectorize"
    assert _io("load", BF16, np.float32, block=(256, 1, 1)).algorithm == "warp_transpose"


def test_zipped_fields_convert_each_its_own_array() -> None:
    arrays = ZipFact((ArrayFact(F16, 1), ArrayFact(np.float64, 1)))
    plan = _io("load", arrays, PAIR)
    assert plan.array_dtypes == (F16, np.float64)
    first, second = plan.field_plans()
    assert first.array_dtypes == (F16,)
    assert second.array_dtypes is None


# ---------------------------------------------------------------- refusals


@statefn.stateful(np.float16)
def half_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.complex64)
def rotation(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return prefix


def _refusals() -> dict[str, tuple[Any, Any, str]]:
    """(kernel body, array type, exact message) of every refused half or complex call."""

    def half_state_float_values(src: Any) -> None:
        state = cuda.local.array(1, np.float16)
        items = cuda.local.array(4, np.float32)
        block.inclusive_sum(items, items, prefix_op=half_total, prefix_state=state, threads=128)

    def complex_state_real_values(src: Any) -> None:
        state = cuda.local.array(1, np.complex64)
        items = cuda.local.array(4, np.float32)
        block.inclusive_sum(items, items, prefix_op=rotation, prefix_state=state, threads=128)

    def bfloat16_into_integer_items(src: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items, threads=128)

    def half_oob_default_out_of_range(src: Any) -> None:
        items = cuda.local.array(4, np.float16)
        block.load(src, 0, items, oob_default=1e6, threads=128)

    def float16_items_to_bfloat16(src: Any) -> None:
        items = cuda.local.array(4, np.float16)
        block.store(src, 0, items, threads=128)

    def half_items_to_float_array(src: Any) -> None:
        items = cuda.local.array(4, np.float16)
        warp.store(src, 0, items, threads=128)

    def complex_max(src: Any) -> None:
        items = cuda.local.array(4, np.complex64)
        block.inclusive_scan(items, items, scan_op="max", threads=128)

    def complex_reduce_max(src: Any) -> None:
        items = cuda.local.array(4, np.complex128)
        block.reduce(items, "min", threads=128)

    def complex_oob_default_for_real_items(src: Any) -> None:
        items = cuda.local.array(4, np.float32)
        block.load(src, 0, items, oob_default=1j, threads=128)

    def half_lookback(src: Any) -> None:
        items = cuda.local.array(4, np.float16)
        block.inclusive_sum(items, items, prefix_op=scan.lookback, prefix_state=src, threads=128)

    bf16, f16, f32 = types.bfloat16[::1], types.float16[::1], types.float32[::1]
    complex_lost = (
        f"stateful prefix callback {__name__}.rotation returned a complex64 number but "
        "the values are float32: converting it would drop its imaginary part. Return a real "
        "number: its real part (prefix.real) or its magnitude (abs(prefix)) if that is what "
        "the scan needs, or scan complex values (load them into complex64 items)."
    )
    return {
        "half_state_float_values": (
            half_state_float_values,
            f32,
            "ScanTypeError: inclusive_sum: prefix_op=half_total declares state dtype float16, "
            "which cannot hold the aggregate of float32 values: float16 is narrower than "
            "float32; declare the callback with a state dtype that holds the values, e.g. "
            "@statefn.stateful(np.float32), or cast the values to the state's dtype before "
            "the scan",
        ),
        "complex_state_real_values": (
            complex_state_real_values,
            f32,
            f"CallbackCompileError: {complex_lost}",
        ),
        "bfloat16_into_integer_items": (
            bfloat16_into_integer_items,
            bf16,
            "ScanTypeError: load: src has dtype bfloat16 but items have dtype int32; a load "
            "converts only float16 and bfloat16 arrays into float32 or float64 items "
            "(widening them exactly): use float32 items, or convert the data outside the "
            "kernel",
        ),
        "half_oob_default_out_of_range": (
            half_oob_default_out_of_range,
            f16,
            "ScanTypeError: load: oob_default is 1000000.0 (float64), outside the range of "
            "float16 values (largest finite value 65504): it would become inf; pass a number "
            "within +-65504 (or inf, -inf), or use float32 items (block.load widens float16 "
            "arrays into them exactly)",
        ),
        "float16_items_to_bfloat16": (
            float16_items_to_bfloat16,
            bf16,
            "ScanTypeError: store: dst has dtype bfloat16 but items have dtype float16; a "
            "store converts only float32 or float64 items into float16 and bfloat16 arrays "
            "(rounding to nearest, ties to even): use float32 items, or convert the data "
            "outside the kernel",
        ),
        "half_items_to_float_array": (
            half_items_to_float_array,
            f32,
            "ScanTypeError: warp.store: dst has dtype float32 but items have dtype float16; a "
            "store converts only float32 or float64 items into float16 and bfloat16 arrays "
            "(rounding to nearest, ties to even): use items of dst's dtype float32, or "
            "convert the data outside the kernel",
        ),
        "complex_max": (
            complex_max,
            f32,
            "ScanTypeError: inclusive_scan: scan_op='max' compares, but values are complex64, "
            "and complex numbers have no order; scan their magnitudes (abs) as float values, "
            "or pass scan_op=<function of (a, b)> that picks one by a rule of yours",
        ),
        "complex_reduce_max": (
            complex_reduce_max,
            f32,
            "ScanTypeError: reduce: op='min' compares, but items are complex128, and complex "
            "numbers have no order; scan their magnitudes (abs) as float values, or pass "
            "op=<function of (a, b)> that picks one by a rule of yours",
        ),
        "complex_oob_default_for_real_items": (
            complex_oob_default_for_real_items,
            f32,
            "ScanTypeError: load: oob_default has dtype complex128 but the values are "
            "float32: converting it would drop its imaginary part; pass a real number (its "
            ".real), or use complex values",
        ),
        "half_lookback": (
            half_lookback,
            f16,
            "ScanTypeError: inclusive_sum: prefix_op=scan.lookback does not take values of "
            "dtype float16 (a tile status holds the integer, float32 and float64 values and "
            "records of them); scan float32 items (block.load widens half-precision arrays into "
            "them exactly), or carry a complex prefix with a record of its two parts",
        ),
    }


REFUSALS = _refusals()


def _rejection(compile_it: Any) -> str:
    try:
        compile_it()
    except Exception as exc:
        exc = getattr(exc, "rejection", exc)
        return f"{type(exc).__name__}: {str(exc).split(chr(10))[0]}"
    raise AssertionError("the kernel compiled but was expected to be rejected")


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_bad_input_is_refused_with_both_dtypes_and_the_fix(name: str) -> None:
    body, argtype, message = REFUSALS[name]
    assert _rejection(lambda: compile_kernel(body, (argtype,))) == message


def _mlir() -> Any:
    return pytest.importorskip(
        "numba_cuda_mlir",
        reason="!!!!! numba-cuda-mlir is not installed: its half and complex values are NOT tested",
    )


def _with_cuda(fn: Any, module: Any) -> Any:
    """`fn` with the global name ``cuda`` bound to `module` (one body, either front end)."""
    return pytypes.FunctionType(
        fn.__code__, {**fn.__globals__, "cuda": module}, fn.__name__, fn.__defaults__
    )


def _mlir_array(dtype: Any, ndim: int = 1) -> Any:
    from numba_cuda_mlir.numba_cuda import types as mtypes
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

    return mtypes.Array(from_dtype(np.dtype(dtype)), ndim, "C")


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_numba_cuda_mlir_refuses_them_in_the_same_words(name: str) -> None:
    mlir = _mlir()
    body, argtype, message = REFUSALS[name]
    dtype = BF16 if argtype.dtype == types.bfloat16 else np.dtype(str(argtype.dtype))
    kernel = mlir.cuda.jit(_with_cuda(body, mlir.cuda))
    assert _rejection(lambda: scan.compile(kernel, (_mlir_array(dtype),), cc=CC)) == message


# ---------------------------------------------------------------- one kernel, every dtype


def _every_form(h: Any, b: Any, c: Any, oh: Any, ob: Any, oc: Any) -> None:
    """Every conversion and every new value dtype, in one kernel."""
    hs = cuda.local.array(1, np.float16)
    hs[0] = 0
    cs = cuda.local.array(1, np.complex64)
    cs[0] = 1
    f = cuda.local.array(8, np.float32)
    f8 = cuda.local.array(8, np.float32)  # the items of logical warps of 8 lanes
    d = cuda.local.array(8, np.float64)
    r = cuda.local.array(8, PAIR)
    hi = cuda.local.array(4, np.float16)
    ci = cuda.local.array(4, np.complex64)
    # loads and stores of every algorithm, widening and rounding
    block.load(h, 0, f, algorithm="direct", threads=128)
    block.load(b, 0, f, algorithm="striped", oob_default=0, threads=128)
    block.load(h, 0, d, algorithm="vectorize", threads=128)
    block.load(b, 0, d, algorithm="transpose", oob_default=-1.5, threads=128)
    block.load(h, 0, f, algorithm="warp_transpose_timesliced", threads=128)
    block.load(b, 0, f, threads=128)
    block.store(oh, 0, f, algorithm="direct", threads=128)
    block.store(ob, 0, f, algorithm="striped", threads=128)
    block.store(oh, 0, d, algorithm="vectorize", threads=128)
    block.store(ob, 0, d, algorithm="transpose", threads=128)
    block.store(oh, 0, f, threads=128)
    # zipped: half arrays of float32 and float64 fields
    block.load((h, b), 0, r, oob_default=(0.0, 1.0), threads=128)
    block.store(ob, 0, r, field="b", threads=128)
    block.store((oh, ob), 0, r, threads=128)
    # warps
    warp.load(h, 0, f, threads=128)
    warp.load(b, 0, d, algorithm="striped", oob_default=2, threads=128)
    warp.load(h, 0, f8, algorithm="direct", lanes=8, threads=128)
    warp.store(ob, 0, f, threads=128)
    warp.store(oh, 0, d, algorithm="striped", threads=128)
    # float16 items and state; bfloat16 values (one a thread: numba-cuda has no
    # local arrays of bfloat16); complex items, state and operator
    block.load(h, 0, hi, oob_default=0, threads=128)
    block.inclusive_sum(hi, hi, prefix_op=half_total, prefix_state=hs, threads=128)
    block.inclusive_scan(hi, hi, scan_op="max", threads=128)
    block.store(oh, 0, hi, threads=128)
    t = cuda.threadIdx.x
    bv = block.inclusive_sum(b[t], threads=128)
    bv = block.exclusive_scan(bv, scan_op="min", initial_value=1.5, threads=128)
    bv = warp.inclusive_scan(bv, scan_op=_half_add, threads=128)
    ob[t] = block.reduce(bv, "max", threads=128)
    block.load(c, 0, ci, oob_default=1, threads=128)
    block.inclusive_scan(ci, ci, scan_op="*", prefix_op=rotation, prefix_state=cs, threads=128)
    block.inclusive_scan(ci, ci, scan_op=_complex_product, threads=128)
    block.exclusive_sum(ci, ci, threads=128)
    ci[0] = block.sum(ci, threads=128)
    # dtype=: half and complex items, arrays and scalars, widened to the accumulator
    f[1] = block.sum(hi, dtype=np.float32, threads=128)
    d[1] = block.reduce(hi, "max", dtype=np.float64, valid=100, threads=128)
    d[2] = block.sum(b[t], dtype=np.float64, threads=128)
    ci[1] = block.sum(h[t], dtype=np.complex64, threads=128)
    cd = cuda.local.array(1, np.complex128)
    cd[0] = block.reduce(ci, "*", dtype=np.complex128, threads=128)
    ci[2] = cd[0]
    block.store(oc, 0, ci, threads=128)


def _half_add(a: Any, b: Any) -> Any:
    return a + b


def _complex_product(a: Any, b: Any) -> Any:
    return a * b


def test_every_conversion_and_value_dtype_links_from_one_unit() -> None:
    before = int(_cache.stats().get("builds:provider", 0))
    args = (types.float16[::1], types.bfloat16[::1], types.complex64[::1]) * 2
    codes = compile_kernel(_every_form, args)
    assert int(_cache.stats().get("builds:provider", 0)) - before <= 1
    assert link_cubin(codes)[:4] == b"\x7fELF"


@statefn.stateful(BF16)
def bfloat16_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def bfloat16_items(b: Any, ob: Any) -> None:
    # numba-cuda-mlir has local arrays of bfloat16: bfloat16 items and state
    bs = cuda.local.array(1, ml_dtypes.bfloat16)
    bs[0] = 0
    bi = cuda.local.array(4, ml_dtypes.bfloat16)
    block.load(b, 0, bi, threads=128)
    block.inclusive_sum(bi, bi, prefix_op=bfloat16_total, prefix_state=bs, threads=128)
    block.exclusive_scan(bi, bi, scan_op="min", initial_value=1.5, threads=128)
    bi[0] = block.reduce(bi, "max", threads=128)
    block.store(ob, 0, bi, threads=128)


def test_every_value_dtype_links_under_numba_cuda_mlir() -> None:
    mlir = _mlir()
    args = tuple(_mlir_array(d) for d in (F16, BF16, np.complex64)) * 2
    every_form = mlir.cuda.jit(_with_cuda(_every_form, mlir.cuda))
    assert scan.compile(every_form, args, cc=CC)[:4] == b"\x7fELF"
    items = mlir.cuda.jit(_with_cuda(bfloat16_items, mlir.cuda))
    assert scan.compile(items, (_mlir_array(BF16),) * 2, cc=CC)[:4] == b"\x7fELF"


def test_numba_cuda_mlir_bfloat16_of_torch_tensors() -> None:
    # numba-cuda-mlir types a torch bfloat16 tensor's items with a bfloat16 type of its own
    # (numba_cuda_mlir.types.bf16), not the bfloat16 of NumPy arrays: both are bfloat16
    mlir = _mlir()
    from numba_cuda_mlir.numba_cuda import types as mtypes
    from numba_cuda_mlir.types import bf16

    tensor = mtypes.Array(bf16, 1, "C")
    items = mlir.cuda.jit(_with_cuda(bfloat16_items, mlir.cuda))
    assert scan.compile(items, (tensor, tensor), cc=CC)[:4] == b"\x7fELF"
    every_form = mlir.cuda.jit(_with_cuda(_every_form, mlir.cuda))
    args = (_mlir_array(F16), tensor, _mlir_array(np.complex64)) * 2
    assert scan.compile(every_form, args, cc=CC)[:4] == b"\x7fELF"


# ---------------------------------------------------------------- CCCL 3.0 (the GPU machine's)


def _variant_plans() -> list[Any]:
    plans: list[Any] = []
    for direction in ("load", "store"):
        for algorithm in (None, "direct", "striped", "vectorize", "transpose", "warp_transpose"):
            plans.append(_io(direction, BF16, np.float32, algorithm, ipt=8))
            plans.append(_io(direction, F16, np.float64, algorithm))
        arrays = ZipFact((ArrayFact(F16, 1), ArrayFact(BF16, 1)))
        plans.append(_io(direction, arrays, PAIR))
        plans.append(
            plan_warp_io(
                function=direction,  # type: ignore[arg-type]
                array=ArrayFact(BF16, 1),
                items=ArrayFact(np.float32, 1, length=4),
                algorithm=None,
                oob_default=None,
                lanes=32,
                block=(128, 1, 1),
            )
        )
    for dtype in (F16, BF16, np.dtype(np.complex64), np.dtype(np.complex128)):
        for op in ("+", "*", "max"):
            if op == "max" and dtype.kind == "c":
                continue
            plans.append(
                plan_scan(
                    function="inclusive_scan",
                    values=ArrayFact(dtype, 1, length=4),
                    out=None,
                    mode="inclusive",
                    scan_op=op,
                    initial_value=ScalarFact(np.float64) if dtype.kind != "c" else None,
                    prefix_op=None,
                    prefix_state=None,
                    block_aggregate=None,
                    algorithm=None,
                    temp_storage=None,
                    block=(128, 1, 1),
                )
            )
        plans.append(
            plan_reduce(
                function="sum",
                items=ArrayFact(dtype, 1, length=4),
                op="+",
                valid=None,
                broadcast=None,
                algorithm=None,
                temp_storage=None,
                block=(128, 1, 1),
            )
        )
    return plans


_VARIANTS = [("every plan",)]


def variant_source(_: str) -> str:
    """Every plan above, rendered into one unit (one NVRTC run)."""
    units = []
    for i, plan in enumerate(_variant_plans()):
        local = f"unit{i}"
        units.append((local, for_plan(plan).render(plan, [], local, None), False))
    return render_group("half_complex", units)


@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_every_plan_compiles_with_cccl_3_0(tmp_path: Path) -> None:
    assert compile_variants_with_cccl_3_0(__file__, tmp_path) == f"ok {len(_VARIANTS)}"


# ---------------------------------------------------------------- constant bfloat16 operands


def test_constant_bfloat16_operands_round_like_ml_dtypes() -> None:
    """numba-cuda's lowering rounds a double to bfloat16 itself (no C++ helper): run on the host."""
    from llvmlite import binding, ir

    from scan._numba_cuda._lowering import _to_bfloat16

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    module = ir.Module(name="bfloat16_rounding")
    fn = ir.Function(module, ir.FunctionType(ir.IntType(16), [ir.DoubleType()]), name="round")
    builder = ir.IRBuilder(fn.append_basic_block())
    builder.ret(_to_bfloat16(builder, fn.args[0]))
    parsed = binding.parse_assembly(str(module))
    parsed.verify()
    machine = binding.Target.from_default_triple().create_target_machine()
    engine = binding.create_mcjit_compiler(parsed, machine)
    engine.finalize_object()
    rounded = ctypes.CFUNCTYPE(ctypes.c_uint16, ctypes.c_double)(
        engine.get_function_address("round")
    )
    rng = np.random.default_rng(44)
    values = np.concatenate(
        [
            rng.standard_normal(4000) * 10.0 ** rng.integers(-45, 40, 4000),
            # ties (to even), just past a tie (double rounding through float32 would
            # miss it), the largest, overflow, subnormals, zeros and infinities
            [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-30, 3.3895313892515355e38],
            [3.3961775292304019e38, 1e39, -1e39, 5e-324, 1e-40, 0.0, -0.0, np.inf, -np.inf],
        ]
    )
    got = np.array([rounded(v) for v in values], np.uint16)
    with np.errstate(over="ignore"):
        want = values.astype(BF16).view(np.uint16)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(np.array([rounded(np.nan)], np.uint16).view(BF16).astype(np.float32))[0]


# ---------------------------------------------------------------- spellings and types


def test_scan_compile_spells_bfloat16_arrays_as_numba_types() -> None:
    @cuda.jit
    def widen(src: Any, dst: Any) -> None:
        items = cuda.local.array(8, np.float32)
        block.load(src, 0, items, threads=128)
        block.store(dst, 0, items, threads=128)

    spelled = (types.bfloat16[::1], types.float32[::1])
    for signature in ("void(bfloat16[::1], float32[::1])", spelled):
        assert scan.compile(widen, signature, cc=CC)[:4] == b"\x7fELF"


def test_ml_dtypes_and_torch_arrays_are_typed_as_bfloat16() -> None:
    from numba.cuda.typing.typeof import Purpose, typeof

    assert typeof(np.zeros(4, BF16), Purpose.argument) == types.bfloat16[::1]
    torch = pytest.importorskip("torch", reason="torch is not installed")
    # numba-cuda types a tensor through DLPack (cuda.core's StridedMemoryView)
    for dtype, want in ((torch.bfloat16, types.bfloat16), (torch.float16, types.float16)):
        tensor = torch.zeros((4, 8), dtype=dtype)
        assert typeof(tensor, Purpose.argument) == types.Array(want, 2, "C")
        assert typeof(tensor[1], Purpose.argument) == types.Array(want, 1, "C")
