# SPDX-License-Identifier: Apache-2.0
"""Every operand a call passes reaches the provider: none dropped, none null, values stored.

A provider's ``extern "C"`` entry point takes a fixed list of operands by
pointer (:mod:`scan._codegen`'s templates: temp, in, out, initial value, state
and block aggregate for the scans; temp, pointer, valid count, out-of-range
default and items for tile I/O), and treats a null pointer as "not given".
A lowering that passed null for an operand the user gave (``oob_default=0``
taken for absent, say) still compiles and links, and CUB then reads
uninitialised items. So here kernels are compiled without a GPU by both front
ends, and the call to each provider is read in the kernel's IR before it is
linked: numba-cuda's LLVM IR (:func:`helpers.kernels.kernel_library`) and
numba-cuda-mlir's optimised LLVM-dialect module. Each call must have one
argument per parameter of the generated C++ signature, of its kind (a
pointer, or the 64-bit valid count), null exactly where the user gave
nothing, and a scalar given by value must be stored in the stack slot passed
for it before the call.
"""

from __future__ import annotations

import re
import struct
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from helpers.plans import reduce_plan, scan_plan, tile_plan

import scan
import statefn
from scan import block
from scan._primitives.block_reduce import render_reduce
from scan._primitives.block_scan import render_scan
from scan._primitives.tile_io import render_tile_io

pytestmark = pytest.mark.nvrtc

CC = (9, 0)


def c_parameters(source: str) -> list[tuple[str, str]]:
    """(C type, name) of each parameter of a generated unit's entry point."""
    found = re.search(r'extern "C" __device__ int \w+\(([^)]*)\)', source)
    assert found is not None, "no entry point in the generated unit"
    params = []
    for param in found.group(1).split(","):
        ctype, name = param.strip().rsplit(" ", 1)
        params.append((ctype.replace(" *", "*"), name.lstrip("*")))
    return params


SCAN_PARAMS = c_parameters(render_scan(scan_plan()))
TILE_PARAMS = c_parameters(render_tile_io(tile_plan("load", np.int32, 64, 4, None)))
REDUCE_PARAMS = c_parameters(render_reduce(reduce_plan()))


def test_entry_points_declare_the_operands_checked_here() -> None:
    """The operands the tests below look up by name; a new one must be added to them."""
    assert SCAN_PARAMS == [
        ("void*", "temp"),
        ("void*", "in"),
        ("void*", "out"),
        ("const void*", "initial_value"),
        ("void*", "state"),
        ("void*", "block_aggregate"),
        ("void*", "status"),
        ("long long", "status_bytes"),
        ("long long", "tile"),
    ]
    assert TILE_PARAMS == [
        ("void*", "temp"),
        ("void*", "ptr"),
        ("long long", "valid"),
        ("const void*", "oob_default"),
        ("void*", "items"),
    ]
    assert c_parameters(render_tile_io(tile_plan("store", np.int32, 64, 4, None))) == TILE_PARAMS
    assert REDUCE_PARAMS == [
        ("void*", "temp"),
        ("void*", "in"),
        ("long long", "valid"),
        ("void*", "out"),
    ]


# ---------------------------------------------------------------- reading the IR


@dataclass(frozen=True)
class Operand:
    """One argument of a provider call as the IR shows it.

    ``kind`` is ``"null"``, ``"slot"`` (a stack slot; ``stored`` is the
    constant stored in it last before the call, None if that is no constant),
    ``"pointer"`` (any other pointer: array data) or ``"integer"``.
    """

    kind: str
    stored: float | None = None


_LLVM_CASTS = ("trunc", "zext", "sext", "fptrunc", "fpext", "sitofp", "uitofp", "bitcast")


def _llvm_constant(text: str) -> float:
    """An LLVM IR constant: an integer, a decimal float, or a double in hex."""
    if text.startswith("0x"):
        return float(struct.unpack(">d", bytes.fromhex(text[2:].rjust(16, "0")))[0])
    return float(text) if re.search(r"[.eE]", text) else int(text)


def _wrap(value: float, ctype: str) -> float:
    """`value` converted to LLVM type `ctype` (integers wrap, floats round)."""
    if ctype.startswith("i") and ctype[1:].isdigit():
        bits = int(ctype[1:])
        return int(value) % (1 << bits)
    if ctype == "float":
        return float(np.float32(value))
    return float(value)


def functions(text: str, start: str) -> list[list[str]]:
    """The lines of each function in `text`, a function starting at a line matching `start`.

    Value names are local to a function: each is read on its own.
    """
    found: list[list[str]] = [[]]
    for line in text.splitlines():
        if re.match(start, line):
            found.append([])
        found[-1].append(line)
    return found


def definitions(lines: list[str], name: str) -> dict[str, str]:
    """What each value named in `lines` is defined as (``%x = <this>``)."""
    defs = {}
    for line in lines:
        found = re.match(rf"\s*({name}) = (.*)$", line)
        if found:
            defs[found.group(1)] = found.group(2)
    return defs


def numba_cuda_calls(ir: str) -> dict[str, list[Operand]]:
    """The provider calls in a numba-cuda kernel's LLVM IR, by kind (scan, load, store)."""
    calls: dict[str, list[Operand]] = {}
    for lines in functions(ir, r"define "):
        defs = definitions(lines, r'%"?[\w.]+"?')
        for at, line in enumerate(lines):
            call = re.search(
                r'call i32 @"?statefn_scan_(scan|load|store|reduce)_\w+"?\((.*)\)\s*$', line
            )
            if call is None:
                continue
            operands = []
            for ty, value in re.findall(r'(i8\*|i64) (null|%"[^"]+"|%[\w.]+|-?\d+)', call.group(2)):
                if ty == "i64":
                    operands.append(Operand("integer"))
                elif value == "null":
                    operands.append(Operand("null"))
                else:
                    operands.append(_numba_pointer(value, defs, lines[:at]))
            assert call.group(1) not in calls, "one call of each kind per test kernel"
            calls[call.group(1)] = operands
    return calls


def _numba_pointer(value: str, defs: dict[str, str], before: list[str]) -> Operand:
    cast = re.fullmatch(r"bitcast (.+)\* (\S+) to i8\*", defs.get(value, ""))
    slot = cast.group(2) if cast else value
    if not defs.get(slot, "").startswith("alloca"):
        return Operand("pointer")
    stored = None
    for line in before:  # the last store into the slot before the call
        found = re.match(rf"\s*store (\S+) (\S+), \S+\* {re.escape(slot)}$", line)
        if found:
            stored = _numba_value(found.group(1), found.group(2), defs)
    return Operand("slot", stored)


def _numba_value(ty: str, value: str, defs: dict[str, str]) -> float | None:
    if not value.startswith("%"):
        return _wrap(_llvm_constant(value), ty)
    found = re.fullmatch(rf"({'|'.join(_LLVM_CASTS)}) (\S+) (\S+) to (\S+)", defs.get(value, ""))
    if found is None or found.group(3).startswith("%"):
        return None
    return _wrap(_llvm_constant(found.group(3)), found.group(4))


def mlir_calls(module: str) -> dict[str, list[Operand]]:
    """The provider calls in numba-cuda-mlir's optimised LLVM-dialect module, by kind."""
    calls: dict[str, list[Operand]] = {}
    for lines in functions(module, r"\s*llvm\.func "):
        defs = definitions(lines, r"%\w+")
        for at, line in enumerate(lines):
            call = re.search(
                r"llvm\.call @statefn_scan_(scan|load|store|reduce)_\w+\(([^)]*)\) : \(([^)]*)\)",
                line,
            )
            if call is None:
                continue
            names = [v.strip() for v in call.group(2).split(",")]
            types_ = [t.strip() for t in call.group(3).split(",")]
            operands = [
                _mlir_operand(name, ty, defs, lines[:at])
                for name, ty in zip(names, types_, strict=True)
            ]
            assert call.group(1) not in calls, "one call of each kind per test kernel"
            calls[call.group(1)] = operands
    return calls


def _mlir_operand(name: str, ty: str, defs: dict[str, str], before: list[str]) -> Operand:
    definition = defs.get(name, "")
    if ty != "!llvm.ptr":
        return Operand("integer")
    if definition.startswith("llvm.mlir.zero"):
        return Operand("null")
    if not definition.startswith("llvm.alloca"):
        return Operand("pointer")
    stored = None
    for line in before:  # the last store into the slot before the call
        found = re.match(rf"\s*llvm\.store (%\w+), {re.escape(name)} :", line)
        if found:
            constant = re.match(
                r"llvm\.mlir\.constant\((\S+) : (\w+)\)", defs.get(found.group(1), "")
            )
            stored = None if constant is None else _mlir_value(*constant.groups())
    return Operand("slot", stored)


def _mlir_value(text: str, ty: str) -> float:
    if text in ("true", "false"):
        return int(text == "true")
    value = _llvm_constant(text)
    if ty.startswith("i"):
        return _wrap(value, ty)
    return _wrap(value, "float" if ty == "f32" else "double")


# ---------------------------------------------------------------- compiling


PAIR = np.dtype([("x", np.float64), ("n", np.int64)], align=True)


@statefn.stateful(np.int64, name="running_total")
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def kernel(source: str, cuda: Any) -> Any:
    """A kernel from `source` (one ``def k``), compiled against the front end's `cuda`."""
    scope: dict[str, Any] = {
        "cuda": cuda,
        "np": np,
        "block": block,
        "running_total": running_total,
        "PAIR": PAIR,
        "ZIP": np.dtype([("a", np.float32), ("b", np.float32)], align=True),
        "lookback": scan.lookback,
    }
    exec(textwrap.dedent(source), scope)
    return scope["k"]


def argument_types(types: Any, from_dtype: Any, argtypes: tuple[Any, ...]) -> tuple[Any, ...]:
    """Numba types of a kernel's arguments: a dtype is a 1-D C array, a name a scalar type."""
    return tuple(
        getattr(types, t) if isinstance(t, str) else types.Array(from_dtype(t), 1, "C")
        for t in argtypes
    )


def numba_cuda_ir(source: str, argtypes: tuple[Any, ...]) -> dict[str, list[Operand]]:
    from helpers.kernels import kernel_library
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype

    library = kernel_library(kernel(source, cuda), argument_types(types, from_dtype, argtypes))
    return numba_cuda_calls(library.get_llvm_str())


def mlir_ir(source: str, argtypes: tuple[Any, ...]) -> dict[str, list[Operand]]:
    pytest.importorskip(
        "numba_cuda_mlir",
        reason="!!!!! numba-cuda-mlir is not installed: its lowering's operands are NOT tested",
    )
    from numba_cuda_mlir import compiler, cuda
    from numba_cuda_mlir.numba_cuda import types
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

    from scan._numba_cuda_mlir._target import offline_target

    with offline_target(CC):
        module = compiler.compile_mlir(
            kernel(source, cuda),
            argument_types(types, from_dtype, argtypes),
            optimized=True,
            cc=CC,
            lto=True,
        )
    return mlir_calls(module)


FRONT_ENDS = {"numba-cuda": numba_cuda_ir, "numba-cuda-mlir": mlir_ir}


def check(call: list[Operand], params: list[tuple[str, str]], want: dict[str, Any]) -> None:
    """`call` has an argument per parameter, each as `want` says (absent: must be null)."""
    assert len(call) == len(params), f"{len(call)} arguments for {len(params)} parameters"
    for (ctype, name), got in zip(params, call, strict=True):
        expected = want.get(name, "null")
        if ctype == "long long":
            assert got.kind == "integer", name
        elif expected == "null":
            assert got.kind == "null", f"{name} was not given but reaches the provider as {got}"
        elif expected == "pointer":
            assert got.kind in ("pointer", "slot"), f"{name} reaches the provider as {got}"
        else:
            assert got.kind == "slot", f"{name}={expected!r} reaches the provider as {got}"
            assert got.stored is not None, f"{name}: no constant stored in its slot"
            assert got.stored == expected, f"{name}: {got.stored!r} stored, not {expected!r}"


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(
    ("dtype", "oob", "stored"),
    [
        ("int32", "0", 0),
        ("int32", "-3", (-3) % 2**32),
        ("uint8", "200", 200),
        ("float32", "0", 0.0),
        ("float32", "2.5", 2.5),
        ("float64", "-0.25", -0.25),
    ],
)
def test_tile_io_operands_reach_the_provider(
    front_end: str, dtype: str, oob: str, stored: float
) -> None:
    source = f"""
    def k(src, dst, n):
        temp = cuda.shared.array(0, np.uint8)
        items = cuda.local.array(4, np.{dtype})
        block.load(src, 1, items, valid_items=n, oob_default={oob}, temp_storage=temp,
                   threads=64)
        block.store(dst, 1, items, valid_items=n, temp_storage=temp, threads=64)
    """
    arr = np.dtype(dtype)
    calls = FRONT_ENDS[front_end](source, (arr, arr, "int64"))
    assert sorted(calls) == ["load", "store"]
    given = {"temp": "pointer", "ptr": "pointer", "items": "pointer"}
    check(calls["load"], TILE_PARAMS, {**given, "oob_default": stored})
    check(calls["store"], TILE_PARAMS, given)


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(("initial", "stored"), [("0", 0), ("-3", (-3) % 2**32)])
def test_scan_operands_reach_the_provider(front_end: str, initial: str, stored: int) -> None:
    source = f"""
    def k(a, b):
        temp = cuda.shared.array(0, np.uint8)
        items = cuda.local.array(4, np.int32)
        out = cuda.local.array(4, np.int32)
        aggregate = cuda.local.array(1, np.int32)
        for i in range(4):
            items[i] = a[i]
        block.exclusive_scan(items, out, scan_op="max", initial_value={initial},
                             block_aggregate=aggregate, temp_storage=temp, threads=64)
        b[0] = out[0] + aggregate[0]
    """
    calls = FRONT_ENDS[front_end](source, (np.dtype(np.int32),) * 2)
    assert sorted(calls) == ["scan"]
    given = {"temp": "pointer", "in": "pointer", "out": "pointer", "block_aggregate": "pointer"}
    check(calls["scan"], SCAN_PARAMS, {**given, "initial_value": stored})


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_prefix_state_reaches_the_provider(front_end: str) -> None:
    source = """
    def k(a):
        items = cuda.local.array(4, np.int32)
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        for i in range(4):
            items[i] = a[i]
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, threads=64)
        a[0] = items[0]
    """
    calls = FRONT_ENDS[front_end](source, (np.dtype(np.int32),))
    assert sorted(calls) == ["scan"]
    check(calls["scan"], SCAN_PARAMS, {"in": "pointer", "out": "pointer", "state": "pointer"})


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_tile_status_reaches_the_provider(front_end: str) -> None:
    source = """
    def k(a, status):
        items = cuda.local.array(4, np.int32)
        for i in range(4):
            items[i] = a[i]
        block.inclusive_sum(items, prefix_op=lookback, prefix_state=status,
                            tile=cuda.blockIdx.x, threads=64)
        a[0] = items[0]
    """
    calls = FRONT_ENDS[front_end](source, (np.dtype(np.int32), scan.tile_status_dtype(np.int32)))
    assert sorted(calls) == ["scan"]
    check(calls["scan"], SCAN_PARAMS, {"in": "pointer", "out": "pointer", "status": "pointer"})


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(
    ("call", "given"),
    [
        (
            'block.reduce(items, "max", valid=n, temp_storage=temp, threads=64)',
            {"temp": "pointer", "in": "pointer", "out": "pointer"},
        ),
        # a scalar item reaches the provider in a slot; the result comes back in one
        ("block.sum(2.5, threads=64)", {"in": 2.5, "out": "pointer"}),
    ],
)
def test_reduce_operands_reach_the_provider(front_end: str, call: str, given: dict) -> None:
    source = f"""
    def k(a, n):
        temp = cuda.shared.array(0, np.uint8)
        items = cuda.local.array(4, np.float32)
        for i in range(4):
            items[i] = a[i]
        a[0] = {call}
    """
    calls = FRONT_ENDS[front_end](source, (np.dtype(np.float32), "int64"))
    assert sorted(calls) == ["reduce"]
    check(calls["reduce"], REDUCE_PARAMS, given)


def test_record_oob_default_reaches_the_provider() -> None:
    """A tuple for a record's default is stored field by field in a slot (numba-cuda only)."""
    source = """
    def k(src, dst, n):
        items = cuda.local.array(4, PAIR)
        block.load(src, 0, items, valid_items=n, oob_default=(0.0, 0), threads=64)
        block.store(dst, 0, items, valid_items=n, threads=64)
    """
    calls = numba_cuda_ir(source, (PAIR, PAIR, "int64"))
    given = {"ptr": "pointer", "items": "pointer"}
    check(calls["load"], TILE_PARAMS, {**given, "oob_default": "pointer"})
    check(calls["store"], TILE_PARAMS, given)


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_zipped_tile_io_operands_reach_the_provider(front_end: str) -> None:
    """A tuple of arrays reaches the provider as a table of their tiles' addresses."""
    source = """
    def k(a, b, h, n):
        items = cuda.local.array(4, ZIP)
        block.load((a, b), 1, items, valid_items=n, oob_default=(1.0, 0.0), threads=64)
        block.store(h, 1, items, field="b", threads=64)
    """
    f32 = np.dtype(np.float32)
    calls = FRONT_ENDS[front_end](source, (f32, f32, f32, "int64"))
    assert sorted(calls) == ["load", "store"]
    given = {"ptr": "pointer", "items": "pointer"}
    check(calls["load"], TILE_PARAMS, {**given, "oob_default": "pointer"})
    check(calls["store"], TILE_PARAMS, given)
    # the address table is a stack slot (of the tiles' addresses), not an array's data
    assert calls["load"][1].kind == "slot"
