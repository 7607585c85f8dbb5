# SPDX-License-Identifier: Apache-2.0
"""Stable identity keys for descriptors: a versioned SHA-256 tree over what a callback reads.

The key of a descriptor is identical in every process and on every machine
for the same program (same source, same Python minor version), and changes
when anything the compiler freezes into the callback changes. Nothing here
uses ``hash()``, ``id()``, memory addresses or the ``repr()`` of arbitrary
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
                       keyword defaults, closure cell contents, the globals it loads
code object            name, argument counts, flags, ``co_code``, ``co_consts``
                       (recursively; nested code objects included; floats by
                       ``float.hex``), ``co_names``, ``co_varnames``, free and
                       cell variable names; never file names or line numbers
globals it loads       every name a ``LOAD_GLOBAL`` (or ``LOAD_NAME``) of the code
                       or of its nested code objects reads, found in
                       ``__globals__``, by value; for a module, also the values
                       of the attributes the code reads off it (``cfg.SCALE``).
                       Attribute and method names (``state[0].a``, ``x.shape``)
                       are not globals: a global that only shares such a name
                       is never read
=====================  ==========================================================

Each value is encoded as a 32-byte SHA-256 digest of a tag and its parts'
length-prefixed digests, so large data is hashed once, in place (arrays
through the buffer protocol), and never copied into a parent's encoding.
Within one key computation every object is encoded once.

Values are encoded by value when they are ``None``, bools, numbers, strings,
bytes, tuples/lists/sets/dicts of such, NumPy scalars, dtypes and arrays (not
of ``object`` dtype); modules by name; classes, builtins and ufuncs by
qualified name (a named tuple class with its fields, an enum class with its
members); enum members by class and member name; statefn descriptors by key;
plain functions recursively (a cycle guard encodes a function met again on the
current path by its qualified name only); Numba dispatchers by their
``py_func`` and options; Numba's own objects (types such as ``int32``) by
their type and name. Any other object a callback reads is refused with
:class:`~statefn.UnkeyableValueError`, which names it: two such objects could
not be told apart, and a key that cannot tell two programs apart could hand
one the other's compiled code. Attributes read off a module (library modules
such as ``numpy`` or ``numba.cuda`` included) are not refused: an object
there that is none of the above is known by its type.
"""

from __future__ import annotations

import dis
import enum
import functools
import hashlib
import math
import os
import sys
import sysconfig
from collections.abc import Iterator
from types import BuiltinFunctionType, CellType, CodeType, FunctionType, ModuleType
from typing import Any

import numpy as np

from ._arity import callback_function, is_numba_dispatcher, python_function
from ._dtypes import dtype_key
from ._errors import UnkeyableValueError

__all__ = ["descriptor_key", "loaded_globals"]

#: Bump whenever the encoding below changes, so old keys never match new ones.
#: 2: digest tree; only the globals a function loads (and module attributes it
#: reads); unkeyable objects refused; dispatcher options.
_KEY_SCHEMA_VERSION = 2

# arrays are hashed in blocks of about this many bytes when not contiguous
_BLOCK_BYTES = 1 << 24

_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _frame(tag: str, *parts: bytes) -> bytes:
    """The digest of a tag and its length-prefixed parts: unambiguous and order-preserving."""
    h = hashlib.sha256(_text(tag))
    h.update(len(parts).to_bytes(4, "little"))
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _qualified(obj: Any) -> tuple[bytes, bytes]:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return _text(str(module)), _text(str(qualname))


def _label(obj: Any) -> str:
    module, qualname = _qualified(obj)
    return f"{module.decode()}.{qualname.decode()}"


def _float(value: float) -> bytes:
    return b"nan" if math.isnan(value) else _text(value.hex())


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(sorted(root + os.sep for root in roots))


@functools.lru_cache(maxsize=4096)
def _installed_module(name: str) -> bool:
    if name.partition(".")[0] in sys.stdlib_module_names:
        return True
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    return isinstance(path, str) and os.path.realpath(path).startswith(_library_roots())


def _installed(fn: FunctionType) -> bool:
    """Whether *fn* is the standard library's or an installed package's, not the program's.

    Such functions are keyed by their qualified name: their code belongs to a
    release, and walking their globals would reach the library's own state.
    """
    return _installed_module(str(getattr(fn, "__module__", "") or ""))


@functools.lru_cache(maxsize=4096)
def loaded_globals(code: CodeType) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The global names *code* loads, each with the attribute chains read off it.

    Only ``LOAD_GLOBAL`` and ``LOAD_NAME`` instructions count, in *code* and
    in the code objects nested in it (inner functions, lambdas,
    comprehensions); names used as attributes or methods (``co_names`` holds
    those too) do not. After each load, the attribute loads that follow it
    directly (``cfg.SCALE``, ``np.float32``) are recorded as a chain, so the
    value of a module attribute the code reads can be keyed as well.

    Parameters
    ----------
    code : types.CodeType

    Returns
    -------
    tuple of (str, tuple of str)
        ``(name, chain)`` pairs in first-seen order, each pair once; a name
        loaded with no attribute read after it has the empty chain.
    """
    seen: dict[tuple[str, tuple[str, ...]], None] = {}
    for unit in _code_objects(code):
        instructions = list(dis.get_instructions(unit))
        for i, ins in enumerate(instructions):
            if ins.opname not in _GLOBAL_LOADS:
                continue
            chain: list[str] = []
            for nxt in instructions[i + 1 :]:
                if nxt.opname not in _ATTRIBUTE_LOADS:
                    break
                chain.append(str(nxt.argval))
            seen.setdefault((str(ins.argval), tuple(chain)), None)
    return tuple(seen)


def _code_objects(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_objects(const)


class _Fingerprinter:
    """Encodes one object graph as digests; each object once per key computation."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        # id -> (the object, kept alive so its id stays its own, and its digest)
        self._memo: dict[int, tuple[Any, bytes]] = {}
        self._active: set[int] = set()

    # -- values ---------------------------------------------------------------

    def value(self, obj: Any, where: str, *, strict: bool = True) -> bytes:
        """The digest of *obj*, read by the callback as *where* (for messages)."""
        if obj is None:
            return b"N"
        if isinstance(obj, bool):
            return b"T" if obj else b"F"
        if isinstance(obj, int | float | str) and not isinstance(obj, enum.Enum):
            return self._small(obj)
        found = self._memo.get(id(obj))
        if found is not None and found[0] is obj:
            return found[1]
        digest = self._encode(obj, where, strict)
        self._memo[id(obj)] = (obj, digest)
        return digest

    def _small(self, obj: int | float | str) -> bytes:
        if isinstance(obj, int):
            return _frame("int", _text(str(int(obj))))
        if isinstance(obj, float):
            return _frame("float", _float(obj))
        return _frame("str", _text(obj))

    def _encode(self, obj: Any, where: str, strict: bool) -> bytes:
        if isinstance(obj, enum.Enum):
            return _frame("enum", *_qualified(type(obj)), _text(obj.name))
        if isinstance(obj, complex):
            return _frame("complex", _float(obj.real), _float(obj.imag))
        if isinstance(obj, bytes | bytearray):
            return _frame("bytes", hashlib.sha256(obj).digest())
        if isinstance(obj, tuple | list):
            kind = type(obj)
            head = (
                _text(kind.__name__)
                if kind in (tuple, list)
                else _frame("class", *_qualified(kind))
            )
            items = (self.value(item, f"{where}[{i}]", strict=strict) for i, item in enumerate(obj))
            return _frame("sequence", head, *items)
        if isinstance(obj, frozenset | set):
            return _frame("set", *sorted(self.value(item, where, strict=strict) for item in obj))
        if isinstance(obj, dict):
            pairs = sorted(
                _frame(
                    "item",
                    self.value(k, where, strict=strict),
                    self.value(v, f"{where}[{k!r}]", strict=strict),
                )
                for k, v in obj.items()
            )
            return _frame("dict", *pairs)
        if isinstance(obj, np.dtype):
            return self._dtype(obj)
        if isinstance(obj, np.generic):
            if obj.dtype.hasobject:
                raise self._refuse(obj, where, "a NumPy object scalar")
            return _frame("npscalar", self._dtype(obj.dtype), obj.tobytes())
        if isinstance(obj, np.ndarray):
            return self._array(obj, where)
        if isinstance(obj, CodeType):
            return self.code(obj)
        if isinstance(obj, FunctionType):
            if _installed(obj):
                return _frame("library-function", *_qualified(obj))
            return self.function(obj)
        if is_numba_dispatcher(obj):
            return self._dispatcher(obj, where)
        if isinstance(obj, ModuleType):
            return _frame("module", _text(obj.__name__))
        if isinstance(obj, type):
            return self._class(obj, where)
        if isinstance(obj, np.ufunc):
            return _frame("ufunc", _text(obj.__name__))
        if isinstance(obj, BuiltinFunctionType):
            return _frame("builtin", *_qualified(obj))
        key = getattr(obj, "key", None)
        if type(obj).__module__.startswith("statefn.") and isinstance(key, str):
            return _frame("descriptor", _text(type(obj).__name__), _text(key))
        if type(obj).__module__.startswith(("numba.", "numba_cuda", "llvmlite.")):
            # Numba's own objects (types such as int32, stubs): their type and name
            name = getattr(obj, "name", None)
            return _frame("numba", *_qualified(type(obj)), _text(str(name)))
        if not strict:
            return _frame("object", *_qualified(type(obj)))
        raise self._refuse(obj, where, f"an object of type {_label(type(obj))}")

    def _refuse(self, obj: Any, where: str, what: str) -> UnkeyableValueError:
        return UnkeyableValueError(
            f"{self._owner} reads {where}, {what}, which a callback key cannot encode exactly "
            "(two different values could get one key and share compiled code). Pass what the "
            "callback needs as numbers, strings, tuples, NumPy scalars, dtypes or arrays "
            "(of a numeric dtype), or as functions; or make it a default argument of "
            "such a type."
        )

    def _dtype(self, dt: np.dtype[Any]) -> bytes:
        if dt.fields is not None or dt.subdtype is not None:
            return _frame("dtype", _text(dt.str), self.value(dt.descr, "dtype"))
        return _frame("dtype", _text(dt.str))

    def _array(self, arr: np.ndarray[Any, Any], where: str) -> bytes:
        if arr.dtype.hasobject:
            raise self._refuse(arr, where, "a NumPy array of object dtype")
        h = hashlib.sha256(self._dtype(arr.dtype))
        h.update(_text(str(arr.shape)))
        if arr.flags.c_contiguous:
            h.update(arr.reshape(-1).view(np.uint8).data)
        else:  # copied a block of the first axis at a time, never whole
            row_bytes = max(1, arr[0].nbytes if arr.shape[0] else 1)
            step = max(1, _BLOCK_BYTES // row_bytes)
            for start in range(0, arr.shape[0], step):
                block = np.ascontiguousarray(arr[start : start + step])
                h.update(block.reshape(-1).view(np.uint8).data)
        return _frame("ndarray", h.digest())

    def _class(self, cls: type, where: str) -> bytes:
        parts = list(_qualified(cls))
        fields = getattr(cls, "_fields", None)
        if issubclass(cls, tuple) and isinstance(fields, tuple):  # a named tuple class
            parts.append(self.value(fields, where))
        elif issubclass(cls, enum.Enum):
            members = tuple((m.name, m.value) for m in cls)
            parts.append(self.value(members, where, strict=False))
        return _frame("class", *parts)

    def _dispatcher(self, obj: Any, where: str) -> bytes:
        py_func = python_function(obj)
        inner = self.function(py_func) if py_func is not None else b"N"
        options = getattr(obj, "targetoptions", None)
        encoded = (
            self.value(dict(options), where, strict=False) if isinstance(options, dict) else b"N"
        )
        return _frame("dispatcher", inner, encoded)

    # -- code -----------------------------------------------------------------

    def code(self, code: CodeType) -> bytes:
        """Encode a code object (never file names or line numbers)."""
        found = self._memo.get(id(code))
        if found is not None and found[0] is code:
            return found[1]
        digest = _frame(
            "code",
            _text(code.co_name),
            _text(
                f"{code.co_argcount},{code.co_posonlyargcount},"
                f"{code.co_kwonlyargcount},{code.co_flags}"
            ),
            code.co_code,
            _frame("consts", *(self._const(c) for c in code.co_consts)),
            _frame("names", *map(_text, code.co_names)),
            _frame("varnames", *map(_text, code.co_varnames)),
            _frame("freevars", *map(_text, code.co_freevars)),
            _frame("cellvars", *map(_text, code.co_cellvars)),
        )
        self._memo[id(code)] = (code, digest)
        return digest

    def _const(self, const: Any) -> bytes:
        # constants are literals of the code: None, numbers, strings, bytes,
        # tuples and frozensets of such, code objects, Ellipsis
        if const is Ellipsis:
            return b"..."
        return self.value(const, "a constant", strict=False)

    def function(self, fn: FunctionType) -> bytes:
        """Encode a plain function with its defaults, closure and the globals it loads."""
        found = self._memo.get(id(fn))
        if found is not None and found[0] is fn:
            return found[1]
        if id(fn) in self._active:
            return _frame("recursive", *_qualified(fn))
        self._active.add(id(fn))
        label = _label(fn)
        try:
            code = fn.__code__
            closure = (
                self._cell(cell, f"closure variable {name!r} of {label}")
                for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True)
            )
            digest = _frame(
                "function",
                *_qualified(fn),
                self.code(code),
                self.value(fn.__defaults__, f"the defaults of {label}"),
                self.value(fn.__kwdefaults__, f"the keyword defaults of {label}"),
                _frame("closure", *closure),
                self._globals(fn, label),
            )
        finally:
            self._active.discard(id(fn))
        self._memo[id(fn)] = (fn, digest)
        return digest

    def _cell(self, cell: CellType, where: str) -> bytes:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell (a variable assigned later)
            return b"empty-cell"
        return self.value(contents, where)

    def _globals(self, fn: FunctionType, label: str) -> bytes:
        namespace = fn.__globals__
        builtins = namespace.get("__builtins__")
        if isinstance(builtins, ModuleType):
            builtins = vars(builtins)
        parts = []
        for name, chain in sorted(loaded_globals(fn.__code__)):
            if name in namespace:
                value = namespace[name]
            elif isinstance(builtins, dict) and name in builtins:
                continue  # len, range, min: the interpreter's, not the program's
            else:
                parts.append(_frame("unbound", _text(name)))
                continue
            where = f"global {name!r} (in {label})"
            encoded = [self.value(value, where)]
            attribute = value
            for i, attr in enumerate(chain):
                if not isinstance(attribute, ModuleType):
                    break  # attributes of other values are part of their value
                attribute = getattr(attribute, attr, None)
                dotted = ".".join((name, *chain[: i + 1]))
                encoded.append(
                    _frame("attr", _text(attr), self.value(attribute, dotted, strict=False))
                )
            parts.append(_frame("global", _text(name), *encoded))
        return _frame("globals", *parts)


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

    Raises
    ------
    UnkeyableValueError
        When the callable reads (as a global, a closure variable or a default)
        an object the key cannot encode exactly.
    """
    schema = _text(str(_KEY_SCHEMA_VERSION))
    if builtin is not None:
        payload = _frame("statefn-builtin", schema, _text(kind), _text(builtin))
        return payload.hex()
    fn = callback_function(op)
    owner = f"{kind} callback {_label(fn if fn is not None else op)}"
    if name is not None:
        owner += f" ({name!r})"
    printer = _Fingerprinter(owner)
    target = printer.function(fn) if fn is not None else printer.value(op, "itself")
    payload = _frame(
        "statefn-callable",
        schema,
        _text(kind),
        _text(dtype_key(state_dtype)) if state_dtype is not None else b"none",
        printer.value(name, "its name"),
        target,
    )
    return payload.hex()
