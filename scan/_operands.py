# SPDX-License-Identifier: Apache-2.0
"""The operands of a provider's entry point, made once for every Numba front end.

A family's spec lists its provider's operands (:class:`scan._spec.AbiOperand`,
one kind each: :data:`scan._spec.OperandKind` says what each kind means).
:func:`emit_operands` walks that table and decides, for each operand, what
to pass: null, a data pointer, a slot holding a value, a tile's pointers or
valid count. A front end supplies only the primitive emitters
(:class:`OperandEmitter`), in its own IR (llvmlite for numba-cuda, MLIR for
numba-cuda-mlir), so both pass exactly the same operands.

Nothing here imports Numba.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from ._spec import AbiOperand, EntryPoint

__all__ = ["OperandEmitter", "emit_operand", "emit_operands"]

#: A front end's IR value (an llvmlite or MLIR value).
ValueT = TypeVar("ValueT")


class OperandEmitter(Protocol[ValueT]):
    """What a front end emits for the operands of one call being lowered.

    Parameters are the call's parameter names (of its entry point); the
    emitter knows the call's argument types and values. Integers are the
    64-bit integers of the pointer ABI unless said otherwise; pointers are
    generic, untyped ones.
    """

    def passed(self, param: str) -> bool:
        """Whether the call passed `param` (not omitted, not None)."""

    def is_array(self, param: str) -> bool:
        """Whether argument `param` is an array."""

    def constant(self, value: int) -> ValueT:
        """The 64-bit integer `value`."""

    def null(self) -> ValueT:
        """A null pointer."""

    def data(self, param: str) -> ValueT:
        """The data pointer of array argument `param`."""

    def result_slot(self) -> ValueT:
        """A fresh slot of the call's value type, which the call returns afterwards."""

    def scalar_value(self, param: str) -> ValueT:
        """A slot holding numeric argument `param` converted to the call's value type."""

    def record_value(self, param: str) -> ValueT:
        """A pointer to the bytes of record argument `param` (a record, or a tuple of fields)."""

    def record_pointer(self, param: str) -> ValueT:
        """The pointer to the bytes of record argument `param`, as it is."""

    def index(self, param: str) -> ValueT:
        """Integer argument `param` as an index (the integer tile arithmetic uses)."""

    def integer(self, param: str) -> ValueT:
        """Integer argument `param` as a 64-bit integer."""

    def element_pointers(self, param: str, offset: ValueT) -> list[ValueT]:
        """``&array[offset]`` of array argument `param`, or of each array of a tuple of them."""

    def pointer_table(self, pointers: Sequence[ValueT]) -> ValueT:
        """A slot holding `pointers` in order."""

    def lengths(self, param: str) -> list[ValueT]:
        """``len(array)`` (indices) of array argument `param`, or of each array of a tuple."""

    def minimum(self, a: ValueT, b: ValueT) -> ValueT:
        """The smaller of two signed indices."""

    def difference(self, a: ValueT, b: ValueT) -> ValueT:
        """``a - b`` of two indices."""

    def zero_if_negative(self, test: ValueT, value: ValueT) -> ValueT:
        """`value`, or 0 where the index `test` is negative."""

    def nbytes(self, param: str) -> ValueT:
        """The size in bytes of array argument `param` (its items times its itemsize)."""


def emit_operand(
    emitter: OperandEmitter[ValueT], op: AbiOperand, plan: Any, entry: EntryPoint
) -> ValueT:
    """Operand `op` of `plan`'s provider for a call of `entry`, made by `emitter`.

    The operands are made in the table's order and, within one, in the order
    written here: a front end's IR is the same for the same call.
    """
    if not op.present(plan):
        return emitter.constant(0) if op.integer else emitter.null()
    record = plan.value_dtype.names is not None
    kind = op.kind
    if kind == "output":
        if plan.returns_value:
            return emitter.result_slot()
        param = op.param_of(entry)
        return emitter.data(param if emitter.passed(param) else _named(op.alias, op))
    param = op.param_of(entry)
    if kind == "array":
        return emitter.data(param)
    if kind == "value":
        return emitter.record_value(param) if record else emitter.scalar_value(param)
    if kind == "input":
        if emitter.is_array(param):
            return emitter.data(param)
        if record:  # Numba represents a record by a pointer to its bytes
            return emitter.record_pointer(param)
        return emitter.scalar_value(param)
    if kind == "tile":
        pointers = emitter.element_pointers(param, emitter.index(_named(op.offset, op)))
        if not getattr(plan, "zipped", False):
            return pointers[0]
        return emitter.pointer_table(pointers)
    if kind == "tile_valid":
        return _tile_valid(emitter, param, _named(op.offset, op), op.count)
    if kind == "nbytes":
        return emitter.nbytes(param)
    if kind == "count":
        return emitter.integer(param) if emitter.passed(param) else emitter.constant(op.absent)
    raise NotImplementedError(kind)  # a kind of scan._spec.OperandKind without an emitter


def emit_operands(
    emitter: OperandEmitter[ValueT], plan: Any, entry: EntryPoint, operands: Sequence[AbiOperand]
) -> list[ValueT]:
    """Every operand of `plan`'s provider for a call of `entry`, in the table's order."""
    return [emit_operand(emitter, op, plan, entry) for op in operands]


def _tile_valid(
    emitter: OperandEmitter[ValueT], array: str, offset_param: str, count: str | None
) -> ValueT:
    """The items from ``offset`` to the array's end, at most ``count``, 0 before the array."""
    offset = emitter.index(offset_param)
    lengths = emitter.lengths(array)
    length = lengths[0]
    for other in lengths[1:]:  # zipped tile I/O: the shortest array's
        length = emitter.minimum(other, length)
    valid = emitter.difference(length, offset)
    if count is not None and emitter.passed(count):
        valid = emitter.minimum(emitter.index(count), valid)
    # a tile that would start before the array is empty, as one past its end is
    return emitter.zero_if_negative(offset, valid)


def _named(param: str | None, op: AbiOperand) -> str:
    """A parameter an operand of `op`'s kind must name (the spec's validator checks it)."""
    assert param is not None, op.name
    return param
