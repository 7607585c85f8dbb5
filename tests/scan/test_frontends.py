# SPDX-License-Identifier: Apache-2.0
"""The front-end contract: both Numba front ends implement :class:`scan._frontend.FrontEnd`,
and the operands of a provider's entry point are decided once (:mod:`scan._operands`)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import scan
from scan import _numba_cuda, _numba_cuda_mlir
from scan._frontend import FrontEnd
from scan._operands import emit_operand, emit_operands
from scan._spec import AbiOperand, EntryPoint

# ---------------------------------------------------------------------------
# the FrontEnd protocol


MEMBERS = sorted(
    name for name in vars(FrontEnd) if not name.startswith("_") and name not in ("name",)
)


@pytest.mark.parametrize("front_end", [_numba_cuda.FRONT_END, _numba_cuda_mlir.FRONT_END])
def test_each_front_end_implements_the_protocol(front_end: Any) -> None:
    assert isinstance(front_end, FrontEnd)
    assert MEMBERS == ["callbacks", "compile_kernel", "install", "owns"]
    for name in MEMBERS:  # the same parameters as the protocol's
        want = inspect.signature(getattr(FrontEnd, name))
        got = inspect.signature(getattr(type(front_end), name))
        assert list(got.parameters) == list(want.parameters), name


def test_scan_compile_dispatches_through_the_protocol() -> None:
    names = [f.name for f in scan._FRONT_ENDS]
    assert names == ["numba-cuda-mlir", "numba-cuda"]  # numba-cuda owns every other kernel
    assert scan._FRONT_ENDS[1].owns(lambda a: None)
    assert not scan._FRONT_ENDS[0].owns(lambda a: None)


def test_numba_cuda_callbacks_are_its_lowerings() -> None:
    from scan._numba_cuda._lowering import CALLBACKS

    assert _numba_cuda.FRONT_END.callbacks() is CALLBACKS
    assert CALLBACKS.frontend.startswith("numba-cuda ")


# ---------------------------------------------------------------------------
# the operands, decided once: a recording emitter


class Recorder:
    """An :class:`scan._operands.OperandEmitter` whose values are strings naming the emitter."""

    def __init__(self, passed: set[str], arrays: set[str], n_arrays: int = 1) -> None:
        self._passed = passed
        self._arrays = arrays
        self._n = n_arrays
        self.log: list[str] = []

    def _note(self, text: str) -> str:
        self.log.append(text)
        return text

    def passed(self, param: str) -> bool:
        return param in self._passed

    def is_array(self, param: str) -> bool:
        return param in self._arrays

    def constant(self, value: int) -> str:
        return self._note(f"const {value}")

    def null(self) -> str:
        return self._note("null")

    def data(self, param: str) -> str:
        return self._note(f"data {param}")

    def result_slot(self) -> str:
        return self._note("result")

    def scalar_value(self, param: str) -> str:
        return self._note(f"scalar {param}")

    def record_value(self, param: str) -> str:
        return self._note(f"record {param}")

    def record_pointer(self, param: str) -> str:
        return self._note(f"record* {param}")

    def index(self, param: str) -> str:
        return self._note(f"index {param}")

    def integer(self, param: str) -> str:
        return self._note(f"i64 {param}")

    def element_pointers(self, param: str, offset: str) -> list[str]:
        return [self._note(f"&{param}{i}[{offset}]") for i in range(self._n)]

    def pointer_table(self, pointers: Sequence[str]) -> str:
        return self._note(f"table {list(pointers)}")

    def lengths(self, param: str) -> list[str]:
        return [self._note(f"len {param}{i}") for i in range(self._n)]

    def minimum(self, a: str, b: str) -> str:
        return self._note(f"min({a}, {b})")

    def difference(self, a: str, b: str) -> str:
        return self._note(f"({a}) - ({b})")

    def zero_if_negative(self, test: str, value: str) -> str:
        return self._note(f"{test} < 0 ? 0 : {value}")

    def nbytes(self, param: str) -> str:
        return self._note(f"nbytes {param}")


def _entry(*names: str) -> EntryPoint:
    return SimpleNamespace(names=frozenset(names), key="test.call")  # type: ignore[return-value]


def _plan(record: bool = False, returns: bool = False, zipped: bool = False, **flags: bool) -> Any:
    dtype = np.dtype([("a", np.float32)]) if record else np.dtype(np.int32)
    return SimpleNamespace(value_dtype=dtype, returns_value=returns, zipped=zipped, **flags)


def test_absent_operands_are_null_or_zero() -> None:
    e = Recorder(set(), set())
    ops = [
        AbiOperand("p", "array", param="x", when="given"),
        AbiOperand("n", "count", param="x", when="given"),
    ]
    assert emit_operands(e, _plan(given=False), _entry("x"), ops) == ["null", "const 0"]


@pytest.mark.parametrize(
    ("record", "passed", "arrays", "kind", "want"),
    [
        (False, {"x"}, {"x"}, "array", "data x"),
        (False, {"x"}, set(), "value", "scalar x"),
        (True, {"x"}, set(), "value", "record x"),
        (False, {"x"}, {"x"}, "input", "data x"),
        (True, {"x"}, set(), "input", "record* x"),
        (False, {"x"}, set(), "input", "scalar x"),
        (False, {"x"}, {"x"}, "nbytes", "nbytes x"),
        (False, {"x"}, set(), "count", "i64 x"),
        (False, set(), set(), "count", "const 7"),
    ],
)
def test_each_kind_calls_its_emitter(
    record: bool, passed: set[str], arrays: set[str], kind: Any, want: str
) -> None:
    e = Recorder(passed, arrays)
    op = AbiOperand("o", kind, param="x", absent=7)
    assert emit_operand(e, op, _plan(record=record), _entry("x")) == want


def test_output_is_the_result_slot_the_parameter_or_its_alias() -> None:
    op = AbiOperand("out", "output", param="out", alias="items")
    assert emit_operand(Recorder(set(), set()), op, _plan(returns=True), _entry("out")) == "result"
    e = Recorder({"out"}, {"out"})
    assert emit_operand(e, op, _plan(), _entry("out", "items")) == "data out"
    e = Recorder(set(), set())
    assert emit_operand(e, op, _plan(), _entry("out", "items")) == "data items"


def test_tile_and_valid_count() -> None:
    tile = AbiOperand("ptr", "tile", param="src", offset="base")
    valid = AbiOperand("valid", "tile_valid", param="src", offset="base", count="n")
    e = Recorder({"src", "base", "n"}, {"src"})
    assert emit_operand(e, tile, _plan(), _entry("src", "base")) == "&src0[index base]"
    assert emit_operand(e, valid, _plan(), _entry("src", "base", "n")) == (
        "index base < 0 ? 0 : min(index n, (len src0) - (index base))"
    )
    e = Recorder({"src", "base"}, {"src"}, n_arrays=2)  # zipped, no count
    assert emit_operand(e, tile, _plan(zipped=True), _entry("src", "base")) == (
        "table ['&src0[index base]', '&src1[index base]']"
    )
    e.log.clear()
    assert emit_operand(e, valid, _plan(zipped=True), _entry("src", "base")) == (
        "index base < 0 ? 0 : (min(len src1, len src0)) - (index base)"
    )
    # the order the IR is emitted in: offset, lengths, shortest, difference, clamp
    assert e.log[:3] == ["index base", "len src0", "len src1"]
