# SPDX-License-Identifier: Apache-2.0
"""The pointer ABI a callback lowers to: symbol, C declaration, result errors.

Pure description, no compiler: every front end compiles callbacks with its own
Numba (``scan._numba_cuda._callbacks``, ``scan._numba_cuda_mlir._callbacks``)
behind the ABI described here, and this module imports no Numba at all.

Every callback lowers to one ``extern "C" __device__`` function whose operands
are all passed by pointer and which returns an ``int`` status (always 0)::

    int SYM(void* result, void* state, const void* aggregate);  // stateful
    int SYM(void* result, const void* aggregate);               // stateless
    int SYM(void* result, const void* lhs, const void* rhs);    // scan operator

The result goes through a pointer rather than the return value, and the
function returns a real ``int``, because Numba lowers a ``void`` C-ABI
function to one that returns a pointer (``i8*``): a C++ ``void`` declaration
would then disagree with the definition.

The symbol ``statefn_<kind>_<key[:20]>_<value code>_<state code or none>`` is
unique per (key, value dtype, state dtype).
"""

from __future__ import annotations

import linecache
from types import FunctionType
from typing import Any

import numpy as np
import numpy.typing as npt
from attrs import field, frozen

from ._arity import callback_function
from ._descriptors import Descriptor, StatefulFunction
from ._dtypes import as_value_dtype, dtype_code, dtype_key, dtype_name, is_record, record_fields
from ._errors import CallbackCompileError, describe_callable

__all__ = [
    "CallbackABI",
    "LoweredCallback",
    "callback_abi",
    "pointer_abi",
    "result_error",
    "result_kind",
]

_PARAMS: dict[str, str] = {
    "stateful": "void* result, void* state, const void* aggregate",
    "stateless": "void* result, const void* aggregate",
    "scan_op": "void* result, const void* lhs, const void* rhs",
}


@frozen
class LoweredCallback:
    """A callback compiled to the pointer ABI for one value dtype and target.

    Attributes
    ----------
    symbol : str
        The exported ``extern "C"`` symbol, a valid C identifier.
    c_decl : str
        The C++ declaration of the symbol, ready to paste into a translation unit.
    ltoir : bytes
        The NVVM LTO-IR defining the symbol.
    kind : str
        ``"stateful"``, ``"stateless"`` or ``"scan_op"``.
    value_dtype : numpy.dtype
        The dtype of the aggregate, operands and result.
    state_dtype : numpy.dtype or None
        The state dtype of a stateful callback, else None.

    .. versionadded:: 0.1
    """

    symbol: str
    c_decl: str
    ltoir: bytes = field(repr=lambda data: f"<{len(data)} bytes>")
    kind: str
    value_dtype: np.dtype[Any]
    state_dtype: np.dtype[Any] | None

    @property
    def ltoir_name(self) -> str:
        """A file-like name for the LTO-IR, for linkers' messages."""
        return f"{self.symbol}.ltoir"


@frozen
class CallbackABI:
    """What a front end needs to compile one callback behind the pointer ABI.

    Made by :func:`callback_abi`; pure data, nothing is compiled.

    Attributes
    ----------
    symbol, c_decl : str
        :func:`pointer_abi`'s symbol and C++ declaration.
    kind : str
        ``"stateful"``, ``"stateless"`` or ``"scan_op"``.
    value_dtype : numpy.dtype
        The canonical value dtype.
    state_dtype : numpy.dtype or None
        The state dtype of a stateful callback, else None.
    cc : tuple of int
        The target compute capability ``(major, minor)``.
    function : types.FunctionType
        The Python function to compile (a functor class's ``__call__``).
    label : str
        How compile errors name the callback: its name, else ``module.qualname``.
    key : tuple
        (descriptor key, kind, value dtype key, state dtype code, cc): equal
        keys ask for the same compiled code, so front ends memoise on it.

    .. versionadded:: 0.2
    """

    symbol: str
    c_decl: str
    kind: str
    value_dtype: np.dtype[Any]
    state_dtype: np.dtype[Any] | None
    cc: tuple[int, int]
    function: FunctionType
    label: str
    key: tuple[str, str, str, str, tuple[int, int]]


_ROLES = {
    "stateful": "stateful prefix callback",
    "stateless": "stateless prefix callback",
    "scan_op": "scan operator",
}


def result_error(
    descriptor: Descriptor, returned: str, value_dtype: np.dtype[Any]
) -> CallbackCompileError:
    """The error for a callback whose result cannot be a scan value, in both backends' words.

    *returned* is ``"none"`` (no return statement, or a path without one),
    ``"array"``, ``"record"``, ``"complex:<its dtype>"`` (a complex number
    for real values), or a short description of another result. The message
    names the callback and the line of its ``def`` as a traceback does.
    """
    fn = callback_function(descriptor.op)
    code = getattr(fn, "__code__", None)
    label = describe_callable(fn if fn is not None else descriptor.op)
    if descriptor.name is not None:
        label = f"{descriptor.name!r} ({label})"
    where = ""
    if code is not None:
        line = code.co_firstlineno
        for skip in range(20):  # past decorators, to the def line
            text = linecache.getline(code.co_filename, line + skip).strip()
            if text.startswith(("def ", "async def ")) or "lambda" in text:
                line += skip
                break
        text = linecache.getline(code.co_filename, line).strip()
        where = f'\n  File "{code.co_filename}", line {line}, in {code.co_name}'
        where += f"\n    {text}" if text else ""
    role = _ROLES[descriptor.kind]
    if is_record(value_dtype):
        names = [f.name for f in record_fields(value_dtype)]
        expected = (
            f"a tuple of {len(names)} numbers for {dtype_name(value_dtype)} values (the "
            f"fields {', '.join(names)} in order)"
        )
        example = f"return ({', '.join(names)})"
    else:
        expected = f"a number (converted to {dtype_name(value_dtype)}, the values' dtype)"
        example = "return prefix" if descriptor.kind != "scan_op" else "return a + b"
    if returned == "none":
        got = "returned None: it has no return statement, or a path through it ends without one"
        fix = f"{expected} on every path, e.g. {example}"
    elif returned == "array":
        got = "returned an array (the state array itself?)"
        fix = f"{expected}, e.g. state[0] or a number computed from it, not state"
    elif returned == "record" and not is_record(value_dtype):
        got = "returned a record (such as state[0] of a record state)"
        fix = f"{expected}: one of its fields (state[0].total) or a number computed from them"
    elif returned.startswith("complex:"):
        got = (
            f"returned a {returned.partition(':')[2]} number but the values are "
            f"{dtype_name(value_dtype)}: converting it would drop its imaginary part"
        )
        fix = (
            "a real number: its real part (prefix.real) or its magnitude (abs(prefix)) if "
            "that is what the scan needs, or scan complex values (load them into complex64 "
            "items)"
        )
    else:
        got = f"returned {'a record' if returned == 'record' else returned}"
        fix = f"{expected}, e.g. {example}"
    return CallbackCompileError(f"{role} {label} {got}. Return {fix}.{where}")


def _check_cc(cc: object) -> tuple[int, int]:
    if (
        isinstance(cc, tuple)
        and len(cc) == 2
        and all(isinstance(part, int) and not isinstance(part, bool) for part in cc)
    ):
        return (int(cc[0]), int(cc[1]))
    raise TypeError(
        f"cc must be a (major, minor) tuple of ints such as (9, 0); got {cc!r}. "
        "Pass the target's compute capability explicitly."
    )


def pointer_abi(descriptor: Descriptor, value_dtype: npt.DTypeLike) -> tuple[str, str]:
    """The ``extern "C"`` symbol and C++ declaration `descriptor` lowers to for `value_dtype`.

    Known before anything is compiled (generated code can declare the callback
    while its compilation runs elsewhere); every front end's compiler defines
    exactly this symbol. Unique per (key, kind, value dtype, state dtype).

    Parameters
    ----------
    descriptor : StatefulFunction, StatelessFunction or ScanOperator
    value_dtype : dtype-like

    Returns
    -------
    tuple of str
        ``(symbol, declaration)``.

    .. versionadded:: 0.1
    """
    value_dt = as_value_dtype(value_dtype, what="value dtype")
    state_dt = descriptor.state_dtype if isinstance(descriptor, StatefulFunction) else None
    kind = descriptor.kind
    symbol = f"statefn_{kind}_{descriptor.key[:20]}_{dtype_code(value_dt)}_{dtype_code(state_dt)}"
    return symbol, f'extern "C" __device__ int {symbol}({_PARAMS[kind]});'


def result_kind(got: Any, types: Any, *, record: bool, complex_values: bool = True) -> str | None:
    """How :func:`result_error` names a callback's inferred return type *got*, or
    None when it can become a value (*types*: the front end's Numba types module).

    A complex result is ``"complex:<type>"`` unless the values are complex
    (*complex_values*).
    """
    if got == types.none or isinstance(got, types.NoneType | types.Optional):
        return "none"
    if not complex_values and isinstance(got, types.Complex):
        return f"complex:{got}"
    if isinstance(got, types.Array):
        return "array"
    if isinstance(got, types.Record):
        return "record"
    if not isinstance(got, types.BaseTuple if record else types.Number | types.Boolean):
        return f"a value of type {got}"
    return None


def callback_abi(
    descriptor: Descriptor, value_dtype: npt.DTypeLike, *, cc: tuple[int, int]
) -> CallbackABI:
    """Describe how `descriptor` lowers for `value_dtype` and `cc`, before compiling it.

    Parameters
    ----------
    descriptor : StatefulFunction, StatelessFunction or ScanOperator
        A user callback (front ends refuse built-in operators first).
    value_dtype : dtype-like
        The dtype of the scanned values (one of :data:`statefn.STATE_DTYPES`).
    cc : tuple of int
        Target compute capability, e.g. ``(9, 0)``.

    Returns
    -------
    CallbackABI

    Raises
    ------
    StateDtypeError
        For an unsupported `value_dtype`.
    TypeError
        For a `cc` that is not a ``(major, minor)`` tuple of ints.

    .. versionadded:: 0.2
    """
    value_dt = as_value_dtype(value_dtype, what="value dtype")
    target = _check_cc(cc)
    state_dt = descriptor.state_dtype if isinstance(descriptor, StatefulFunction) else None
    kind = descriptor.kind
    symbol, c_decl = pointer_abi(descriptor, value_dt)
    fn = callback_function(descriptor.op)
    if fn is None:  # pragma: no cover - descriptors validate this at construction
        raise TypeError(f"descriptor op {describe_callable(descriptor.op)} is not a function")
    name = descriptor.name
    return CallbackABI(
        symbol=symbol,
        c_decl=c_decl,
        kind=kind,
        value_dtype=value_dt,
        state_dtype=state_dt,
        cc=target,
        function=fn,
        label=repr(name) if name is not None else describe_callable(fn),
        key=(descriptor.key, kind, dtype_key(value_dt), dtype_code(state_dt), target),
    )
