# SPDX-License-Identifier: Apache-2.0
"""User callbacks compiled by numba-cuda-mlir behind the pointer ABI.

The symbol and declaration are :func:`statefn.pointer_abi`'s, as under
numba-cuda; the definition is a small Python wrapper that numba-cuda-mlir
compiles with ``abi="c"`` to LTO-IR::

    def stateful(result, state, aggregate):   # CPointer operands
        result[0] = op(carray(state, 1), aggregate[0])
        return 0

The user's function is compiled as a device function of numba-cuda-mlir
(inlined into the wrapper). A callback that calls numba-cuda
``@cuda.jit(device=True)`` helpers cannot compile here: numba-cuda-mlir
calls only its own device functions and plain Python code it can type.
"""

from __future__ import annotations

import threading
from types import FunctionType
from typing import Any

import numpy as np

import statefn

from ._target import offline_target

__all__ = ["MlirCallbacks"]

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


def _wrapper(kind: str, op: Any, state_dtype: np.dtype[Any] | None) -> Any:
    from numba_cuda_mlir import cuda

    if kind == "stateful":
        dtype = state_dtype

        def stateful(result: Any, state: Any, aggregate: Any) -> int:
            result[0] = op(cuda.carray(state, 1, dtype), aggregate[0])
            return 0

        return stateful
    if kind == "stateless":

        def stateless(result: Any, aggregate: Any) -> int:
            result[0] = op(aggregate[0])
            return 0

        return stateless

    def binary(result: Any, lhs: Any, rhs: Any) -> int:
        result[0] = op(lhs[0], rhs[0])
        return 0

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
    return statefn.result_kind(resty, types, record=value_dtype.names is not None)


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
        wrapper = _wrapper(kind, op, state_dt)
        wrapper.__name__ = wrapper.__qualname__ = symbol
        value = types.CPointer(from_dtype(value_dtype))
        if kind == "stateful":
            argtypes: tuple[Any, ...] = (value, types.CPointer(from_dtype(state_dt)), value)
        elif kind == "stateless":
            argtypes = (value, value)
        else:
            argtypes = (value, value, value)
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
            returned = _result_kind(fn, kind, value_dtype, state_dt, cc)
            if returned is not None:
                raise statefn.result_error(descriptor, returned, value_dtype) from None
            label = repr(descriptor.name) if descriptor.name else getattr(fn, "__qualname__", fn)
            raise statefn.CallbackCompileError(
                f"could not compile {kind} callback {label} for value dtype {value_dtype} "
                f"(cc {cc[0]}.{cc[1]}) with numba-cuda-mlir: {type(exc).__name__}: {exc}\n"
                "Check that the function compiles in a numba-cuda-mlir kernel with these operand "
                "types (the state is a one-item array); helpers it calls must be plain Python "
                "functions or numba_cuda_mlir device functions, not numba-cuda ones."
            ) from exc
        return bytes(ltoir)
