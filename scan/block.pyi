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

from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeAlias, TypeVar, overload

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
    np.float16, np.float32, np.float64,
)  # fmt: skip
ValueT = TypeVar(
    "ValueT",
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64,
)  # fmt: skip
_PyScalarT = TypeVar("_PyScalarT", int, float)

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
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# -------------------- inclusive_sum

@overload
def inclusive_sum(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
    *,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# -------------------- exclusive_sum

@overload
def exclusive_sum(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
    *,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# -------------------- inclusive_scan

@overload
def inclusive_scan(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...

# -------------------- exclusive_scan

@overload
def exclusive_scan(
    values: NDArray[ValueT],
    out: NDArray[ValueT] | None = None,
    *,
    scan_op: _ScanOpLike[ValueT],
    initial_value: None = None,
    prefix_op: StatefulFunction[StateT, ValueT],
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    prefix_state: NDArray[StateT],
    block_aggregate: None = None,
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
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
    algorithm: _ScanAlgorithmCodes = "raking",
    temp_storage: _TempStorage | None = None,
    threads: _Threads | None = None,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
) -> _PyScalarT: ...
