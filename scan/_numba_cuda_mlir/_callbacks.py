# SPDX-License-Identifier: Apache-2.0
"""User callbacks compiled by numba-cuda-mlir behind the pointer ABI.

The symbol and declaration are :func:`statefn.pointer_abi`'s, as under
numba-cuda; the definition is a small Python wrapper that numba-cuda-mlir
compiles with ``abi="c"`` to LTO-IR::

    def stateful(result, state, aggregate):   # CPointer operands
        result[0] = op(carray(state, 1), aggregate[0])
        return 0

Where the value or the state is a record, every operand is a ``void*``; a
record value reaches the user's function as a named tuple of its fields
(:func:`statefn.record_tuple`) and its result, a tuple of as many numbers, is
stored field by field (the intrinsics :func:`load_value` and
:func:`store_value`), as under numba-cuda.

The user's function is compiled as a device function of numba-cuda-mlir
(inlined into the wrapper). A callback that calls numba-cuda
``@cuda.jit(device=True)`` helpers cannot compile here: numba-cuda-mlir
calls only its own device functions and plain Python code it can type.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import FunctionType
from typing import Any

import numpy as np

import statefn

from ._target import offline_target

__all__ = [
    "MlirCallbacks",
    "field_pointer",
    "load_value",
    "real_result",
    "record_fields_of",
    "refused_results",
    "store_fields",
    "store_value",
    "value_type",
]

_MEMO: dict[tuple[Any, ...], tuple[str, str, bytes]] = {}
_LOCK = threading.Lock()


def _user_function(op: Any) -> FunctionType:
    fn = getattr(op, "py_func", op)
    if isinstance(fn, FunctionType):
        return fn
    call = vars(op).get("__call__") if isinstance(op, type) else None
    if isinstance(call, FunctionType):  # a functor class: __call__(self, aggregate), self the state
        return call
    raise TypeError(f"cannot compile {op!r} with numba-cuda-mlir: not a Python function")


def _renamed(fn: FunctionType, qualname: str) -> FunctionType:
    """A copy of `fn` under a unique name (internal symbols never collide across processes)."""
    clone = FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
    clone.__qualname__ = qualname
    clone.__module__ = fn.__module__
    return clone


def _wrapper(
    kind: str, op: Any, state_dtype: np.dtype[Any] | None, value_dtype: np.dtype[Any]
) -> Any:
    from numba_cuda_mlir import cuda

    # real values: a complex result is refused (numba-cuda-mlir would store its real part)
    real = real_result(value_dtype)
    if kind == "stateful":
        dtype = state_dtype

        def stateful(result: Any, state: Any, aggregate: Any) -> int:
            result[0] = real(op(cuda.carray(state, 1, dtype), aggregate[0]))
            return 0

        return stateful
    if kind == "stateless":

        def stateless(result: Any, aggregate: Any) -> int:
            result[0] = real(op(aggregate[0]))
            return 0

        return stateless

    def binary(result: Any, lhs: Any, rhs: Any) -> int:
        result[0] = real(op(lhs[0], rhs[0]))
        return 0

    return binary


def _record_wrapper(
    kind: str, op: Any, value_dtype: np.dtype[Any], state_dtype: np.dtype[Any] | None
) -> Any:
    """The wrapper where the value or the state is a record: every operand a ``void*``."""
    from numba_cuda_mlir import cuda

    load = load_value(value_dtype)
    store = store_value(value_dtype)
    if kind == "stateful":
        dtype = state_dtype

        def stateful(result: Any, state: Any, aggregate: Any) -> int:
            return store(result, op(cuda.carray(state, 1, dtype), load(aggregate)))  # type: ignore[no-any-return]

        return stateful
    if kind == "stateless":

        def stateless(result: Any, aggregate: Any) -> int:
            return store(result, op(load(aggregate)))  # type: ignore[no-any-return]

        return stateless

    def binary(result: Any, lhs: Any, rhs: Any) -> int:
        return store(result, op(load(lhs), load(rhs)))  # type: ignore[no-any-return]

    return binary


def _result_kind(
    fn: FunctionType,
    kind: str,
    value_dtype: np.dtype[Any],
    state_dtype: np.dtype[Any] | None,
    cc: tuple[int, int],
) -> str | None:
    """Why `fn`'s result cannot be a value, from its inferred return type (None: it can,
    or `fn` does not compile by itself). Asked only after a failed compile: for some
    results (an array) numba-cuda-mlir fails inside the wrapper with an internal error."""
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda import types
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

    value = from_dtype(value_dtype)
    operands: tuple[Any, ...] = {"stateless": (value,), "scan_op": (value, value)}.get(kind, ())
    if kind == "stateful":
        operands = (types.Array(from_dtype(state_dtype), 1, "C"), value)
    try:
        with offline_target(cc):
            _, resty = cuda.compile(
                _renamed(fn, f"{fn.__name__}__result"), operands, device=True, cc=cc
            )
    except Exception:
        return None
    return statefn.result_kind(
        resty, types, record=value_dtype.names is not None, complex_values=value_dtype.kind == "c"
    )


class MlirCallbacks:
    """Compiles user callbacks with numba-cuda-mlir (a :class:`scan._build.CallbackCompiler`)."""

    @property
    def frontend(self) -> str:
        """``numba-cuda-mlir <version>``: part of the callbacks' cache keys."""
        import numba_cuda_mlir

        return f"numba-cuda-mlir {getattr(numba_cuda_mlir, '__version__', 'unknown')}"

    def __call__(self, descriptor: Any, value_dtype: np.dtype[Any], cc: tuple[int, int]) -> Any:
        """Compile `descriptor` to the pointer ABI for `value_dtype` and `cc`."""
        from .._build import CompiledCallback

        symbol, decl, ltoir = self.lower(descriptor, value_dtype, cc)
        return CompiledCallback(symbol=symbol, c_decl=decl, ltoir=ltoir)

    def lower(
        self, descriptor: Any, value_dtype: np.dtype[Any], cc: tuple[int, int]
    ) -> tuple[str, str, bytes]:
        """(symbol, C declaration, LTO-IR) of `descriptor` (memoised in the process)."""
        symbol, decl = statefn.pointer_abi(descriptor, value_dtype)
        key = (symbol, cc)
        with _LOCK:
            found = _MEMO.get(key)
            if found is None:
                found = (symbol, decl, self._compile(descriptor, value_dtype, cc, symbol))
                _MEMO[key] = found
            return found

    @staticmethod
    def _compile(
        descriptor: Any, value_dtype: np.dtype[Any], cc: tuple[int, int], symbol: str
    ) -> bytes:
        from numba_cuda_mlir import cuda
        from numba_cuda_mlir.numba_cuda import types
        from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

        kind = descriptor.kind
        state_dt = descriptor.state_dtype if kind == "stateful" else None
        fn = _user_function(descriptor.op)
        op = cuda.jit(device=True, inline="always")(_renamed(fn, f"{symbol}__op"))
        records = value_dtype.names is not None or (
            state_dt is not None and state_dt.names is not None
        )
        if records:
            wrapper = _record_wrapper(kind, op, value_dtype, state_dt)
            argtypes: tuple[Any, ...] = (types.voidptr,) * (2 if kind == "stateless" else 3)
        else:
            wrapper = _wrapper(kind, op, state_dt, value_dtype)
            value = types.CPointer(from_dtype(value_dtype))
            if kind == "stateful":
                argtypes = (value, types.CPointer(from_dtype(state_dt)), value)
            elif kind == "stateless":
                argtypes = (value, value)
            else:
                argtypes = (value, value, value)
        wrapper.__name__ = wrapper.__qualname__ = symbol
        refused_results(reset=True)
        try:
            with offline_target(cc):
                ltoir, _ = cuda.compile(
                    wrapper,
                    types.int32(*argtypes),
                    device=True,
                    abi="c",
                    abi_info={"abi_name": symbol},
                    output="ltoir",
                    cc=cc,
                )
        except Exception as exc:
            refused = refused_results()
            returned = refused[0] if refused else _result_kind(fn, kind, value_dtype, state_dt, cc)
            if returned is not None:
                raise statefn.result_error(descriptor, returned, value_dtype) from None
            label = repr(descriptor.name) if descriptor.name else getattr(fn, "__qualname__", fn)
            dtypes = f"value dtype {statefn.dtype_name(value_dtype)}" + (
                f", state dtype {statefn.dtype_name(state_dt)}" if state_dt is not None else ""
            )
            operands = "the state is a one-item array"
            if value_dtype.names is not None:
                names = ", ".join(f.name for f in statefn.record_fields(value_dtype))
                operands = (
                    f"record operands arrive as named tuples of the record's fields ({names}), "
                    "the state is a one-item array, and the result must be a tuple of as many "
                    "numbers"
                )
            raise statefn.CallbackCompileError(
                f"could not compile {kind} callback {label} for {dtypes} "
                f"(cc {cc[0]}.{cc[1]}) with numba-cuda-mlir: {type(exc).__name__}: {exc}\n"
                f"Check that the function compiles in a numba-cuda-mlir kernel with these operand "
                f"types ({operands}); helpers it calls must be plain Python "
                "functions or numba_cuda_mlir device functions, not numba-cuda ones."
            ) from exc
        finally:
            refused_results(reset=True)
        return bytes(ltoir)


# ---------------------------------------------------------------------------
# record values behind a void*: loaded as named tuples, results stored by field


def record_fields_of(record: Any) -> list[tuple[int, Any]]:
    """(byte offset, Numba type) of each field of a Numba record type, in order."""
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

    dtype = np.dtype(record.dtype)
    return [(f.offset, from_dtype(f.dtype)) for f in statefn.record_fields(dtype)]


def field_pointer(ptr: Any, offset: int) -> Any:
    """`ptr` advanced by `offset` bytes (an MLIR ``!llvm.ptr``)."""
    from numba_cuda_mlir._mlir import ir
    from numba_cuda_mlir._mlir.dialects import arith
    from numba_cuda_mlir.lowering_utilities import llvm_ptr_add_bytes

    if offset == 0:
        return ptr
    return llvm_ptr_add_bytes(ptr, arith.constant(ir.IntegerType.get_signless(64), offset))


def store_fields(ptr: Any, record: Any, items: Sequence[Any], item_types: Sequence[Any]) -> None:
    """Store each item, converted to its field's type, at the field's offset from `ptr`."""
    from numba_cuda_mlir._mlir.dialects import llvm
    from numba_cuda_mlir.lowering_utilities import get_conversion_signedness, value_to_storage
    from numba_cuda_mlir.numba_cuda import types

    fields = record_fields_of(record)
    for (offset, field_ty), value, src in zip(fields, items, item_types, strict=True):
        signed = get_conversion_signedness(types.unliteral(src), field_ty)
        llvm.store(value_to_storage(field_ty, value, signed=signed), field_pointer(ptr, offset))


def value_type(dtype: np.dtype[Any]) -> Any:
    """The Numba type a callback sees a value of `dtype` as (a named tuple for records)."""
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype
    from numba_cuda_mlir.numba_cuda.typing.typeof import typeof

    if dtype.names is None:
        return from_dtype(dtype)
    fields = statefn.record_fields(dtype)
    return typeof(statefn.record_tuple(dtype)(*(f.dtype.type(0) for f in fields)))


_intrinsics: dict[tuple[str, str], Any] = {}
_intrinsics_lock = threading.Lock()
_refused = threading.local()


def refused_results(*, reset: bool = False) -> list[str]:
    """How :func:`store_value` named the results it refused in this thread: what a failed
    callback compile returned instead of a value (`reset`: then forget them)."""
    found: list[str] | None = getattr(_refused, "results", None)
    if found is None or reset:
        _refused.results = []
    return found if found is not None else _refused.results


def _cached(dtype: np.dtype[Any], make: Any) -> Any:
    # one intrinsic per maker and value dtype: each is registered with the typing for
    # good, and the typing context learns of it before the callback compiles
    from numba_cuda_mlir import extending

    key = (make.__name__, statefn.dtype_key(dtype))
    with _intrinsics_lock:
        found = _intrinsics.get(key)
        if found is None:
            found = _intrinsics[key] = make(dtype)
            extending.refresh_registries(
                typing=True, target=False, include_uninitialized_cuda=False
            )
        return found


def load_value(dtype: np.dtype[Any]) -> Any:
    """An intrinsic ``load(ptr)``: the value of `dtype` at a ``void*`` (records as named tuples)."""
    return _cached(dtype, _make_load)


def real_result(dtype: np.dtype[Any]) -> Any:
    """An intrinsic ``real(value)`` returning `value`; for real values of `dtype` it refuses
    a complex one.

    Its typing records the refusal (:func:`refused_results`) and fails the
    compile, as :func:`store_value` does for results that cannot be values.
    """
    kind = np.dtype(np.complex128 if dtype.kind == "c" else np.float64)
    return _cached(kind, _make_real)


def _make_real(dtype: np.dtype[Any]) -> Any:
    from numba_cuda_mlir import extending
    from numba_cuda_mlir.numba_cuda import types
    from numba_cuda_mlir.numba_cuda.typing.templates import signature

    @extending.intrinsic  # type: ignore[untyped-decorator]
    def scan_real_result(typingctx: Any, value: Any) -> Any:
        if dtype.kind != "c" and isinstance(value, types.Complex):
            refused_results().append(f"complex:{value}")
            return None

        def codegen(lower: Any, target: Any, args: Any, kws: Any) -> None:
            lower.store_var(target, lower.load_var(args[0]))

        return signature(value, value), codegen

    return scan_real_result


def store_value(dtype: np.dtype[Any]) -> Any:
    """An intrinsic ``store(ptr, value)`` returning 0: `value` converted to `dtype` at a ``void*``.

    A result that cannot become a value of `dtype` (:func:`statefn.result_kind`,
    or a tuple of another length than the record's fields) is not typed, so the
    compile fails; :func:`refused_results` names it.
    """
    return _cached(dtype, _make_store)


def _make_load(dtype: np.dtype[Any]) -> Any:
    from numba_cuda_mlir import extending
    from numba_cuda_mlir._mlir.dialects import llvm
    from numba_cuda_mlir.lowering_utilities import get_storage_type, storage_to_value
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype
    from numba_cuda_mlir.numba_cuda.typing.templates import signature

    record = from_dtype(dtype)
    result = value_type(dtype)

    def load(ptr: Any, ty: Any) -> Any:
        return storage_to_value(ty, llvm.load(get_storage_type(ty), ptr))

    @extending.intrinsic  # type: ignore[untyped-decorator]
    def scan_load_value(typingctx: Any, ptr: Any) -> Any:
        def codegen(lower: Any, target: Any, args: Any, kws: Any) -> None:
            p = lower.load_var(args[0])
            if dtype.names is None:
                loaded = load(p, record)
            else:
                loaded = tuple(
                    load(field_pointer(p, off), ty) for off, ty in record_fields_of(record)
                )
            lower.store_var(target, loaded)

        return signature(result, ptr), codegen

    return scan_load_value


def _make_store(dtype: np.dtype[Any]) -> Any:
    from numba_cuda_mlir import extending
    from numba_cuda_mlir._mlir import ir
    from numba_cuda_mlir._mlir.dialects import arith, llvm
    from numba_cuda_mlir.lowering_utilities import get_conversion_signedness, value_to_storage
    from numba_cuda_mlir.numba_cuda import types
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype
    from numba_cuda_mlir.numba_cuda.typing.templates import signature

    record = from_dtype(dtype)
    is_record = dtype.names is not None
    nfields = len(dtype.names or ())

    @extending.intrinsic  # type: ignore[untyped-decorator]
    def scan_store_value(typingctx: Any, ptr: Any, value: Any) -> Any:
        returned = statefn.result_kind(value, types, record=is_record)
        if returned is None and is_record and len(value) != nfields:
            returned = f"a tuple of {len(value)} items"
        if returned is not None:
            refused_results().append(returned)
            return None

        def codegen(lower: Any, target: Any, args: Any, kws: Any) -> None:
            p = lower.load_var(args[0])
            v = lower.load_var(args[1])
            if is_record:
                store_fields(p, record, tuple(v), tuple(value.types))
            else:
                signed = get_conversion_signedness(types.unliteral(value), record)
                llvm.store(value_to_storage(record, v, signed=signed), p)
            lower.store_var(target, arith.constant(ir.IntegerType.get_signless(32), 0))

        return signature(types.int32, ptr, value), codegen

    return scan_store_value
