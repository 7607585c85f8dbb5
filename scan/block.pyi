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

from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, Never, Protocol, TypeAlias, TypeVar, overload

import numpy as np
from numpy.typing import DTypeLike, NDArray

from statefn import ScanOperator, StatefulFunction, StatelessFunction

__all__ = [
    "TempStorageLayout",
    "exclusive_scan",
    "exclusive_sum",
    "inclusive_scan",
    "inclusive_sum",
    "load",
    "scan",
    "store",
    "temp_storage",
    "tile_size",
]

# Value-restricted, not bounded: two arrays of different dtypes must not meet at
# their join (signedinteger[Any]); each call must hold for one exact scalar type.
# StateT is the sums' state type and ScanStateT the scans': the latter also takes
# a record (np.void); see the note at the top.
StateT = TypeVar(
    "StateT",
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64,
)  # fmt: skip
ScanStateT = TypeVar(
    "ScanStateT",
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64,
    np.void,
)  # fmt: skip
ValueT = TypeVar(
    "ValueT",
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64,
)  # fmt: skip
_PyScalarT = TypeVar("_PyScalarT", int, float)
_T_co = TypeVar("_T_co", covariant=True)

_ModeCodes: TypeAlias = Literal["inclusive", "exclusive"]
_ScanAlgorithmCodes: TypeAlias = Literal["raking", "raking_memoize", "warp_scans"]
_TileAlgorithmCodes: TypeAlias = Literal[
    "direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced"
]
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

class TempStorageLayout(NamedTuple):
    size: int
    alignment: int

def temp_storage(
    primitive: _PrimitiveCodes,
    dtype: DTypeLike,
    threads: int | tuple[int, ...],
    items_per_thread: int = 1,
    *,
    algorithm: str | None = None,
    cc: tuple[int, int] | None = None,
) -> TempStorageLayout: ...
def tile_size(items: NDArray[Any] | int, *, threads: _Threads | None = None) -> int: ...
@overload
def load(
    src: NDArray[ValueT],
    offset: int | np.integer[Any],
    items: _SameDtype[ValueT],
    *,
    valid_items: int | np.integer[Any] | None = None,
    oob_default: ValueT | int | float | None = None,
    algorithm: _TileAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def load(
    src: NDArray[np.void],
    offset: int | np.integer[Any],
    items: NDArray[np.void],
    *,
    valid_items: int | np.integer[Any] | None = None,
    oob_default: _RecordInitialLike | None = None,
    algorithm: _TileAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def store(
    dst: NDArray[ValueT],
    offset: int | np.integer[Any],
    items: _SameDtype[ValueT],
    *,
    valid_items: int | np.integer[Any] | None = None,
    algorithm: _TileAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def store(
    dst: NDArray[np.void],
    offset: int | np.integer[Any],
    items: NDArray[np.void],
    *,
    valid_items: int | np.integer[Any] | None = None,
    algorithm: _TileAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

# -------------------- scan

@overload
def scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, ValueT],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: None = None,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: _InitialLike[ValueT] | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def scan(
    values: ValueT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, ValueT],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def scan(
    values: ValueT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: None = None,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def scan(
    values: ValueT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: _InitialLike[ValueT] | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...

#
@overload
def scan(
    values: _PyScalarT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _PyScanOpLike[_PyScalarT] = "+",
    initial_value: _PyScalarT | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[Any] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# records (np.void): a scan_op= function returning a tuple; see the note at the top
@overload
def scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, np.void],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: _RecordStatelessLike,
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _RecordScanOpLike,
    initial_value: _RecordInitialLike | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[np.void] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def scan(
    values: _RecordT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, np.void],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...
@overload
def scan(
    values: _RecordT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: _RecordStatelessLike,
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...
@overload
def scan(
    values: _RecordT,
    out: None = None,
    *,
    mode: _ModeCodes,
    scan_op: _RecordScanOpLike,
    initial_value: _RecordInitialLike | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[np.void] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...

# diagnostics: never match; see the note at the top
@overload
def scan(
    values: Any,
    out: Any = None,
    *,
    mode: Any,
    scan_op: Any = "+",
    initial_value: InitialValueCannotBeCombinedWithPrefixOp[Never],
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def scan(
    values: Any,
    out: Any = None,
    *,
    mode: Any,
    scan_op: Any = "+",
    initial_value: None = None,
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: NDArray[BlockAggregateCannotBeCombinedWithPrefixOp],
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def scan(
    values: Any,
    out: Any = None,
    *,
    mode: Any,
    scan_op: Any = "+",
    initial_value: None = None,
    prefix_op: _StatelessLike[Any],
    prefix_state: NDArray[PrefixStateNeedsAStatefulPrefixOp],
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...

# -------------------- inclusive_sum

@overload
def inclusive_sum(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: _StateArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def inclusive_sum(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def inclusive_sum(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def inclusive_sum(
    values: ValueT,
    out: None = None,
    *,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: _StateArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def inclusive_sum(
    values: ValueT,
    out: None = None,
    *,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def inclusive_sum(
    values: ValueT,
    out: None = None,
    *,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...

#
@overload
def inclusive_sum(
    values: _PyScalarT,
    out: None = None,
    *,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[Any] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# diagnostics: never match; see the note at the top
@overload
def inclusive_sum(
    values: Any,
    out: Any = None,
    *,
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: NDArray[BlockAggregateCannotBeCombinedWithPrefixOp],
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def inclusive_sum(
    values: Any,
    out: Any = None,
    *,
    prefix_op: _StatelessLike[Any],
    prefix_state: NDArray[PrefixStateNeedsAStatefulPrefixOp],
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...

# -------------------- exclusive_sum

@overload
def exclusive_sum(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: _StateArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_sum(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_sum(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def exclusive_sum(
    values: ValueT,
    out: None = None,
    *,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: _StateArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def exclusive_sum(
    values: ValueT,
    out: None = None,
    *,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def exclusive_sum(
    values: ValueT,
    out: None = None,
    *,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...

#
@overload
def exclusive_sum(
    values: _PyScalarT,
    out: None = None,
    *,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[Any] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# diagnostics: never match; see the note at the top
@overload
def exclusive_sum(
    values: Any,
    out: Any = None,
    *,
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: NDArray[BlockAggregateCannotBeCombinedWithPrefixOp],
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def exclusive_sum(
    values: Any,
    out: Any = None,
    *,
    prefix_op: _StatelessLike[Any],
    prefix_state: NDArray[PrefixStateNeedsAStatefulPrefixOp],
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...

# -------------------- inclusive_scan

@overload
def inclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, ValueT],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def inclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def inclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: _InitialLike[ValueT] | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def inclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, ValueT],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def inclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def inclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: _InitialLike[ValueT] | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...

#
@overload
def inclusive_scan(
    values: _PyScalarT,
    out: None = None,
    *,
    scan_op: _PyScanOpLike[_PyScalarT],
    initial_value: _PyScalarT | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[Any] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# records (np.void): a scan_op= function returning a tuple; see the note at the top
@overload
def inclusive_scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, np.void],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def inclusive_scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: _RecordStatelessLike,
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def inclusive_scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: _RecordInitialLike | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[np.void] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def inclusive_scan(
    values: _RecordT,
    out: None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, np.void],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...
@overload
def inclusive_scan(
    values: _RecordT,
    out: None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: _RecordStatelessLike,
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...
@overload
def inclusive_scan(
    values: _RecordT,
    out: None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: _RecordInitialLike | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[np.void] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...

# diagnostics: never match; see the note at the top
@overload
def inclusive_scan(
    values: Any,
    out: Any = None,
    *,
    scan_op: Any,
    initial_value: InitialValueCannotBeCombinedWithPrefixOp[Never],
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def inclusive_scan(
    values: Any,
    out: Any = None,
    *,
    scan_op: Any,
    initial_value: None = None,
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: NDArray[BlockAggregateCannotBeCombinedWithPrefixOp],
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def inclusive_scan(
    values: Any,
    out: Any = None,
    *,
    scan_op: Any,
    initial_value: None = None,
    prefix_op: _StatelessLike[Any],
    prefix_state: NDArray[PrefixStateNeedsAStatefulPrefixOp],
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...

# -------------------- exclusive_scan

@overload
def exclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, ValueT],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: _InitialLike[ValueT],
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_scan(
    values: NDArray[ValueT],
    out: _SameDtype[ValueT] | None = None,
    *,
    scan_op: _ExclusiveSeedlessOpLike[ValueT],
    initial_value: None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def exclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, ValueT],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def exclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: _StatelessLike[ValueT],
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def exclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: _InitialLike[ValueT],
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...
@overload
def exclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ExclusiveSeedlessOpLike[ValueT],
    initial_value: None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[ValueT] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> ValueT: ...

#
@overload
def exclusive_scan(
    values: _PyScalarT,
    out: None = None,
    *,
    scan_op: _PyScanOpLike[_PyScalarT],
    initial_value: _PyScalarT | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[Any] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# records (np.void): a scan_op= function returning a tuple; see the note at the top
@overload
def exclusive_scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, np.void],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: _RecordStatelessLike,
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
@overload
def exclusive_scan(
    values: NDArray[np.void],
    out: NDArray[np.void] | None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: _RecordInitialLike | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[np.void] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

#
@overload
def exclusive_scan(
    values: _RecordT,
    out: None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: StatefulFunction[ScanStateT, np.void],
    prefix_state: _StateArray[ScanStateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...
@overload
def exclusive_scan(
    values: _RecordT,
    out: None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: None = None,
    prefix_op: _RecordStatelessLike,
    prefix_state: None = None,
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...
@overload
def exclusive_scan(
    values: _RecordT,
    out: None = None,
    *,
    scan_op: _RecordScanOpLike,
    initial_value: _RecordInitialLike | None = None,
    prefix_op: None = None,
    prefix_state: None = None,
    block_aggregate: NDArray[np.void] | None = None,
    algorithm: _ScanAlgorithmLike | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _RecordT: ...

# diagnostics: never match; see the note at the top
@overload
def exclusive_scan(
    values: Any,
    out: Any = None,
    *,
    scan_op: Any,
    initial_value: InitialValueCannotBeCombinedWithPrefixOp[Never],
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def exclusive_scan(
    values: Any,
    out: Any = None,
    *,
    scan_op: Any,
    initial_value: None = None,
    prefix_op: _AnyPrefixOp,
    prefix_state: Any = None,
    block_aggregate: NDArray[BlockAggregateCannotBeCombinedWithPrefixOp],
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
@overload
def exclusive_scan(
    values: Any,
    out: Any = None,
    *,
    scan_op: Any,
    initial_value: None = None,
    prefix_op: _StatelessLike[Any],
    prefix_state: NDArray[PrefixStateNeedsAStatefulPrefixOp],
    block_aggregate: Any = None,
    algorithm: Any = None,
    temp_storage: Any = None,
    threads: Any = None,
    items_per_thread: Any = None,
    auto_sync: Any = True,
) -> Any: ...
