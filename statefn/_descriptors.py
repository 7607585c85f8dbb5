# SPDX-License-Identifier: Apache-2.0
"""The closed set of callback descriptors: frozen, slotted attrs classes.

- :class:`StatefulFunction` — a prefix callback ``op(state, block_aggregate)``
  with one numeric state item per thread;
- :class:`StatelessFunction` — a prefix callback ``op(block_aggregate)``;
- :class:`ScanOperator` — a built-in operator (CUB supplies it) or a user
  binary function ``op(a, b)``.

Validation happens at construction (and again on ``attrs.evolve``). Equality
and hashing follow :attr:`key`, implemented once in :class:`_KeyedDescriptor`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Literal, Self, TypeAlias, TypeVar

import attrs
import numpy as np
import numpy.typing as npt
from attrs import field, frozen

from ._arity import (
    callback_function,
    check_arity,
    python_function,
    require_function,
    required_positional,
)
from ._dtypes import as_state_dtype
from ._errors import RoleError, UnknownOperatorError, describe_callable
from ._identity import descriptor_key

__all__ = [
    "BUILTIN_ALIASES",
    "BUILTIN_OPERATORS",
    "BuiltinOperator",
    "Descriptor",
    "ScanOperator",
    "StateT",
    "StatefulFunction",
    "StatelessFunction",
    "ValueT",
    "builtin_for_callable",
]

StateT = TypeVar("StateT", bound=np.generic)
ValueT = TypeVar("ValueT", bound=np.generic)

#: Canonical spellings of the built-in scan operators (CUB functors on the C++ side).
BuiltinOperator: TypeAlias = Literal["+", "*", "min", "max", "&", "|", "^"]
BUILTIN_OPERATORS: tuple[BuiltinOperator, ...] = ("+", "*", "min", "max", "&", "|", "^")

#: Accepted string aliases, each mapped to its canonical spelling.
BUILTIN_ALIASES: dict[str, BuiltinOperator] = {
    **{op: op for op in BUILTIN_OPERATORS},
    **dict.fromkeys(("add", "sum", "plus"), "+"),
    **dict.fromkeys(("mul", "multiply", "prod"), "*"),
    "minimum": "min",
    "maximum": "max",
    **dict.fromkeys(("bit_and", "and_"), "&"),
    **dict.fromkeys(("bit_or", "or_"), "|"),
    **dict.fromkeys(("bit_xor", "xor"), "^"),
}

# Python callables recognised as built-ins, compared by identity (never hashed).
_BUILTIN_CALLABLES: tuple[tuple[object, BuiltinOperator], ...] = (
    (operator.add, "+"),
    (operator.mul, "*"),
    (operator.and_, "&"),
    (operator.or_, "|"),
    (operator.xor, "^"),
    (min, "min"),
    (max, "max"),
    (np.add, "+"),
    (np.multiply, "*"),
    (np.minimum, "min"),
    (np.maximum, "max"),
    (np.bitwise_and, "&"),
    (np.bitwise_or, "|"),
    (np.bitwise_xor, "^"),
)

_HOST_UFUNCS: dict[str, np.ufunc] = {
    "+": np.add,
    "*": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
}


def builtin_for_callable(obj: object) -> BuiltinOperator | None:
    """Return the canonical built-in operator *obj* spells, if it is one.

    Parameters
    ----------
    obj : object
        E.g. ``operator.add``, ``min`` or ``np.bitwise_xor``.

    Returns
    -------
    str or None
        The canonical spelling, or None if *obj* is not a recognised built-in.
    """
    for candidate, spelling in _BUILTIN_CALLABLES:
        if obj is candidate:
            return spelling
    return None


def _canonical_builtin(value: str | None) -> BuiltinOperator | None:
    if value is None:
        return None
    if isinstance(value, str) and value in BUILTIN_ALIASES:
        return BUILTIN_ALIASES[value]
    accepted = ", ".join(repr(alias) for alias in BUILTIN_ALIASES)
    raise UnknownOperatorError(
        f"unknown built-in scan operator {value!r}; expected one of {accepted}. "
        "For another operator pass a function op(a, b) instead."
    )


def _check_name(_instance: object, _attribute: object, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"'name' must be a str or None; got {type(value).__qualname__}. Pass a string label."
        )


def _op_repr(op: object) -> str:
    return describe_callable(op) if op is not None else "None"


class _KeyedDescriptor:
    """Keys, equality and hashing: written once for every descriptor.

    :attr:`key` describes the callable as it is *now*: it is computed again at
    each read (a global the callable loads may have changed since), unless the
    descriptor was pinned with :meth:`pinned`, whose copy keeps the key of the
    moment it was made. The compiled front ends pin each descriptor a kernel
    names once per compilation of that kernel, in the same step that compiles
    it, so a compiled callback is stored under the key of the values it was
    compiled with.
    """

    __slots__ = ("_pinned_key",)

    def _fresh_key(self) -> str:
        raise NotImplementedError

    @property
    def key(self) -> str:
        """Stable hex digest identifying the descriptor (see the class docstring)."""
        pinned: str | None = getattr(self, "_pinned_key", None)
        return pinned if pinned is not None else self._fresh_key()

    def pinned(self) -> Self:
        """Return a copy whose :attr:`key` is computed now and then kept.

        Building code pins a descriptor before it plans, generates and compiles
        with it, so that every step sees one key and the key describes the
        values the compiler reads in that step. A pinned descriptor returns
        itself.

        .. versionadded:: 0.2
        """
        if getattr(self, "_pinned_key", None) is not None:
            return self
        copy = attrs.evolve(self)  # type: ignore[misc]
        object.__setattr__(copy, "_pinned_key", self._fresh_key())
        return copy

    @property
    def is_pinned(self) -> bool:
        """Whether :attr:`key` was fixed by :meth:`pinned`."""
        return getattr(self, "_pinned_key", None) is not None

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _label(name: str | None, op: object) -> str:
    return repr(name) if name is not None else describe_callable(op)


# ------------------------------------------------------------ StatefulFunction


def _check_stateful_op(instance: StatefulFunction[Any, Any], _a: object, op: Any) -> None:
    role = "stateful prefix callback"
    fn = callback_function(op) or require_function(op, role=role)
    usage = "op(state, block_aggregate)"
    check_arity(fn, 2, role=role, label=_label(instance.name, op), usage=usage)


@frozen(eq=False)
class StatefulFunction(_KeyedDescriptor, Generic[StateT, ValueT]):
    """A stateful prefix callback ``op(state, block_aggregate) -> prefix``.

    ``state`` is a one-item array of :attr:`state_dtype` that the callback may
    update; ``block_aggregate`` is the tile's aggregate; the return value seeds
    the scan (CUB uses thread 0's).

    Parameters
    ----------
    op : callable
        A Python function or ``@cuda.jit(device=True)`` dispatcher with exactly
        two required positional parameters, or a functor class whose
        ``__call__(self, block_aggregate)`` receives the state array as
        ``self`` (the reference design's spelling, ``self_ptr`` included).
    state_dtype : dtype-like
        One of :data:`statefn.STATE_DTYPES`, in any NumPy spelling.
    name : str or None
        A label for messages; part of :attr:`key`.

    .. versionadded:: 0.1
    """

    kind: ClassVar[str] = "stateful"

    op: Callable[..., Any] = field(validator=_check_stateful_op, repr=_op_repr)
    state_dtype: np.dtype[Any] = field(converter=as_state_dtype)
    name: str | None = field(default=None, validator=_check_name)

    @property
    def arity(self) -> int:
        """Number of operands the ABI passes (2)."""
        fn = callback_function(self.op)
        return required_positional(fn) if fn is not None else 2

    def _fresh_key(self) -> str:
        """Stable hex digest of kind, state dtype, name and the callable."""
        return descriptor_key(self.kind, op=self.op, state_dtype=self.state_dtype, name=self.name)

    def with_name(self, name: str | None) -> StatefulFunction[StateT, ValueT]:
        """Return a copy with another ``name``."""
        return attrs.evolve(self, name=name)

    def with_state_dtype(self, dtype: npt.DTypeLike) -> StatefulFunction[Any, ValueT]:
        """Return a copy with another ``state_dtype`` (validated again)."""
        return attrs.evolve(self, state_dtype=dtype)

    def __call__(self, state: npt.NDArray[StateT], block_aggregate: ValueT) -> ValueT:
        """Run the callback on the host (tests, simulator): ``op(state, block_aggregate)``.

        A functor class's ``__call__`` runs with the state array as ``self``.
        """
        fn = callback_function(self.op)
        return (fn if fn is not None else self.op)(state, block_aggregate)  # type: ignore[no-any-return]


# ----------------------------------------------------------- StatelessFunction


def _check_stateless_op(instance: StatelessFunction[Any], _a: object, op: Any) -> None:
    role = "stateless prefix callback"
    fn = require_function(op, role=role)
    check_arity(fn, 1, role=role, label=_label(instance.name, op), usage="op(block_aggregate)")


@frozen(eq=False)
class StatelessFunction(_KeyedDescriptor, Generic[ValueT]):
    """A stateless prefix callback ``op(block_aggregate) -> prefix``.

    Parameters
    ----------
    op : callable
        A Python function or ``@cuda.jit(device=True)`` dispatcher with exactly
        one required positional parameter.
    name : str or None
        A label for messages; part of :attr:`key`.

    .. versionadded:: 0.1
    """

    kind: ClassVar[str] = "stateless"

    op: Callable[..., Any] = field(validator=_check_stateless_op, repr=_op_repr)
    name: str | None = field(default=None, validator=_check_name)

    @property
    def arity(self) -> int:
        """Number of operands the ABI passes (1)."""
        fn = python_function(self.op)
        return required_positional(fn) if fn is not None else 1

    def _fresh_key(self) -> str:
        """Stable hex digest of kind, name and the callable."""
        return descriptor_key(self.kind, op=self.op, name=self.name)

    def with_name(self, name: str | None) -> StatelessFunction[ValueT]:
        """Return a copy with another ``name``."""
        return attrs.evolve(self, name=name)

    def __call__(self, block_aggregate: ValueT) -> ValueT:
        """Run the callback on the host (tests, simulator): ``op(block_aggregate)``."""
        fn = python_function(self.op)
        return (fn if fn is not None else self.op)(block_aggregate)  # type: ignore[no-any-return]


# ---------------------------------------------------------------- ScanOperator


def _check_scan_callable(instance: ScanOperator, _a: object, op: Any) -> None:
    if op is None:
        return
    role = "scan operator"
    spelled = builtin_for_callable(op)
    if spelled is not None:
        raise RoleError(
            f"{describe_callable(op)} is a built-in scan operator; expected it as "
            f"ScanOperator(builtin={spelled!r}) (CUB supplies it), not as a user op. "
            "Use statefn.normalize(op, role='scan_op') or statefn.scan_op(op)."
        )
    fn = require_function(op, role=role)
    check_arity(fn, 2, role=role, label=_label(instance.name, op), usage="op(a, b)")


@frozen(eq=False, kw_only=True)
class ScanOperator(_KeyedDescriptor):
    """A scan operator: a built-in (``"+" "*" "min" "max" "&" "|" "^"``) or ``op(a, b)``.

    Exactly one of *builtin* and *op* is given.

    Parameters
    ----------
    builtin : str or None
        A built-in spelling or alias (``"add"``, ``"minimum"``, ...), stored in
        canonical form.
    op : callable or None
        A Python function or ``@cuda.jit(device=True)`` dispatcher with exactly
        two required positional parameters.
    name : str or None
        A label for messages; part of :attr:`key` for user operators only.

    .. versionadded:: 0.1
    """

    kind: ClassVar[str] = "scan_op"

    builtin: BuiltinOperator | None = field(default=None, converter=_canonical_builtin)
    op: Callable[..., Any] | None = field(
        default=None, validator=_check_scan_callable, repr=_op_repr
    )
    name: str | None = field(default=None, validator=_check_name)

    def __attrs_post_init__(self) -> None:
        if (self.builtin is None) == (self.op is None):
            got = "both" if self.builtin is not None else "neither"
            raise TypeError(
                f"ScanOperator takes exactly one of builtin= and op=; got {got}. "
                "Pass builtin='+' (or another built-in) or op=<function of (a, b)>."
            )

    @property
    def is_builtin(self) -> bool:
        """Whether CUB supplies this operator (it is then never lowered)."""
        return self.builtin is not None

    @property
    def is_sum(self) -> bool:
        """Whether this is the built-in ``"+"``."""
        return self.builtin == "+"

    @property
    def arity(self) -> int:
        """Number of operands (2)."""
        return 2

    def _fresh_key(self) -> str:
        """Stable hex digest: the canonical string for built-ins, else the callable."""
        if self.builtin is not None:
            return descriptor_key(self.kind, builtin=self.builtin)
        return descriptor_key(self.kind, op=self.op, name=self.name)

    def with_name(self, name: str | None) -> ScanOperator:
        """Return a copy with another ``name``."""
        return attrs.evolve(self, name=name)

    def __call__(self, a: Any, b: Any) -> Any:
        """Compute ``a op b`` on the host (NumPy semantics for built-ins)."""
        if self.builtin is not None:
            return _HOST_UFUNCS[self.builtin](a, b)
        fn = python_function(self.op)
        return (fn if fn is not None else self.op)(a, b)  # type: ignore[misc]


#: Any descriptor.
Descriptor: TypeAlias = StatefulFunction[Any, Any] | StatelessFunction[Any] | ScanOperator
