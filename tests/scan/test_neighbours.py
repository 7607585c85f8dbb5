# SPDX-License-Identifier: Apache-2.0
"""``block.adjacent_difference`` and ``block.flag_heads``: plans, refusals, generated C++ and
compiles under both front ends (the results: tests/sim/test_sim_neighbours.py)."""

from __future__ import annotations

import importlib.util
import re
import types as pytypes
from typing import Any

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

import scan
from scan import block
from scan._errors import ScanTypeError
from scan._plan import ArrayFact, ScalarFact
from scan._primitives.adjacent_difference import (
    plan_adjacent_difference,
    render_adjacent_difference,
)
from scan._primitives.flag_heads import plan_flag_heads, render_flag_heads

CC = (9, 0)
I32 = ArrayFact(np.int32, 1, 4)
CARRY = ArrayFact(np.int32, 1, 1, memory="local")


def _difference(**over: Any) -> Any:
    kwargs: dict[str, Any] = {
        "function": "adjacent_difference",
        "items": I32,
        "out": None,
        "op": "-",
        "carry": None,
        "temp_storage": None,
        "block": (128, 1, 1),
    }
    return plan_adjacent_difference(**{**kwargs, **over})


def _heads(**over: Any) -> Any:
    kwargs: dict[str, Any] = {
        "function": "flag_heads",
        "flags": ArrayFact(np.int32, 1, 4),
        "items": I32,
        "op": None,
        "carry": None,
        "temp_storage": None,
        "block": (128, 1, 1),
    }
    return plan_flag_heads(**{**kwargs, **over})


@pytest.mark.parametrize(
    ("over", "words"),
    [
        ({"items": ScalarFact(np.int32)}, "must be a 1-D local array"),
        ({"items": ArrayFact(np.complex64, 1, 4)}, "takes real numbers"),
        ({"items": ArrayFact(np.dtype([("a", np.int32)]), 1, 4)}, "takes real numbers"),
        ({"out": ArrayFact(np.int64, 1, 4)}, "out has dtype int64 but items have int32"),
        ({"out": ArrayFact(np.int32, 1, 3)}, "out has length 3"),
        ({"op": "+"}, "op='+' is not an operator of adjacent_difference"),
        ({"carry": ScalarFact(np.int32)}, "carry= must be a 1-D local array"),
        ({"carry": ArrayFact(np.float32, 1, 1)}, "carry has dtype float32 but the items"),
        ({"carry": ArrayFact(np.int32, 1, 1, memory="shared")}, "carry must be a cuda.local"),
    ],
)
def test_adjacent_difference_refuses_with_the_fix(over: dict[str, Any], words: str) -> None:
    with pytest.raises(ScanTypeError, match=re.escape(words)):
        _difference(**over)


@pytest.mark.parametrize(
    ("over", "words"),
    [
        ({"flags": ArrayFact(np.float32, 1, 4)}, "flags are bool or integers"),
        ({"flags": ArrayFact(np.int32, 1, 2)}, "flags has length 2"),
        ({"flags": ScalarFact(np.int32)}, "flags must be a 1-D local array"),
        ({"op": "!="}, "op='!=' is not an operator of flag_heads"),
        ({"carry": ArrayFact(np.int64, 1, 1)}, "carry has dtype int64"),
    ],
)
def test_flag_heads_refuses_with_the_fix(over: dict[str, Any], words: str) -> None:
    with pytest.raises(ScanTypeError, match=re.escape(words)):
        _heads(**over)


def test_the_carry_takes_the_tiles_last_item_after_a_barrier() -> None:
    text = render_adjacent_difference(_difference(carry=CARRY))
    slot = text.index("if (cub::RowMajorTid(128, 1, 1) == 127) last_item = input[3];")
    call = text.index("SubtractLeft(input, output, difference_op_t{}, carry_item);")
    barrier = text.index("__syncthreads();", call)
    assert slot < call < barrier < text.index("carry_item = last_item;")
    plain = render_adjacent_difference(_difference())
    assert "SubtractLeft(input, output, difference_op_t{});" in plain
    assert "last_item" not in plain
    heads = render_flag_heads(_heads(carry=CARRY, flags=ArrayFact(np.bool_, 1, 4)))
    assert "using flag_t = bool;" in heads
    assert "FlagHeads(head_flags, input, flag_op_t{}, carry_item);" in heads
    assert "return a != b;" in heads


def test_plans_differ_by_what_the_code_depends_on() -> None:
    keys = {
        _difference().key,
        _difference(carry=CARRY).key,
        _difference(block=(64, 1, 1)).key,
        _heads().key,
        _heads(flags=ArrayFact(np.uint8, 1, 4)).key,
    }
    assert len(keys) == 5
    assert _difference(out=I32).key == _difference().key  # out aliases nothing in the code


def test_temp_storage_sizes_are_read_from_the_compiled_code() -> None:
    for primitive in ("adjacent_difference", "flag_heads"):
        layout = block.temp_storage(primitive, np.int32, 128, 4, cc=CC)
        assert layout.size >= 128 * 4
        assert layout.alignment >= 8
    with pytest.raises(ScanTypeError, match="has no algorithm="):
        block.temp_storage("flag_heads", np.int32, 128, 4, algorithm="raking", cc=CC)


# ---------------------------------------------------------------- compiled kernels


def twice_minus(a: Any, b: Any) -> Any:
    return a * 2 - b


def apart(previous: Any, item: Any) -> Any:
    return item - previous > 1


def differences_and_heads(src: Any, dst: Any, heads: Any) -> None:
    carry = cuda.local.array(1, np.float32)
    carry[0] = 0
    items = cuda.local.array(4, np.float32)
    out = cuda.local.array(4, np.float32)
    flags = cuda.local.array(4, np.int32)
    bits = cuda.local.array(4, np.bool_)
    for base in block.tiles(src.shape[0], items):
        block.load(src, base, items, oob_default=0)
        block.flag_heads(bits, items)
        block.flag_heads(flags, items, op=apart, carry=carry)
        block.adjacent_difference(items, out, op=twice_minus)
        block.adjacent_difference(items, carry=carry)
        block.store(dst, base, out)
        block.store(heads, base, flags)


SIGNATURE = (
    types.Array(types.float32, 1, "C"),
    types.Array(types.float32, 1, "C"),
    types.Array(types.int32, 1, "C"),
)


def test_a_kernel_of_both_compiles_with_numba_cuda() -> None:
    cubin = scan.compile(cuda.jit(differences_and_heads), SIGNATURE, cc=CC, block=128)
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.skipif(
    importlib.util.find_spec("numba_cuda_mlir") is None, reason="numba-cuda-mlir not installed"
)
def test_a_kernel_of_both_compiles_with_numba_cuda_mlir() -> None:
    from numba_cuda_mlir import cuda as mlir_cuda
    from numba_cuda_mlir.numba_cuda import types as mlir_types

    fn = differences_and_heads
    kernel = mlir_cuda.jit(
        pytypes.FunctionType(fn.__code__, {**fn.__globals__, "cuda": mlir_cuda}, fn.__name__)
    )
    signature = (
        mlir_types.Array(mlir_types.float32, 1, "C"),
        mlir_types.Array(mlir_types.float32, 1, "C"),
        mlir_types.Array(mlir_types.int32, 1, "C"),
    )
    assert scan.compile(kernel, signature, cc=CC, block=128)[:4] == b"\x7fELF"


def bad_carry(src: Any, dst: Any, heads: Any) -> None:
    carry = cuda.local.array(1, np.float64)
    items = cuda.local.array(4, np.float32)
    block.load(src, 0, items)
    block.adjacent_difference(items, carry=carry)
    block.store(dst, 0, items)


def test_a_kernel_is_refused_at_the_call_before_any_cpp() -> None:
    with pytest.raises(ScanTypeError, match="carry has dtype float64 but the items are float32"):
        scan.compile(cuda.jit(bad_carry), SIGNATURE, cc=CC, block=128)
