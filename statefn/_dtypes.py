# SPDX-License-Identifier: Apache-2.0
"""The dtypes a callback's state (and the scanned values) may have.

A state is one numeric item per thread. This module owns the allowed set, the
converter every descriptor uses to canonicalise a dtype spelling to
:class:`numpy.dtype`, and the rejection text that names the refused dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ._errors import StateDtypeError

__all__ = ["STATE_DTYPES", "as_numeric_dtype", "as_state_dtype", "dtype_code"]

#: The allowed state dtypes, in a fixed order (docs and messages list them so).
#: float16 is deliberately absent: no CUB/NVRTC scan path for ``__half``
#: state or values is built or tested here, and Numba's float16 arithmetic on
#: the device needs intrinsics the callbacks would not get by default.
STATE_DTYPES: tuple[np.dtype[Any], ...] = tuple(
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

_BY_STR: dict[str, np.dtype[Any]] = {dt.str: dt for dt in STATE_DTYPES}
_ALLOWED_TEXT = ", ".join(dt.name for dt in STATE_DTYPES)


def _spelling(obj: object) -> str:
    if isinstance(obj, np.dtype):
        return str(obj)
    if isinstance(obj, type):
        return f"{obj.__module__}.{obj.__qualname__}".removeprefix("builtins.")
    return repr(obj) if isinstance(obj, str) else f"{type(obj).__qualname__} object"


def as_numeric_dtype(obj: npt.DTypeLike, *, what: str = "state dtype") -> np.dtype[Any]:
    """Canonicalise a dtype spelling to one of :data:`STATE_DTYPES`.

    Idempotent (``attrs.evolve`` reruns converters). Every NumPy spelling is
    accepted: ``np.int64``, ``"int64"``, ``"i8"``, ``np.dtype("i8")``.

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
    canonical = _BY_STR.get(dt.str) if dt.names is None and dt.subdtype is None else None
    if canonical is None:
        if dt == np.dtype(np.float16):
            why = " (float16 has no tested CUB scan path here)"
        elif dt.names is not None or dt.subdtype is not None:
            why = " (a state is one numeric item per thread, not a record or sub-array)"
        else:
            why = ""
        raise StateDtypeError(
            f"{what} {dt} is not supported{why}; expected one of {_ALLOWED_TEXT}. "
            "Use one numeric item (for a flag, uint8)."
        )
    return canonical


def as_state_dtype(obj: npt.DTypeLike) -> np.dtype[Any]:
    """Converter for ``state_dtype`` fields: :func:`as_numeric_dtype` for states.

    Parameters
    ----------
    obj : dtype-like
        The spelling to convert.

    Returns
    -------
    numpy.dtype
        The canonical dtype.
    """
    return as_numeric_dtype(obj, what="state dtype")


def dtype_code(dt: np.dtype[Any] | None) -> str:
    """Return the short code of a canonical dtype (``i4``, ``u1``, ``f8``) or ``none``.

    Parameters
    ----------
    dt : numpy.dtype or None
        A dtype from :data:`STATE_DTYPES`, or None for "no state".

    Returns
    -------
    str
        Kind character plus item size, valid inside a C identifier.
    """
    return "none" if dt is None else f"{dt.kind}{dt.itemsize}"
