# SPDX-License-Identifier: Apache-2.0
"""Block reduce (``block.reduce``/``block.sum``): its plans, refusals, generated code and link.

The results are checked in the simulator (tests/sim/test_sim_reduce.py) and
on a GPU (the same tests with ``SCAN_TESTS_BACKEND=gpu``).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from helpers.kernels import CC, typing_error
from helpers.plans import reduce_plan
from helpers.reduce_kernels import REC, kernels
from numba import cuda
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan
from scan import block
from scan._plan import ArrayFact, ScalarFact
from scan._primitives import block_reduce, for_call
from scan._primitives.block_reduce import render_reduce
from scan._spec import c_parameters

F32 = types.float32[::1]
I32 = types.int32[::1]


plan = reduce_plan


# ---------------------------------------------------------------- plans


def test_defaults_are_cubs() -> None:
    p = plan()
    assert p.algorithm == "warp_reductions"  # CUB's default
    assert (p.items_per_thread, p.scalar, p.broadcast, p.has_valid) == (4, False, False, False)
    assert p.returns_value
    assert p.symbol.startswith("statefn_scan_reduce_")


def test_results_reach_every_thread_unless_broadcast_is_false() -> None:
    assert plan(broadcast=None).broadcast
    assert plan(broadcast=None) == plan(broadcast=True)
    assert not plan(broadcast=False).broadcast


def test_dtype_accumulates_in_another_dtype() -> None:
    small = ArrayFact(np.uint8, 1, 4)
    p = plan(items=small, op="+", dtype=np.int64)
    assert (p.value_dtype, p.items_dtype, p.result_dtype) == (
        np.dtype(np.int64),
        np.dtype(np.uint8),
        np.dtype(np.int64),
    )
    # the items' own dtype (or none) keeps CUB's sum: no conversion, the same provider
    assert plan(items=small, op="+", dtype="uint8") == plan(items=small, op="+")
    assert plan(items=small, op="+").result_dtype is None
    assert plan(items=small, op="+").key != p.key
    text = render_reduce(p)
    assert "const unsigned char (&items)[4] = *static_cast<const unsigned char (*)[4]>(in);" in text
    assert "for (int i = 0; i < 4; ++i) input[i] = static_cast<value_t>(items[i]);" in text
    assert ".Sum(input)" in text
    # a scalar arrives converted to the value type (the front ends convert it)
    scalar = render_reduce(plan(items=ScalarFact(np.uint8), op="+", dtype=np.int64))
    assert "static_cast<value_t>" not in scalar
    assert "value_t (&input)[1] = *static_cast<value_t (*)[1]>(in);" in scalar


def test_reduce_and_sum_share_a_provider() -> None:
    assert plan(op="+").key == plan(op="+", function="sum").key
    assert plan(op="+").key != plan(op="max").key
    assert plan().key != plan(broadcast=True).key
    assert plan().key != plan(valid=ScalarFact(np.int64)).key


@pytest.mark.parametrize(
    ("over", "error", "message"),
    [
        (
            {"items": ArrayFact(REC, 1, 2), "op": "+"},
            scan.ScanTypeError,
            "reduce: items are records (",
        ),
        ({"op": "^"}, scan.ScanTypeError, "reduce: op='^' is a bitwise operator but items are"),
        ({"algorithm": "warp_scans"}, scan.PlanError, "reduce: algorithm must be one of "),
        ({"valid": ScalarFact(np.float32)}, scan.ScanTypeError, "reduce: valid must be an integer"),
        ({"broadcast": 1}, scan.PlanError, "reduce: broadcast= must be a literal True or False"),
        ({"items": ArrayFact(np.float32, 2, None)}, scan.ScanTypeError, "reduce: items must be"),
        ({"items": ArrayFact(np.bool_, 1, 4)}, scan.ScanTypeError, "reduce: items has dtype bool"),
        (
            {"dtype": np.bool_},
            scan.ScanTypeError,
            "reduce: dtype= must be a numeric dtype to accumulate in, one of int8, int16, ",
        ),
        (
            {"dtype": "not a dtype"},
            scan.ScanTypeError,
            "reduce: dtype= must be a numeric dtype to accumulate in, one of int8, int16, ",
        ),
        (
            {"items": ArrayFact(REC, 1, 2), "op": "min", "dtype": np.float64},
            scan.ScanTypeError,
            "reduce: dtype= converts each item to the dtype to accumulate in, but items are "
            "records (record(v: float32, i: int32)); drop dtype= and make the record's fields "
            "as wide as the reduction needs",
        ),
    ],
)
def test_refusals(over: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        plan(**over)
    assert str(info.value).startswith(message), str(info.value)


def test_a_tuple_is_not_items() -> None:
    from scan._plan import TupleFact

    with pytest.raises(scan.ScanTypeError, match="items is a tuple"):
        plan(items=TupleFact((np.float32, np.int32)))


# ---------------------------------------------------------------- generated code


def test_entry_point_parameters_are_the_operand_table() -> None:
    text = render_reduce(plan())
    found = re.search(r'extern "C" __device__ int \w+\(\s*([^)]*)\)', text)
    assert found is not None
    assert found.group(1) == c_parameters(block_reduce.OPERANDS)
    assert found.group(1) == "void* temp, void* in, long long valid, void* out"


def test_sum_uses_cubs_sum_and_other_operators_a_functor() -> None:
    assert ".Sum(input)" in render_reduce(plan(op="+"))
    text = render_reduce(plan(op="max"))
    assert ".Reduce(input, reduce_op_t{})" in text
    assert "return a < b ? b : a;" in text


def test_valid_reduces_the_threads_holding_valid_items() -> None:
    text = render_reduce(plan(valid=ScalarFact(np.int64)))
    assert "if (valid >= 512) {" in text  # 128 threads x 4 items: the full tile's path
    assert ".Reduce(partial, reduce_op_t{}, (count + 3) / 4)" in text
    assert "if (first + i < count)" in text
    body = render_reduce(plan()).split("long long valid, void* out)")[1]
    assert "valid" not in body  # without valid=, the full tile's path alone


def test_broadcast_shares_thread_zeros_result_outside_the_temp_storage() -> None:
    text = render_reduce(plan(broadcast=True))
    assert "__shared__ value_t broadcast_slot;" in text
    assert "result = broadcast_slot;" in text
    assert "using temp_storage_t = typename block_reduce_t::TempStorage;" in text
    assert "broadcast_slot" not in render_reduce(plan())


def test_barrier_follows_unless_auto_sync_is_off() -> None:
    assert "__syncthreads(); // temp storage" in render_reduce(plan())
    assert "__syncthreads" not in render_reduce(plan(auto_sync=False))


@pytest.mark.parametrize("algorithm", sorted(block_reduce.ALGORITHMS))
def test_every_algorithm_is_cubs(algorithm: str) -> None:
    cub = block_reduce.ALGORITHMS[algorithm]
    assert f"cub::{cub}," in render_reduce(plan(algorithm=algorithm))


# ---------------------------------------------------------------- kernels (NVRTC, link)


_row_stats, _argmax = kernels(cuda)


@pytest.mark.nvrtc
def test_kernels_compile_and_link() -> None:
    cubin = scan.compile(
        cuda.jit(_row_stats), (types.float32[:, ::1], F32), cc=CC, block=(128, 1, 1)
    )
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    cubin = scan.compile(cuda.jit(_argmax), (F32, I32), cc=CC, block=(64, 1, 1))
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.nvrtc
def test_temp_storage_layout_is_read_from_the_compiled_code() -> None:
    small = block.temp_storage("reduce", np.int32, 128, cc=CC)
    large = block.temp_storage("reduce", np.float64, 1024, cc=CC)
    assert small.size > 0
    assert large.size > small.size
    assert small.alignment >= 8
    record = block.temp_storage("reduce", REC, 128, 2, cc=CC)
    assert record.size >= small.size


@pytest.mark.nvrtc
def test_caller_temp_storage_is_passed() -> None:
    layout = block.temp_storage("reduce", np.float32, 128, 4, cc=CC)
    size, align = layout.size, layout.alignment

    def k(src: Any, out: Any) -> None:
        temp = cuda.shared.array(size, np.uint8, alignment=align)
        items = cuda.local.array(4, np.float32)
        block.load(src, 0, items, oob_default=0.0)
        out[0] = block.sum(items, temp_storage=temp)

    assert scan.compile(cuda.jit(k), (F32, F32), cc=CC, block=(128, 1, 1))[:4] == b"\x7fELF"


def test_call_site_refusals_name_the_line() -> None:
    def k(a: Any) -> None:
        items = cuda.local.array(4, np.float32)
        a[0] = block.reduce(items, "&", threads=32)

    got = typing_error(k, (F32,))
    assert got.startswith("ScanTypeError: reduce: op='&' is a bitwise operator"), got


def test_the_spec_declares_the_calls() -> None:
    assert for_call("reduce") is for_call("sum") is block_reduce.SPEC
    assert block_reduce.SPEC.returns == "items"
    numba_record = from_dtype(REC)
    assert numba_record.size == REC.itemsize
