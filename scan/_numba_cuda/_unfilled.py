# SPDX-License-Identifier: Apache-2.0
"""Values computed from items no load filled, followed through kernel code in the simulator.

A partial tile loaded without ``oob_default=`` leaves its last items as they
were: uninitialised, or an earlier tile's. The simulator's local arrays
(``scan._numba_cuda._sim``) know which items those are; this module makes what
kernel code computes from them carry the mark, so a scan that takes in such a
value is refused even when it was first turned into a flag or a sum.

* **Data.** Reading an unfilled item of a numeric local array gives an
  :func:`unfilled` scalar: a subclass of the item's NumPy scalar type whose
  arithmetic, comparisons and NumPy functions give unfilled results again
  (comparisons give an :class:`UnfilledBool`). Writing one into a local array
  marks that item unfilled too.
* **Control.** ``1 if items[i] > 0 else 0`` computes a clean constant from a
  branch. When an unfilled value decides a conditional jump, the first item
  written on each side of the branch (``STORE_SUBSCR``, found in the
  function's bytecode) is marked unfilled, but only when both sides reach
  such a write before any other decision, loop edge or return: a guard such
  as ``items[i] > 0 and i + base < n`` then decides nothing alone, and
  nothing is marked.

Values lose the mark through ``int()``, ``float()``, ``math`` functions and
record items (records are checked where a scan reads them, by origin).
"""

from __future__ import annotations

import dis
import operator
import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

import numpy as np

__all__ = [
    "UnfilledBool",
    "clear_branch",
    "is_unfilled",
    "plain",
    "taints_write",
    "unfilled",
]


class _Mark:
    """Base of every unfilled value (a marker for :func:`is_unfilled`)."""

    __slots__ = ()


def is_unfilled(value: Any) -> bool:
    """Whether *value* was computed from an item no load filled."""
    return isinstance(value, _Mark)


def plain(value: Any) -> Any:
    """*value* without the mark (the NumPy scalar or bool it stands for)."""
    if isinstance(value, UnfilledBool):
        return np.bool_(value.value)
    if isinstance(value, _Mark):
        return value._base(value)  # type: ignore[attr-defined]
    return value


def unfilled(value: Any) -> Any:
    """*value* marked as computed from an unfilled item (unchanged if it cannot carry it)."""
    if isinstance(value, _Mark) or value is NotImplemented:
        return value
    if isinstance(value, bool | np.bool_):
        return UnfilledBool(bool(value))
    cls = _classes.get(type(value))
    if cls is None:
        if not isinstance(value, np.number):
            return value  # tuples (divmod), records, Python objects
        cls = _classes.setdefault(type(value), _subclass(type(value)))
    return cls(value)


# ---------------------------------------------------------------------------
# the operators


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
}


def _forward(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        return unfilled(op(plain(self), plain(other)))

    return method


def _reflected(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        return unfilled(op(plain(other), plain(self)))

    return method


def _unary(op: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def method(self: Any) -> Any:
        return unfilled(op(plain(self)))

    return method


def _bool(self: Any) -> bool:
    _note_branch(sys._getframe(1))
    return bool(plain(self))


def _array_ufunc(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    result = getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs)
    if isinstance(result, tuple):
        return tuple(unfilled(r) for r in result)
    return unfilled(result)


def _operators() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    for name, op in _BINARY.items():
        namespace[f"__{name}__"] = _forward(op)
        namespace[f"__r{name}__"] = _reflected(op)
    for name, cmp in _COMPARE.items():
        namespace[f"__{name}__"] = _forward(cmp)
    for name, fn in _UNARY.items():
        namespace[f"__{name}__"] = _unary(fn)
    namespace["__bool__"] = _bool
    namespace["__array_ufunc__"] = _array_ufunc
    return namespace


_OPERATORS = _operators()


def _subclass(base: type) -> type:
    """The unfilled counterpart of NumPy scalar type *base*."""
    namespace = {
        **_OPERATORS,
        "__slots__": (),
        "__module__": __name__,
        "_base": base,
        "__hash__": base.__hash__,
        "__repr__": lambda self: f"unfilled({base.__repr__(self)})",  # type: ignore[call-arg]
    }
    return type(f"Unfilled_{base.__name__}", (base, _Mark), namespace)


_classes: dict[type, type] = {}


class UnfilledBool(_Mark):
    """A comparison of an unfilled value: a bool whose branches are followed.

    NumPy's bool cannot be subclassed; this stands in for it (``int()``,
    indexing and writes into arrays see 0 or 1).
    """

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __int__(self) -> int:
        return int(self.value)

    __index__ = __int__

    def __float__(self) -> float:
        return float(self.value)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"unfilled({self.value})"


for _name, _fn in _OPERATORS.items():
    setattr(UnfilledBool, _name, _fn)


# ---------------------------------------------------------------------------
# branches decided by unfilled values

# the pending branch of each simulated thread: (frame, offsets of the writes it decides)
_pending = threading.local()

_CONDITIONAL = frozenset(
    name for name in dis.opmap if "JUMP" in name and "IF" in name
)  # POP_JUMP_IF_FALSE, POP_JUMP_FORWARD_IF_TRUE, JUMP_IF_FALSE_OR_POP, ...
_STOPS = frozenset(
    {"RETURN_VALUE", "RETURN_CONST", "FOR_ITER", "RAISE_VARARGS", "RERAISE", "YIELD_VALUE"}
)
_BEFORE_JUMP = frozenset({"TO_BOOL", "COMPARE_OP", "UNARY_NOT", "COPY", "NOP"})
# how far a side of a branch is followed to its write
_MAX_STEPS = 64

_decided: dict[tuple[CodeType, int], frozenset[int]] = {}


def _first_write(instructions: list[dis.Instruction], at: dict[int, int], index: int) -> int | None:
    """The offset of the first item write from instruction *index* on, with no decision first."""
    for _ in range(_MAX_STEPS):
        if index >= len(instructions):
            return None
        ins = instructions[index]
        if ins.opname == "STORE_SUBSCR":
            return ins.offset
        if ins.opname in _CONDITIONAL or ins.opname in _STOPS:
            return None
        if "JUMP" in ins.opname:
            target = ins.argval
            if not isinstance(target, int) or target <= ins.offset or target not in at:
                return None  # a loop edge: the write may belong to another iteration
            index = at[target]
            continue
        index += 1
    return None


def _writes_decided(code: CodeType, offset: int) -> frozenset[int]:
    """The writes a branch at *offset* decides alone (empty when not both sides reach one)."""
    key = (code, offset)
    found = _decided.get(key)
    if found is not None:
        return found
    instructions = list(dis.get_instructions(code))
    at = {ins.offset: i for i, ins in enumerate(instructions)}
    writes: frozenset[int] = frozenset()
    index = at.get(offset)
    if index is not None:
        # __bool__ runs at the jump itself, or just before it (TO_BOOL, a
        # comparison that converts its result)
        for step in range(3):
            if index + step >= len(instructions):
                break
            ins = instructions[index + step]
            if ins.opname in _CONDITIONAL:
                target = ins.argval
                if not isinstance(target, int) or target <= ins.offset:
                    break  # a loop's condition
                sides = (
                    _first_write(instructions, at, index + step + 1),
                    _first_write(instructions, at, at[target]) if target in at else None,
                )
                if sides[0] is not None and sides[1] is not None:
                    writes = frozenset(sides)  # type: ignore[arg-type]
                break
            if ins.opname not in _BEFORE_JUMP and step:
                break
    _decided[key] = writes
    return writes


def _note_branch(frame: FrameType | None) -> None:
    if frame is None:
        return
    writes = _writes_decided(frame.f_code, frame.f_lasti)
    if writes:
        _pending.branch = (frame, writes)
    else:
        _pending.branch = None


def clear_branch() -> None:
    """Forget the calling thread's pending branch (a block call starts a new step)."""
    _pending.branch = None


def taints_write(frame: FrameType | None) -> bool:
    """Whether the item write *frame* is making was decided by an unfilled value.

    Consumes the pending branch when it does.
    """
    branch = getattr(_pending, "branch", None)
    if branch is None or frame is None:
        return False
    pending_frame, writes = branch
    if pending_frame is not frame or frame.f_lasti not in writes:
        return False
    _pending.branch = None
    return True
