# SPDX-License-Identifier: Apache-2.0
"""Exceptions raised by :mod:`statefn`, and the helpers that word their messages.

Every error subclasses :class:`StatefnError` and the nearest builtin exception,
so callers can catch either. Messages say what was wrong, what was expected,
what was got, and what to do.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ArityError",
    "CallbackCompileError",
    "NotCallableError",
    "RoleError",
    "StateDtypeError",
    "StatefnError",
    "UnkeyableValueError",
    "UnknownOperatorError",
    "describe_callable",
]


class StatefnError(Exception):
    """Base class of every error raised by :mod:`statefn`.

    .. versionadded:: 0.1
    """


class StateDtypeError(StatefnError, TypeError):
    """A state (or value) dtype is not one numeric, native-byte-order item.

    .. versionadded:: 0.1
    """


class ArityError(StatefnError, TypeError):
    """A callback's parameters do not match the operands the ABI passes.

    .. versionadded:: 0.1
    """


class NotCallableError(StatefnError, TypeError):
    """An object is not a callable that can be compiled as a device callback.

    .. versionadded:: 0.1
    """


class RoleError(StatefnError, TypeError):
    """A descriptor was offered in a role it cannot play.

    For example a stateful prefix callback offered as a scan operator, or a
    built-in scan operator handed to the lowering (CUB supplies those).

    .. versionadded:: 0.1
    """


class UnknownOperatorError(StatefnError, ValueError):
    """A string does not name a built-in scan operator.

    .. versionadded:: 0.1
    """


class CallbackCompileError(StatefnError, TypeError):
    """Numba could not compile a callback for the requested dtypes.

    The message names the callback and the dtypes and includes Numba's own
    message; the original exception is chained as ``__cause__``.

    .. versionadded:: 0.1
    """


class UnkeyableValueError(StatefnError, TypeError):
    """A callback reads a value its key cannot encode exactly.

    Raised when a descriptor's :attr:`key` is computed (at the latest when a
    kernel that uses it is compiled). The message names the callback, the
    global, closure variable or default that holds the value, and its type.

    .. versionadded:: 0.2
    """


def describe_callable(obj: Any) -> str:
    """Return a short, stable human label for *obj* (``module.qualname``).

    Parameters
    ----------
    obj : object
        Usually a function or a Numba dispatcher.

    Returns
    -------
    str
        ``module.qualname`` when available, else the type's qualified name.
    """
    target = getattr(obj, "py_func", obj)
    qualname = getattr(target, "__qualname__", None)
    module = getattr(target, "__module__", None)
    if isinstance(qualname, str):
        return f"{module}.{qualname}" if isinstance(module, str) else qualname
    kind = type(obj)
    return f"{kind.__module__}.{kind.__qualname__} object"
