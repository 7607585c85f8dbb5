# SPDX-License-Identifier: Apache-2.0
"""Record values and state on the compile path: plans, refusals, keys, generated C++,
and kernels compiled and linked for cc 9.0 (no GPU needed)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import golden
from helpers import record_cases as rc
from helpers.plans import scan_plan
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan
import statefn
from scan._codegen import CallbackDecl
from scan._numba_cuda._callbacks import lower
from scan._plan import ArrayFact, ScalarFact, TupleFact
from scan._primitives.block_scan import render_scan
from scan._primitives.tile_io import render_tile_io
from scan._primitives.tile_io._plan import plan_tile_io

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="compiles real kernels"
)

GOLDEN = Path(__file__).parent / "golden"
PAIR = rc.PAIR
VI = np.dtype([("value", np.float32), ("pos", np.int32)], align=True)


def plan(**over):
    record = {"function": "inclusive_scan", "values": ArrayFact(PAIR, 1, 4), "scan_op": rc.combine}
    return scan_plan(**{**record, **over})


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("function", ["inclusive_sum", "exclusive_sum"])
def test_sums_on_records_are_refused(function):
    with pytest.raises(scan.ScanTypeError, match="sums are not defined on records"):
        plan(function=function, scan_op="+")


@pytest.mark.parametrize("op", ["max", "min", "*", "|"])
def test_builtin_operators_on_records_are_refused(op):
    with pytest.raises(
        scan.ScanTypeError, match=re.escape(f"scan_op={op!r} are not defined on records")
    ):
        plan(scan_op=op, mode="exclusive", prefix_op=None, initial_value=ScalarFact(PAIR))


def test_tuple_values_are_refused():
    with pytest.raises(scan.ScanTypeError, match="values is a tuple; scan a record"):
        plan(values=TupleFact((np.float32, np.float32)))


@pytest.mark.parametrize(
    "fact",
    [TupleFact((np.float32,)), TupleFact((np.float32, np.bool_)), ScalarFact(VI)],
    ids=["short-tuple", "bool-item", "other-record"],
)
def test_initial_value_must_fit_the_record(fact):
    with pytest.raises(scan.ScanTypeError, match="initial_value"):
        plan(mode="exclusive", initial_value=fact)


def test_tuple_for_scalar_values_is_refused():
    with pytest.raises(scan.ScanTypeError, match="initial_value is a tuple but values are"):
        plan(
            values=ArrayFact(np.float32, 1, 4),
            scan_op="max",
            mode="exclusive",
            initial_value=TupleFact((np.float32, np.float32)),
        )


def test_record_state_must_match_field_by_field():
    swapped = np.dtype([("b", np.float32), ("a", np.float32)], align=True)
    with pytest.raises(scan.ScanTypeError, match="records must match field by field"):
        plan(prefix_op=rc.carry_map, prefix_state=ArrayFact(swapped, 1, 1))


def test_missing_record_state_names_the_record():
    with pytest.raises(scan.PlanError, match=r"cuda.local.array\(1, record\(a: float32"):
        plan(prefix_op=rc.carry_map)


def test_load_of_another_record_is_refused():
    with pytest.raises(scan.ScanTypeError, match="items has dtype record"):
        plan_tile_io(
            function="load",
            array=ArrayFact(PAIR, 1),
            items=ArrayFact(VI, 1, 4),
            algorithm=None,
            oob_default=None,
            temp_storage=None,
            block=(64, 1, 1),
        )


@pytest.mark.parametrize(
    ("dtype", "words"),
    [
        (np.dtype([("f", np.uint8), ("v", np.float32)]), "laid out unlike a C struct"),
        (np.dtype([("a", np.float32), ("b", [("c", np.int32)])]), "nested record or sub-array"),
        (np.dtype([("a", np.float32), ("b", np.int32, (2,))]), "nested record or sub-array"),
        (np.dtype([("a", np.float32), ("b", np.bool_)]), "native numeric scalars"),
        (np.dtype([("a", np.float32), ("b", ">f4")]), "native numeric scalars"),
        (np.dtype([("a", np.float16), ("b", np.float32)]), "native numeric scalars"),
        (np.dtype([("class", np.float32)]), "Python identifiers"),
        (np.dtype([("value", np.float32), ("index", np.int32)]), "a method of tuples"),
        (np.dtype([(f"f{i}", np.int8) for i in range(9)]), "1 to 8"),
    ],
)
def test_refused_record_dtypes(dtype, words):
    with pytest.raises(statefn.StateDtypeError, match=words):
        statefn.stateful(dtype)
    with pytest.raises(scan.ScanTypeError, match=words):
        plan(values=ArrayFact(dtype, 1, 4))


# ---------------------------------------------------------------- keys


def test_record_dtypes_are_canonical_and_keys_see_every_field():
    packed = np.dtype([("a", np.float32), ("b", np.float32)])
    assert statefn.as_value_dtype(packed).isalignedstruct
    assert plan(values=ArrayFact(packed, 1, 4)).key == plan().key
    others = [
        np.dtype([("a", np.float32), ("c", np.float32)], align=True),  # a name
        np.dtype([("a", np.float32), ("b", np.int32)], align=True),  # a type
        np.dtype([("a", np.float64), ("b", np.float32)], align=True),  # offsets, size
        np.dtype([("b", np.float32), ("a", np.float32)], align=True),  # order
    ]
    keys = {plan(values=ArrayFact(d, 1, 4)).key for d in others} | {plan().key}
    assert len(keys) == 5
    codes = {statefn.pointer_abi(statefn.scan_op(rc.combine), d)[0] for d in [PAIR, *others]}
    assert len(codes) == 5
    states = {statefn.StatefulFunction(rc.carry_map.op, d).key for d in [PAIR, *others]}
    assert len(states) == 5


def test_record_tuple_class_is_one_per_dtype():
    cls = statefn.record_tuple(PAIR)
    assert cls is statefn.record_tuple(np.dtype([("a", "f4"), ("b", "f4")]))
    assert cls._fields == ("a", "b")


# ---------------------------------------------------------------- generated C++


def _golden(name, text):
    golden.check_golden(GOLDEN / name, text)


def test_record_scan_source_is_pinned():
    decl = CallbackDecl(
        symbol="statefn_scan_op_cb",
        c_decl='extern "C" __device__ int statefn_scan_op_cb(void* result, const void* lhs, '
        "const void* rhs);",
    )
    prefix = CallbackDecl(
        symbol="statefn_stateful_cb",
        c_decl='extern "C" __device__ int statefn_stateful_cb(void* result, void* state, '
        "const void* aggregate);",
    )
    p = plan(prefix_op=rc.carry_map, prefix_state=ArrayFact(PAIR, 1, 1))
    text = render_scan(p, scan_callback=decl, prefix_callback=prefix)
    assert "struct value_t {\n  float f0; // a, offset 0\n  float f1; // b, offset 4\n};" in text
    _golden("record_inclusive_scan_stateful.cu", text)


def test_record_load_source_is_pinned():
    p = plan_tile_io(
        function="load",
        array=ArrayFact(VI, 1),
        items=ArrayFact(VI, 1, 4),
        algorithm=None,
        oob_default=TupleFact((np.float64, np.int64)),
        temp_storage=None,
        block=(128, 1, 1),
    )
    _golden("record_load_warp_transpose_oob.cu", render_tile_io(p))


# ---------------------------------------------------------------- compile and link


def _compile_cases():
    cases = [
        rc.RecordCase(entry=e, scalar=s)
        for e in ("inclusive_scan", "exclusive_scan", "scan_inclusive", "scan_exclusive")
        for s in (False, True)
    ]
    cases += [
        rc.RecordCase(algorithm="raking_memoize", scalar=True),
        rc.RecordCase(algorithm="warp_scans"),
        rc.RecordCase(prefix="stateless", algorithm="warp_scans", scalar=True),
        rc.RecordCase(entry="exclusive_scan", prefix="none"),
        rc.RecordCase(block=(8, 4, 1), algorithm="warp_scans"),
        rc.RecordCase(block=(4, 4, 2), scalar=True),
        rc.RecordCase(temp="caller", algorithm="warp_scans"),
    ]
    return cases


@pytest.mark.parametrize("case", _compile_cases(), ids=str)
def test_record_kernel_compiles_and_links(case):
    temp = (16, 16)
    if case.temp == "caller":
        layout = scan.block.temp_storage(
            "scan", PAIR, case.block, case.items, algorithm=case.algorithm, cc=(9, 0)
        )
        temp = (layout.size, layout.alignment)
    kernel = rc.kernel(case, temp)
    array = from_dtype(PAIR)[:, ::1]
    cubin = scan.compile(kernel, (array, array), cc=(9, 0), block=case.block)
    assert isinstance(cubin, bytes)
    assert len(cubin) > 0


@pytest.mark.parametrize(
    ("program", "argtypes"),
    [
        ("segmented_sum", (np.int32, np.float32, np.float32)),
        ("running_argmax", (np.float32, np.int32)),
        ("selective_scan", (np.float32, np.float32, np.float32)),
    ],
)
def test_worked_programs_compile_and_link(program, argtypes):
    from doc_examples.examples import records

    def arg(spec):
        dtype = getattr(records, spec) if isinstance(spec, str) else np.dtype(spec)
        return from_dtype(dtype)[:, ::1]

    kernel = getattr(records, program)
    cubin = scan.compile(kernel, tuple(arg(a) for a in argtypes), cc=(9, 0), block=32)
    assert len(cubin) > 0


def test_record_result_must_be_a_tuple():
    def returns_state(state, block_aggregate):
        return state[0]

    callback = statefn.stateful(PAIR)(returns_state)
    with pytest.raises(statefn.CallbackCompileError, match=r"return a tuple|tuple of 2 numbers"):
        lower(callback, PAIR, cc=(9, 0))


def test_record_operands_are_named_tuples():
    def unpack(x, y):
        a0, b0 = x
        return (a0 * y[0], y.a * b0 + y.b)

    lowered = lower(statefn.scan_op(unpack), PAIR, cc=(9, 0))
    assert lowered.symbol.startswith("statefn_scan_op_")
    assert types.voidptr  # the ABI passes every record operand as void*
