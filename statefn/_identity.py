# SPDX-License-Identifier: Apache-2.0
"""Stable identity keys for descriptors: a versioned SHA-256 over a canonical encoding.

The key of a descriptor is identical in every process and on every machine
for the same program (same source, same Python minor version), and changes
when anything that changes the compiled callback changes. Nothing here uses
``hash()``, ``id()``, memory addresses or the ``repr()`` of arbitrary
objects. What is covered:

=====================  ==========================================================
input                  encoding
=====================  ==========================================================
schema                 ``_KEY_SCHEMA_VERSION``, mixed into every digest
descriptor kind        ``stateful`` / ``stateless`` / ``scan_op``
state dtype            ``dtype.str``, every field of a record (``none`` without state)
name                   the descriptor's ``name`` (user callables only)
built-in operator      the canonical string (``"+"``, ``"min"``, ...) and nothing else
callable               module + qualname, and its code (below), defaults,
                       (a functor class: its ``__call__`` function)
                       keyword defaults, closure cell contents, referenced globals
code object            name, argument counts, flags, ``co_code``, ``co_consts``
                       (recursively; nested code objects included; floats by
                       ``float.hex``), ``co_names``, ``co_varnames``, free and
                       cell variable names; never file names or line numbers
referenced globals     every name in ``co_names`` (of the code and its nested
                       code objects) found in ``__globals__``, by value
=====================  ==========================================================

Values are encoded by value when they are ``None``, bools, numbers, strings,
bytes, tuples/lists/sets/dicts of such, NumPy scalars, dtypes and arrays;
modules by name; classes, builtins and ufuncs by qualified name; enum members
by class and member name; plain functions recursively (a cycle guard encodes a
function met again on the current path by its qualified name only); Numba
dispatchers by fingerprinting their ``py_func`` (never their internals, which
is slow and unstable). Any other object is encoded by its type's module and
qualified name only: two such objects of one type are not told apart.
"""

from __future__ import annotations

import enum
import hashlib
import math
from types import BuiltinFunctionType, CellType, CodeType, FunctionType, ModuleType
from typing import Any

import numpy as np

from ._arity import callback_function, is_numba_dispatcher, python_function
from ._dtypes import dtype_key

__all__ = ["descriptor_key"]

#: Bump whenever the encoding below changes, so old keys never match new ones.
_KEY_SCHEMA_VERSION = 1


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _frame(tag: str, *parts: bytes) -> bytes:
    """Tag plus length-prefixed parts: unambiguous and order-preserving."""
    body = b"".join(len(p).to_bytes(8, "little") + p for p in parts)
    return _text(tag) + b"(" + len(parts).to_bytes(4, "little") + body + b")"


def _qualified(obj: Any) -> tuple[bytes, bytes]:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return _text(str(module)), _text(str(qualname))


def _float(value: float) -> bytes:
    return b"nan" if math.isnan(value) else _text(value.hex())


class _Fingerprinter:
    """Encodes one object graph; memoises functions within one key computation."""

    def __init__(self) -> None:
        # Functions are dict keys here only as an in-process memo; nothing about
        # their identity is ever encoded.
        self._memo: dict[FunctionType, bytes] = {}
        self._active: dict[FunctionType, None] = {}

    def value(self, obj: Any) -> bytes:
        if obj is None:
            return b"N"
        if isinstance(obj, enum.Enum):
            return _frame("enum", *_qualified(type(obj)), _text(obj.name))
        if isinstance(obj, bool):
            return _frame("bool", b"1" if obj else b"0")
        if isinstance(obj, int):
            return _frame("int", _text(str(int(obj))))
        if isinstance(obj, float):
            return _frame("float", _float(obj))
        if isinstance(obj, complex):
            return _frame("complex", _float(obj.real), _float(obj.imag))
        if isinstance(obj, str):
            return _frame("str", _text(obj))
        if isinstance(obj, bytes | bytearray):
            return _frame("bytes", bytes(obj))
        if isinstance(obj, tuple | list):
            return _frame(type(obj).__name__, *(self.value(item) for item in obj))
        if isinstance(obj, frozenset | set):
            return _frame("set", *sorted(self.value(item) for item in obj))
        if isinstance(obj, dict):
            items = sorted(self.value(k) + self.value(v) for k, v in obj.items())
            return _frame("dict", *items)
        return self._other(obj)

    def _other(self, obj: Any) -> bytes:
        if isinstance(obj, np.dtype):
            return self._dtype(obj)
        if isinstance(obj, np.generic):
            return _frame("npscalar", self._dtype(obj.dtype), obj.tobytes())
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                return _frame("ndarray-object", _text(str(obj.shape)))
            data = np.ascontiguousarray(obj).tobytes()
            return _frame("ndarray", self._dtype(obj.dtype), _text(str(obj.shape)), data)
        if isinstance(obj, CodeType):
            return self.code(obj)
        if isinstance(obj, FunctionType):
            return self.function(obj)
        if is_numba_dispatcher(obj):
            py_func = python_function(obj)
            inner = self.function(py_func) if py_func is not None else b"N"
            return _frame("dispatcher", inner)
        if isinstance(obj, ModuleType):
            return _frame("module", _text(obj.__name__))
        if isinstance(obj, type):
            return _frame("class", *_qualified(obj))
        if isinstance(obj, np.ufunc):
            return _frame("ufunc", _text(obj.__name__))
        if isinstance(obj, BuiltinFunctionType):
            return _frame("builtin", *_qualified(obj))
        # Documented limit: other objects are known by their type only.
        return _frame("object", *_qualified(type(obj)))

    def _dtype(self, dt: np.dtype[Any]) -> bytes:
        if dt.fields is not None or dt.subdtype is not None:
            return _frame("dtype", _text(dt.str), self.value(dt.descr))
        return _frame("dtype", _text(dt.str))

    def code(self, code: CodeType) -> bytes:
        """Encode a code object (never file names or line numbers)."""
        return _frame(
            "code",
            _text(code.co_name),
            _text(
                f"{code.co_argcount},{code.co_posonlyargcount},"
                f"{code.co_kwonlyargcount},{code.co_flags}"
            ),
            code.co_code,
            _frame("consts", *(self.value(c) for c in code.co_consts)),
            self.value(code.co_names),
            self.value(code.co_varnames),
            self.value(code.co_freevars),
            self.value(code.co_cellvars),
        )

    def function(self, fn: FunctionType) -> bytes:
        """Encode a plain function with its defaults, closure and globals."""
        cached = self._memo.get(fn)
        if cached is not None:
            return cached
        if fn in self._active:
            return _frame("recursive", *_qualified(fn))
        self._active[fn] = None
        try:
            encoded = _frame(
                "function",
                *_qualified(fn),
                self.code(fn.__code__),
                self.value(fn.__defaults__),
                self.value(fn.__kwdefaults__),
                _frame("closure", *(self._cell(cell) for cell in fn.__closure__ or ())),
                self._globals(fn),
            )
        finally:
            del self._active[fn]
        self._memo[fn] = encoded
        return encoded

    def _cell(self, cell: CellType) -> bytes:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell (a variable assigned later)
            return b"empty-cell"
        return self.value(contents)

    def _globals(self, fn: FunctionType) -> bytes:
        namespace = fn.__globals__
        parts = [
            _frame("global", _text(name), self.value(namespace[name]))
            for name in sorted(_referenced_names(fn.__code__))
            if name in namespace
        ]
        return _frame("globals", *parts)


def _referenced_names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _referenced_names(const)
    return names


def descriptor_key(
    kind: str,
    *,
    op: object = None,
    builtin: str | None = None,
    state_dtype: np.dtype[Any] | None = None,
    name: str | None = None,
) -> str:
    """Return the hex SHA-256 key of a descriptor.

    Parameters
    ----------
    kind : str
        ``"stateful"``, ``"stateless"`` or ``"scan_op"``.
    op : object
        The user callable (a function or a Numba dispatcher, whose ``py_func``
        is what is fingerprinted). Ignored when *builtin* is given.
    builtin : str or None
        The canonical built-in operator string; the key then depends on it only.
    state_dtype : numpy.dtype or None
        The state dtype of a stateful callback.
    name : str or None
        The descriptor's label; part of the key for user callables.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    schema = _text(str(_KEY_SCHEMA_VERSION))
    if builtin is not None:
        payload = _frame("statefn-builtin", schema, _text(kind), _text(builtin))
    else:
        printer = _Fingerprinter()
        fn = callback_function(op)
        target = printer.function(fn) if fn is not None else printer.value(op)
        payload = _frame(
            "statefn-callable",
            schema,
            _text(kind),
            _text(dtype_key(state_dtype)) if state_dtype is not None else b"none",
            printer.value(name),
            target,
        )
    return hashlib.sha256(payload).hexdigest()
