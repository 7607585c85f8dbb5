# SPDX-License-Identifier: Apache-2.0
"""The dtypes a callback's state (and the scanned values) may have.

A state is one item per thread: a numeric scalar, or a *record* of a few
numeric fields (a NumPy structured dtype laid out as a C struct, such as the
``(a, b)`` pair of a linear recurrence). This module owns the allowed set, the
converter every descriptor uses to canonicalise a dtype spelling to
:class:`numpy.dtype`, and the rejection text that names the refused dtype.
"""

from __future__ import annotations

import collections
import hashlib
import keyword
import threading
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ._errors import StateDtypeError

__all__ = [
    "MAX_RECORD_FIELDS",
    "RECORD_FIELD_DTYPES",
    "STATE_DTYPES",
    "RecordField",
    "as_numeric_dtype",
    "as_state_dtype",
    "as_value_dtype",
    "dtype_code",
    "dtype_key",
    "dtype_name",
    "is_bfloat16",
    "is_complex",
    "is_half",
    "is_record",
    "record_fields",
    "record_tuple",
]

#: The numeric dtypes a record's fields may have, in a fixed order.
RECORD_FIELD_DTYPES: tuple[np.dtype[Any], ...] = tuple(
    np.dtype(name)
    for name in (
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
    )
)

#: The allowed state dtypes, in a fixed order (docs and messages list them so):
#: the record fields' numeric dtypes, float16, and the complex dtypes. bfloat16
#: is allowed too, as ``ml_dtypes.bfloat16`` (NumPy's de-facto bfloat16 dtype,
#: an optional dependency: :func:`is_bfloat16`), which this tuple cannot hold
#: without importing it.
STATE_DTYPES: tuple[np.dtype[Any], ...] = (
    *RECORD_FIELD_DTYPES[:8],
    np.dtype("float16"),
    *RECORD_FIELD_DTYPES[8:],
    np.dtype("complex64"),
    np.dtype("complex128"),
)

_BY_STR: dict[str, np.dtype[Any]] = {dt.str: dt for dt in STATE_DTYPES}
_FIELDS_BY_STR: dict[str, np.dtype[Any]] = {dt.str: dt for dt in RECORD_FIELD_DTYPES}
_ALLOWED_TEXT = ", ".join(dt.name for dt in STATE_DTYPES) + ", bfloat16 (ml_dtypes.bfloat16)"
_FIELD_TEXT = ", ".join(dt.name for dt in RECORD_FIELD_DTYPES)


def is_bfloat16(dt: np.dtype[Any] | None) -> bool:
    """Whether *dt* is bfloat16 (``ml_dtypes.bfloat16``, NumPy's de-facto bfloat16 dtype).

    Told without importing ``ml_dtypes``: its dtype is a two-byte ``V`` kind
    named ``bfloat16`` whose scalar type comes from the ``ml_dtypes`` package.
    """
    return (
        dt is not None
        and dt.kind == "V"
        and dt.names is None
        and dt.itemsize == 2
        and dt.name == "bfloat16"
        and getattr(dt.type, "__module__", "").partition(".")[0] == "ml_dtypes"
    )


def is_half(dt: np.dtype[Any] | None) -> bool:
    """Whether *dt* is a two-byte float: float16 or bfloat16."""
    return dt is not None and (dt == np.dtype(np.float16) or is_bfloat16(dt))


def is_complex(dt: np.dtype[Any] | None) -> bool:
    """Whether *dt* is complex64 or complex128."""
    return dt is not None and dt.names is None and dt.kind == "c"


def _spelling(obj: object) -> str:
    if isinstance(obj, np.dtype):
        return str(obj)
    if isinstance(obj, type):
        return f"{obj.__module__}.{obj.__qualname__}".removeprefix("builtins.")
    return repr(obj) if isinstance(obj, str) else f"{type(obj).__qualname__} object"


def as_numeric_dtype(obj: npt.DTypeLike, *, what: str = "state dtype") -> np.dtype[Any]:
    """Canonicalise a dtype spelling to one of :data:`STATE_DTYPES`, or bfloat16.

    Idempotent (``attrs.evolve`` reruns converters). Every NumPy spelling is
    accepted: ``np.int64``, ``"int64"``, ``"i8"``, ``np.dtype("i8")``; bfloat16
    is ``ml_dtypes.bfloat16`` (or ``"bfloat16"`` once ``ml_dtypes`` is imported).

    Parameters
    ----------
    obj : dtype-like
        The spelling to convert.
    what : str
        How the dtype is named in error messages.

    Returns
    -------
    numpy.dtype
        The canonical dtype object from :data:`STATE_DTYPES`.

    Raises
    ------
    StateDtypeError
        If *obj* is not a dtype spelling, or names a dtype outside the set.
    """
    if obj is None:
        # np.dtype(None) silently means float64; a forgotten argument must not.
        raise StateDtypeError(
            f"{what} must be given; expected one of {_ALLOWED_TEXT}; got None. "
            "Pass a NumPy dtype such as np.int64."
        )
    try:
        dt = np.dtype(obj)
    except (TypeError, ValueError) as exc:
        raise StateDtypeError(
            f"{what} {_spelling(obj)} is not a NumPy dtype ({exc}); expected one of "
            f"{_ALLOWED_TEXT}. Pass a NumPy dtype such as np.int64."
        ) from None
    if dt.names is None and dt.subdtype is None and not dt.isnative:
        raise StateDtypeError(
            f"{what} {dt.str} has non-native byte order; expected a native-order "
            f"dtype, one of {_ALLOWED_TEXT}. Use {dt.newbyteorder('=').name} instead."
        )
    if is_bfloat16(dt):
        return dt
    canonical = _BY_STR.get(dt.str) if dt.names is None and dt.subdtype is None else None
    if canonical is None:
        if dt.names is not None:
            why = " (a record here: a scalar is needed)"
        elif dt.subdtype is not None:
            why = " (a state is one item per thread, not a sub-array)"
        else:
            why = ""
        raise StateDtypeError(
            f"{what} {dt} is not supported{why}; expected one of {_ALLOWED_TEXT}. "
            "Use one numeric item (for a flag, uint8)."
        )
    return canonical


#: The most fields a record value or state may have.
MAX_RECORD_FIELDS = 8


class RecordField(NamedTuple):
    """One field of a record dtype: its name, numeric dtype and byte offset."""

    name: str
    dtype: np.dtype[Any]
    offset: int


def is_record(dt: np.dtype[Any] | None) -> bool:
    """Whether *dt* is a record (structured) dtype."""
    return dt is not None and dt.names is not None


def record_fields(dt: np.dtype[Any]) -> tuple[RecordField, ...]:
    """The fields of a record dtype accepted by :func:`as_value_dtype`, in order."""
    assert dt.fields is not None
    assert dt.names is not None
    return tuple(RecordField(n, dt.fields[n][0], int(dt.fields[n][1])) for n in dt.names)


def _c_layout(formats: list[np.dtype[Any]]) -> tuple[list[int], int, int]:
    """Offsets, size and alignment of a C struct with members of these types, in order."""
    offsets: list[int] = []
    end = 0
    align = 1
    for fmt in formats:
        a = fmt.alignment
        end = -(-end // a) * a
        offsets.append(end)
        end += fmt.itemsize
        align = max(align, a)
    return offsets, -(-end // align) * align, align


def _as_record_dtype(dt: np.dtype[Any], what: str) -> np.dtype[Any]:
    names = dt.names or ()
    fields: Any = dt.fields or {}
    example = "np.dtype([('a', np.float32), ('b', np.float32)], align=True)"
    if not names or len(names) > MAX_RECORD_FIELDS:
        raise StateDtypeError(
            f"{what} {dt} has {len(names)} fields; a record has 1 to {MAX_RECORD_FIELDS} "
            f"numeric fields, e.g. {example}"
        )
    formats: list[np.dtype[Any]] = []
    for name in names:
        entry = fields[name]
        fmt = entry[0]
        if len(entry) > 2:
            raise StateDtypeError(
                f"{what} {dt} has a titled field {name!r}; record fields have plain names only. "
                f"Declare it without titles, e.g. {example}"
            )
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise StateDtypeError(
                f"{what} {dt} has the field name {name!r}; record field names must be Python "
                "identifiers that do not start with '_' (callbacks see fields as attributes). "
                "Rename the field"
            )
        if name in ("count", "index"):
            raise StateDtypeError(
                f"{what} {dt} has the field name {name!r}, a method of tuples; callbacks see "
                "record values as named tuples, where it would name the method. Rename the "
                "field (e.g. 'pos' for an index)"
            )
        if fmt.names is not None or fmt.subdtype is not None:
            raise StateDtypeError(
                f"{what} {dt} has a nested record or sub-array field {name!r} ({fmt}); record "
                f"fields must be numeric scalars, one of {_FIELD_TEXT}. Flatten it into "
                "scalar fields"
            )
        if _FIELDS_BY_STR.get(fmt.str) is None or is_bfloat16(fmt):
            why = ""
            if is_half(fmt) or is_complex(fmt):
                why = (
                    " (half-precision and complex fields are not supported: keep half data in "
                    "arrays of its own and load it into float32 fields, which widens it "
                    "exactly; split a complex field into two float fields)"
                )
            raise StateDtypeError(
                f"{what} {dt} has the field {name!r} of dtype {fmt}, which is not supported"
                f"{why}; record fields must be native numeric scalars, one of {_FIELD_TEXT}"
            )
        formats.append(_FIELDS_BY_STR[fmt.str])
    offsets, size, _ = _c_layout(formats)
    if [int(fields[n][1]) for n in names] != offsets or dt.itemsize != size:
        raise StateDtypeError(
            f"{what} {dt} is laid out unlike a C struct (offsets "
            f"{[int(fields[n][1]) for n in names]}, itemsize {dt.itemsize}; a C struct has "
            f"{offsets}, {size}); declare it with np.dtype([...], align=True)"
        )
    return np.dtype(list(zip(names, formats, strict=True)), align=True)


def as_value_dtype(obj: npt.DTypeLike, *, what: str = "value dtype") -> np.dtype[Any]:
    """Canonicalise a scalar or record dtype spelling (idempotent).

    Scalars are as :func:`as_numeric_dtype` accepts them. A record is a NumPy
    structured dtype of 1 to :data:`MAX_RECORD_FIELDS` fields, each a native
    numeric scalar of :data:`RECORD_FIELD_DTYPES`, whose offsets and size are those
    of the C struct with the same members in order (``align=True`` gives
    that; so does any packed dtype whose fields need no padding). Its
    canonical form is the aligned structured dtype (``isalignedstruct``).

    Raises
    ------
    StateDtypeError
        For anything else (nested, sub-array, titled or non-numeric fields,
        a layout unlike a C struct), naming the dtype.
    """
    if (obj is not None and not isinstance(obj, np.dtype)) or (
        isinstance(obj, np.dtype) and obj.names is not None
    ):
        try:
            probe = np.dtype(obj)
        except (TypeError, ValueError):
            probe = None
        if probe is not None and probe.names is not None:
            return _as_record_dtype(probe, what)
    return as_numeric_dtype(obj, what=what)


def dtype_key(dt: np.dtype[Any] | None) -> str:
    """A canonical text naming a value or state dtype: ``dt.str`` for scalars.

    For records it names every field's name, dtype and offset and the
    itemsize (``dt.str`` alone, ``|V8``, would make two records collide);
    bfloat16 is ``bfloat16`` (its ``dt.str``, ``<V2``, names any two bytes).
    """
    if dt is None:
        return "none"
    if is_bfloat16(dt):
        return "bfloat16"
    if dt.names is None:
        return dt.str
    parts = ",".join(f"{f.name}:{f.dtype.str}@{f.offset}" for f in record_fields(dt))
    return f"record{{{parts}}}/{dt.itemsize}"


def dtype_name(dt: np.dtype[Any]) -> str:
    """How messages name a dtype: ``int64``, or ``record(a: float32, b: float32)``."""
    if dt.names is None:
        return str(dt)
    return f"record({', '.join(f'{f.name}: {f.dtype.name}' for f in record_fields(dt))})"


def as_state_dtype(obj: npt.DTypeLike) -> np.dtype[Any]:
    """Converter for ``state_dtype`` fields: :func:`as_value_dtype` for states.

    Parameters
    ----------
    obj : dtype-like
        The spelling to convert.

    Returns
    -------
    numpy.dtype
        The canonical dtype.
    """
    return as_value_dtype(obj, what="state dtype")


def dtype_code(dt: np.dtype[Any] | None) -> str:
    """Return the short code of a canonical dtype (``i4``, ``u1``, ``f8``) or ``none``.

    Parameters
    ----------
    dt : numpy.dtype or None
        A dtype from :data:`STATE_DTYPES`, bfloat16, a record dtype, or None for
        "no state".

    Returns
    -------
    str
        Kind character plus item size, valid inside a C identifier
        (``bf2`` for bfloat16); for a record ``r`` plus its size and 10 hex
        digits of :func:`dtype_key`.
    """
    if dt is None:
        return "none"
    if is_bfloat16(dt):
        return "bf2"
    if dt.names is not None:
        digest = hashlib.sha256(dtype_key(dt).encode()).hexdigest()[:10]
        return f"r{dt.itemsize}x{digest}"
    return f"{dt.kind}{dt.itemsize}"


_TUPLE_CLASSES: dict[str, type[tuple[Any, ...]]] = {}
_TUPLE_LOCK = threading.Lock()


def record_tuple(dt: np.dtype[Any]) -> type[tuple[Any, ...]]:
    """The named-tuple class a record's values have in callbacks (one per dtype).

    Callbacks see a record value (a block aggregate, a scan operator's
    operands) as a named tuple of its fields, in field order: ``x.a``,
    ``x[0]`` and ``a, b = x`` all work, on the GPU and in the simulator.
    """
    key = dtype_key(dt)
    with _TUPLE_LOCK:
        found = _TUPLE_CLASSES.get(key)
        if found is None:
            names = tuple(f.name for f in record_fields(dt))
            make: Any = collections.namedtuple  # a class built at run time
            found = make("Record", names)
            _TUPLE_CLASSES[key] = found
        return found
