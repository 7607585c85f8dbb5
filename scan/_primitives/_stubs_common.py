# SPDX-License-Identifier: Apache-2.0
"""What the stubs of every primitive family share: the table schema, the preamble, the helpers.

``scan/block.pyi`` is generated (:mod:`scan._stubgen`) from three sources:

- :data:`scan._calls.CALLS`: every entry point's parameters, in order, with
  their defaults and keyword-only flags;
- the overload tables, one module per primitive family
  (:mod:`scan._primitives._stubs_scan`, :mod:`scan._primitives._stubs_tile_io`):
  for each overload, every parameter's type there and whether the overload
  requires it (an :class:`Arg`), and the return type;
- this module: the preamble of the stub file (its comments, imports, type
  variables, aliases and marker protocols, as text) and the host-side helpers
  ``temp_storage`` and ``tile_size`` (checked against ``scan.block``'s own
  signatures).

The preamble is a :class:`string.Template`: ``$name`` stands for text the
generator derives (``$all`` from ``scan.block.__all__``, ``$value_types`` from
``scan._vocab.VALUE_DTYPES``, ``$_ModeCodes`` and the algorithm literals from
``scan._vocab``); write a literal dollar sign as ``$$``.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

__all__ = [
    "DECLARATIONS",
    "HEADER",
    "HELPERS",
    "Arg",
    "Comment",
    "Entry",
    "Overload",
    "StubFunction",
    "any_tail",
    "banner",
    "opt",
    "req",
    "tail",
]


@attrs.frozen
class Arg:
    """One parameter of one overload: its type there, and whether the overload requires it.

    The name, position, default and keyword-only flag are the call table's; an
    optional argument (``required=False``) is written with the table's default.
    """

    name: str
    type: str
    required: bool = False


@attrs.frozen
class Overload:
    """One signature of a function: an :class:`Arg` for every parameter, in order."""

    args: tuple[Arg, ...]
    returns: str


@attrs.frozen
class Comment:
    """Comment lines between two overloads, after a blank line (and before one, if asked)."""

    text: str
    blank_after: bool = False


#: What a function's stub is made of, in file order.
Entry: TypeAlias = Overload | Comment


@attrs.frozen
class StubFunction:
    """The stub of one function: its overloads (``@overload`` when more than one) and comments."""

    name: str
    entries: tuple[Entry, ...]

    @property
    def overloads(self) -> tuple[Overload, ...]:
        return tuple(e for e in self.entries if isinstance(e, Overload))


def req(name: str, type: str) -> Arg:
    """A parameter the overload requires (written without a default)."""
    return Arg(name, type, required=True)


def opt(name: str, type: str) -> Arg:
    """A parameter the overload leaves optional (written with the call table's default)."""
    return Arg(name, type)


def tail(algorithm: str) -> tuple[Arg, ...]:
    """``algorithm=`` and the parameters every primitive ends with, all optional."""
    return (
        opt("algorithm", f"{algorithm} | None"),
        opt("temp_storage", "_TempStorage | None"),
        opt("threads", "_Threads | None"),
        opt("items_per_thread", "int | None"),
        opt("auto_sync", "bool"),
    )


def any_tail() -> tuple[Arg, ...]:
    """The same parameters, as the diagnostic overloads take them (``Any``)."""
    names = ("algorithm", "temp_storage", "threads", "items_per_thread", "auto_sync")
    return tuple(opt(name, "Any") for name in names)


def banner(name: str) -> Comment:
    """The rule that opens a function's overloads."""
    return Comment(f"# -------------------- {name}", blank_after=True)


#: The comment block that opens the stub file.
HEADER = """\
# SPDX-License-Identifier: Apache-2.0
# Overloads for scan.block: prefix_state's element type is the callback's StateT,
# the scanned values' scalar type is its ValueT, and the invalid combinations
# (prefix_op with initial_value or block_aggregate, a stateful callback without
# prefix_state, a stateless one with it, out= with a scalar) match no overload.
#
# NOTE: a scalar payload is a NumPy scalar, one record, or a Python int/float
# when no callback fixes the value type. exclusive_scan with a non-sum operator
# string and neither initial_value nor prefix_op is a static error; with an
# operator object, a function or a ufunc (which cannot be told from "+"
# statically), in scan(mode="exclusive"), on records or on Python scalars it is
# accepted here and rejected when the kernel compiles.
#
# NOTE (records): a record value or state is np.void, NumPy's type for an item
# of a structured dtype; the field names and types are not part of it, so they
# are not checked (numba-stubs gives an item of a local record array Any-typed
# attributes). inclusive_scan, exclusive_scan, scan(mode=...), load and store
# have record overloads after their numeric ones: scan_op= is a ScanOperator or
# a callable returning a tuple (its operands, named tuples at run time, are Any),
# so the built-in operator strings are static errors, but a ufunc or a Python
# built-in such as max is a callable and is refused only when the kernel
# compiles; initial_value=/oob_default= are a record or a tuple of numbers (their
# length is not checked); a stateless prefix_op returns a tuple. The sums have
# no record overloads: inclusive_sum/exclusive_sum of records is `Value of type
# variable "ValueT" ... cannot be "void"`. The scans' state type, ScanStateT,
# adds np.void to the numeric types, for record values and numeric ones alike;
# the sums keep StateT numeric (tests/typing/fail/structured_state.py), so a sum
# with a record state is a static error that the run time would accept.
# statefn types a callback whose block_aggregate is annotated Any as
# StatefulFunction[<its state type>, Any] (record callbacks included): its state
# array is checked, its value type is not (a record callback on numeric values
# is refused when the kernel compiles). Record overloads come after the numeric
# ones because a record array resembles every numeric array overload once types
# are erased (only the dtype differs): numeric mistakes keep their messages, and
# since an Any value type makes the numeric overloads' ValueT Any, a wrong state
# array for a record callback is the same one-line prefix_state error.
#
# NOTE (readable errors): when no overload matches, mypy checks the call against
# the first overload that matches it "after erasing types" and prints that
# check's errors; with none, it prints every overload (kilobytes). The stubs use
# this on purpose:
# - _StateArray defers prefix_state to mypy's second inference pass (the
#   Callable in its second member), so the state type comes from prefix_op
#   alone and a wrong state array is reported as `Argument "prefix_state" ...
#   expected "ndarray[tuple[int], dtype[<the callback's state type>]] | ..."`.
#   The second member also makes a scalar prefix_state resemble this overload;
#   nothing real is a generic[Callable[...]]. The first member is 1-D: numba-stubs
#   types cuda.local.array(1, ...) as ndarray[tuple[int], ...] and its element
#   as the scalar, so state[0] or a (1, 1) array is this one-line error too.
# - _ScanAlgorithmLike and _TileAlgorithmLike add Sequence[Never] (no string is
#   one) so that a misspelled algorithm resembles the intended overload and mypy
#   lists the accepted literals (a plain str never resembles a Literal).
# - _SameDtype defers out= (and items= of load/store) the same way, so that an
#   array of another dtype is `Argument 2 ... expected "ndarray[..., dtype[<the
#   values' type>]] | ..."` rather than `Value of type variable "ValueT" ...
#   cannot be "object"` (the join of two dtypes).
# - StatefulPrefixOpNeedsPrefixState ends the stateless prefix_op union: a
#   stateful callback without prefix_state (the stateful overloads require it)
#   is checked against the stateless overload, and the expected type names it.
# - exclusive_scan's overload without a prefix takes initial_value= required, or
#   a sum-like scan_op= without it; NonSumOperatorNeedsInitialValueOrPrefixOp
#   [Never] resembles every str after erasure (str.upper) and matches none, so
#   scan_op="max" alone is one line naming it.
# - The overloads after "# diagnostics" cannot match a real argument: their
#   marker types (PrefixStateNeedsAStatefulPrefixOp,
#   BlockAggregateCannotBeCombinedWithPrefixOp,
#   InitialValueCannotBeCombinedWithPrefixOp) exist only here, and their names
#   are the error message. They return Any, so they never change a valid
#   call's type.
# tests/typing/fail/ pins each message.
"""

#: Imports, ``__all__``, type variables, aliases and marker types (a string.Template).
DECLARATIONS = """\
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, Never, Protocol, TypeAlias, TypeVar, overload

import numpy as np
from numpy.typing import DTypeLike, NDArray

from statefn import ScanOperator, StatefulFunction, StatelessFunction

$all

# Value-restricted, not bounded: two arrays of different dtypes must not meet at
# their join (signedinteger[Any]); each call must hold for one exact scalar type.
# StateT is the sums' state type and ScanStateT the scans': the latter also takes
# a record (np.void); see the note at the top.
StateT = TypeVar(
    "StateT",
$value_types
)  # fmt: skip
ScanStateT = TypeVar(
    "ScanStateT",
$value_types
    np.void,
)  # fmt: skip
ValueT = TypeVar(
    "ValueT",
$value_types
)  # fmt: skip
_PyScalarT = TypeVar("_PyScalarT", int, float)
_T_co = TypeVar("_T_co", covariant=True)

$_ModeCodes
$_ScanAlgorithmCodes
$_TileAlgorithmCodes
_PrimitiveCodes: TypeAlias = Literal["scan", "load", "store"]
_ScanOpCodes: TypeAlias = Literal[
    "+", "add", "sum", "plus",
    "*", "mul", "multiply", "prod",
    "min", "minimum",
    "max", "maximum",
    "&", "bit_and", "and_",
    "|", "bit_or", "or_",
    "^", "bit_xor", "xor",
]  # fmt: skip

_Threads: TypeAlias = int | tuple[int, int] | tuple[int, int, int]
_TempStorage: TypeAlias = NDArray[np.uint8]
_ScanOpLike: TypeAlias = _ScanOpCodes | ScanOperator | np.ufunc | Callable[[ValueT, ValueT], ValueT]
_SumCodes: TypeAlias = Literal["+", "add", "sum", "plus"]
# An exclusive scan without initial_value= or prefix_op=: only sums have an identity.
_ExclusiveSeedlessOpLike: TypeAlias = (
    _SumCodes
    | ScanOperator
    | np.ufunc
    | Callable[[ValueT, ValueT], ValueT]
    | NonSumOperatorNeedsInitialValueOrPrefixOp[Never]
)
_PyScanOpLike: TypeAlias = (
    _ScanOpCodes | ScanOperator | np.ufunc | Callable[[_PyScalarT, _PyScalarT], _PyScalarT]
)
_StatelessLike: TypeAlias = (
    StatelessFunction[ValueT] | Callable[[ValueT], ValueT] | StatefulPrefixOpNeedsPrefixState
)
_InitialLike: TypeAlias = ValueT | int | float
# Records: callbacks take named tuples of the fields (Any here) and return a tuple of
# numbers; initial_value=/oob_default= are a record or a tuple of numbers.
_RecordT = TypeVar("_RecordT", bound=np.void)
_FieldLike: TypeAlias = int | float | np.integer[Any] | np.floating[Any]
_RecordScanOpLike: TypeAlias = ScanOperator | Callable[[Any, Any], tuple[Any, ...]]
_RecordStatelessLike: TypeAlias = StatelessFunction[np.void] | Callable[[Any], tuple[Any, ...]]
_RecordInitialLike: TypeAlias = np.void | tuple[_FieldLike, ...]
_ScanAlgorithmLike: TypeAlias = _ScanAlgorithmCodes | Sequence[Never]
_TileAlgorithmLike: TypeAlias = _TileAlgorithmCodes | Sequence[Never]
_StateArray: TypeAlias = (
    np.ndarray[tuple[int], np.dtype[ScanStateT]] | np.generic[Callable[[], ScanStateT]]
)
# out= of a scan, items= of load/store: their dtype is the values' (src's, dst's),
# deferred like _StateArray so that a mismatch names the argument and both dtypes.
_SameDtype: TypeAlias = NDArray[ValueT] | np.generic[Callable[[], ValueT]]
_AnyPrefixOp: TypeAlias = StatefulFunction[Any, Any] | StatelessFunction[Any] | Callable[[Any], Any]

# Marker types of the diagnostic overloads (see the note at the top); not at run time.
class PrefixStateNeedsAStatefulPrefixOp(np.generic):
    def __new__(cls) -> Never: ...

class BlockAggregateCannotBeCombinedWithPrefixOp(np.generic):
    def __new__(cls) -> Never: ...

class InitialValueCannotBeCombinedWithPrefixOp(Protocol[_T_co]):
    def __abs__(self) -> _T_co: ...

class StatefulPrefixOpNeedsPrefixState:
    def __new__(cls) -> Never: ...

class NonSumOperatorNeedsInitialValueOrPrefixOp(Protocol[_T_co]):
    def upper(self) -> _T_co: ...

"""

#: The host-side helpers, after ``TempStorageLayout``; their parameters are
#: ``scan.block``'s (``inspect.signature``).
HELPERS: tuple[StubFunction, ...] = (
    StubFunction(
        "temp_storage",
        (
            Overload(
                (
                    req("primitive", "_PrimitiveCodes"),
                    req("dtype", "DTypeLike"),
                    req("threads", "int | tuple[int, ...]"),
                    opt("items_per_thread", "int"),
                    opt("algorithm", "str | None"),
                    opt("cc", "tuple[int, int] | None"),
                ),
                "TempStorageLayout",
            ),
        ),
    ),
    StubFunction(
        "tile_size",
        (
            Overload(
                (req("items", "NDArray[Any] | int"), opt("threads", "_Threads | None")),
                "int",
            ),
        ),
    ),
)
