# SPDX-License-Identifier: Apache-2.0
"""Which callables a descriptor accepts, and how many operands they take.

The pointer ABI passes a fixed number of operands positionally: two for a
stateful prefix callback ``op(state, block_aggregate)`` and for a scan
operator ``op(a, b)``, one for a stateless callback ``op(block_aggregate)``.
This module reads a function's code object (not :func:`inspect.signature`,
which follows ``__wrapped__`` and so may describe a function Numba never
compiles) and enforces these rules:

- the number of *required* positional parameters must equal the arity;
- further positional parameters with defaults are allowed (Numba compiles
  them with their defaults; the ABI never passes them);
- keyword-only parameters with defaults are allowed for the same reason;
  required keyword-only parameters are refused (nothing could fill them);
- ``*args`` is refused (the ABI passes a fixed number of operands);
- ``**kwargs`` is refused (Numba cannot compile it and the ABI passes no
  keywords).

It also owns the one test for "a Numba dispatcher", done without importing
Numba so that importing :mod:`statefn` stays free of CUDA, and the one test
for a *functor class* (the reference design's second callback spelling: a
class whose ``__call__(self, block_aggregate)`` receives the state cell as
``self``; the function compiled is that ``__call__``).
"""

from __future__ import annotations

import inspect
from types import FunctionType
from typing import Any

from ._errors import ArityError, NotCallableError, describe_callable

__all__ = [
    "callback_function",
    "check_arity",
    "functor_call",
    "is_numba_dispatcher",
    "python_function",
    "require_function",
    "required_positional",
]


def is_numba_dispatcher(obj: object) -> bool:
    """Return whether *obj* looks like a ``@cuda.jit`` dispatcher.

    True for an object with a callable-valued ``py_func`` whose type lives in a
    ``numba`` module (a real dispatcher or the simulator's fake kernel). Numba
    is never imported here.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        Whether the object is treated as a dispatcher.
    """
    if isinstance(obj, FunctionType | type):
        return False
    module = getattr(type(obj), "__module__", "") or ""
    if not module.startswith("numba"):
        return False
    py_func = getattr(obj, "py_func", None)
    return callable(py_func)


def python_function(obj: object) -> FunctionType | None:
    """Return the Python function Numba would compile for *obj*, if there is one.

    Parameters
    ----------
    obj : object
        A plain function, a dispatcher, or anything else.

    Returns
    -------
    types.FunctionType or None
        The function itself, the dispatcher's ``py_func``, or None.
    """
    if isinstance(obj, FunctionType):
        return obj
    if is_numba_dispatcher(obj):
        py_func = obj.py_func  # type: ignore[attr-defined]
        if isinstance(py_func, FunctionType):
            return py_func
    return None


def functor_call(obj: object) -> FunctionType | None:
    """Return the ``__call__`` function of a functor class, if *obj* is one.

    A functor class is a class (not an instance) whose own ``__call__`` (found
    in its method resolution order, never the metaclass's) is a plain
    function. A stateful callback written this way receives the state cell as
    ``self``: ``__call__(self, block_aggregate)``, or ``__call__(self_ptr,
    block_aggregate)`` as the reference design spells it.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    types.FunctionType or None
        The class's ``__call__`` function, or None.
    """
    if not isinstance(obj, type):
        return None
    for klass in obj.__mro__:
        if klass is object:
            break
        if "__call__" in vars(klass):
            call = vars(klass)["__call__"]
            return call if isinstance(call, FunctionType) else None
    return None


def callback_function(obj: object) -> FunctionType | None:
    """Return the function Numba compiles for a stateful callback spelling.

    :func:`python_function`, or for a functor class its ``__call__``.

    Parameters
    ----------
    obj : object
        A function, a dispatcher, a functor class, or anything else.

    Returns
    -------
    types.FunctionType or None
    """
    return python_function(obj) or functor_call(obj)


def require_function(obj: object, *, role: str) -> FunctionType:
    """Return :func:`python_function` of *obj* or raise :class:`NotCallableError`.

    Parameters
    ----------
    obj : object
        The candidate callback.
    role : str
        How the callback is named in the message (e.g. "stateful prefix callback").

    Returns
    -------
    types.FunctionType
        The function Numba compiles.

    Raises
    ------
    NotCallableError
        If *obj* is not callable, or is a callable Numba cannot compile.
    """
    fn = python_function(obj)
    if fn is not None:
        return fn
    expected = "a Python function (def or lambda) or a @cuda.jit(device=True) function"
    got = describe_callable(obj)
    if not callable(obj):
        raise NotCallableError(
            f"a {role} must be callable; expected {expected}; got {got}, which is not "
            "callable. Pass the function itself, not the result of calling it."
        )
    raise NotCallableError(
        f"a {role} must be compilable by Numba; expected {expected}; got {got}, "
        "which Numba cannot compile as a device function. Wrap the call in a "
        "def (for a method or functools.partial, write a function that calls it)."
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def check_arity(fn: FunctionType, arity: int, *, role: str, label: str, usage: str) -> int:
    """Check *fn*'s parameters against the ABI's *arity*; return the arity.

    Parameters
    ----------
    fn : types.FunctionType
        The function Numba compiles.
    arity : int
        The number of operands the ABI passes positionally.
    role : str
        How the callback is named in messages ("stateful prefix callback").
    label : str
        The callback's name in messages.
    usage : str
        The expected call shape, e.g. ``op(state, block_aggregate)``.

    Returns
    -------
    int
        *arity*, once the parameters are known to match.

    Raises
    ------
    ArityError
        If the parameters do not fit, with the rule that was broken.
    """
    code = fn.__code__
    flags = code.co_flags
    positional = code.co_argcount
    defaults = len(fn.__defaults__ or ())
    required = positional - defaults
    names = code.co_varnames
    head = f"{role} {label} cannot be called as {usage}"
    if flags & inspect.CO_VARARGS:
        star = names[positional + code.co_kwonlyargcount]
        raise ArityError(
            f"{head}: it takes *{star}; expected exactly {_plural(arity, 'positional parameter')} "
            f"(the ABI passes a fixed number of operands). Name the parameters instead."
        )
    if flags & inspect.CO_VARKEYWORDS:
        index = positional + code.co_kwonlyargcount + (1 if flags & inspect.CO_VARARGS else 0)
        raise ArityError(
            f"{head}: it takes **{names[index]}; expected no keyword catch-all (Numba cannot "
            "compile it and the ABI passes no keywords). Remove it."
        )
    kwdefaults: dict[str, Any] = fn.__kwdefaults__ or {}
    kwonly = names[positional : positional + code.co_kwonlyargcount]
    missing = [name for name in kwonly if name not in kwdefaults]
    if missing:
        listed = ", ".join(missing)
        raise ArityError(
            f"{head}: keyword-only parameter(s) {listed} have no default; expected only "
            "positional operands (the ABI passes no keywords). Give them defaults or "
            "remove them."
        )
    if required != arity:
        got_names = ", ".join(names[:required]) or "none"
        hint = ""
        if role.startswith("stateless") and required == 2:
            hint = " A callback with state is declared with @statefn.stateful(state_dtype)."
        raise ArityError(
            f"{head}: expected exactly {_plural(arity, 'required positional parameter')}; "
            f"got {required} ({got_names}). Parameters beyond those must have defaults."
            f"{hint}"
        )
    return arity


def required_positional(fn: FunctionType) -> int:
    """Return the number of positional parameters of *fn* that have no default.

    Parameters
    ----------
    fn : types.FunctionType
        A plain function.

    Returns
    -------
    int
        ``co_argcount`` minus the number of positional defaults.
    """
    return fn.__code__.co_argcount - len(fn.__defaults__ or ())
