# SPDX-License-Identifier: Apache-2.0
# Overloads for scan.block: prefix_state's element type is the callback's StateT,
# the scanned values' scalar type is its ValueT, and the invalid combinations
# (prefix_op with initial_value or block_aggregate, a stateful callback without
# prefix_state, a stateless one with it, out= with a scalar) match no overload.
#
# NOTE: a scalar payload is a NumPy scalar, or a Python int/float when no
# callback fixes the value type. An exclusive scan with a non-sum operator and
# neither initial_value nor prefix_op is accepted here and rejected when the
# kernel compiles (an operator object cannot be told from "+" statically).
#
# NOTE (readable errors): when no overload matches, mypy checks the call against
# the first overload that matches it "after erasing types" and prints that
# check's errors; with none, it prints every overload (kilobytes). The stubs use
# this on purpose:
# - _StateArray defers prefix_state to mypy's second inference pass (the
#   Callable in its second member), so StateT comes from prefix_op alone and a
#   wrong state array is reported as `Argument "prefix_state" ... expected
#   "ndarray[tuple[int], dtype[<the callback's state type>]] | ..."`. The second
#   member also makes a scalar prefix_state resemble this overload; nothing
#   real is a generic[Callable[...]]. The first member is 1-D: numba-stubs
#   types cuda.local.array(1, ...) as ndarray[tuple[int], ...] and its element
#   as the scalar, so state[0] or a (1, 1) array is this one-line error too.
# - _ScanAlgorithmLike adds Sequence[Never] (no string is one) so that a
#   misspelled algorithm resembles the intended overload and mypy lists the
#   accepted literals.
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
]

# Value-restricted, not bounded: two arrays of different dtypes must not meet at
# their join (signedinteger[Any]); each call must hold for one exact scalar type.
StateT = TypeVar(
    "StateT",
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64,
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
_PyScanOpLike: TypeAlias = (
    _ScanOpCodes | ScanOperator | np.ufunc | Callable[[_PyScalarT, _PyScalarT], _PyScalarT]
)
_StatelessLike: TypeAlias = StatelessFunction[ValueT] | Callable[[ValueT], ValueT]
_InitialLike: TypeAlias = ValueT | int | float
_ScanAlgorithmLike: TypeAlias = _ScanAlgorithmCodes | Sequence[Never]
_StateArray: TypeAlias = np.ndarray[tuple[int], np.dtype[StateT]] | np.generic[Callable[[], StateT]]
_AnyPrefixOp: TypeAlias = StatefulFunction[Any, Any] | StatelessFunction[Any] | Callable[[Any], Any]

# Marker types of the diagnostic overloads (see the note at the top); not at run time.
class PrefixStateNeedsAStatefulPrefixOp(np.generic):
    def __new__(cls) -> Never: ...

class BlockAggregateCannotBeCombinedWithPrefixOp(np.generic):
    def __new__(cls) -> Never: ...

class InitialValueCannotBeCombinedWithPrefixOp(Protocol[_T_co]):
    def __abs__(self) -> _T_co: ...

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
def load(
    src: NDArray[ValueT],
    offset: int | np.integer[Any],
    items: NDArray[ValueT],
    *,
    valid_items: int | np.integer[Any] | None = None,
    oob_default: ValueT | int | float | None = None,
    algorithm: _TileAlgorithmCodes | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...
def store(
    dst: NDArray[ValueT],
    offset: int | np.integer[Any],
    items: NDArray[ValueT],
    *,
    valid_items: int | np.integer[Any] | None = None,
    algorithm: _TileAlgorithmCodes | None = None,
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> None: ...

# -------------------- scan

@overload
def scan(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
    *,
    mode: _ModeCodes,
    scan_op: _ScanOpLike[ValueT] = "+",
    initial_value: None = None,
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
def scan(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
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
def inclusive_scan(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
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
def exclusive_scan(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
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
    out: NDArray[ValueT] | None = None,
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
def exclusive_scan(
    values: ValueT,
    out: None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
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
