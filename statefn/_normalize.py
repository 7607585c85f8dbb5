# SPDX-License-Identifier: Apache-2.0
"""Every way to make a descriptor: the decorators and the one normalising entry point.

:func:`normalize` turns any accepted spelling into a descriptor for a role;
everything downstream sees only descriptors. The decorators
:func:`stateful`, :func:`stateless` and :func:`scan_op` are the declaration
spellings users write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeAlias, TypeVar, overload

import numpy as np
import numpy.typing as npt

from ._arity import python_function, require_function
from ._descriptors import (
    BUILTIN_ALIASES,
    Descriptor,
    ScanOperator,
    StatefulFunction,
    StatelessFunction,
    StateT,
    ValueT,
    builtin_for_callable,
)
from ._dtypes import as_state_dtype
from ._errors import NotCallableError, RoleError, describe_callable

__all__ = ["PrefixDescriptor", "Role", "normalize", "scan_op", "stateful", "stateless"]

#: The roles a callable can be normalised for.
Role: TypeAlias = Literal["prefix", "scan_op"]
ValueT_co = TypeVar("ValueT_co", bound=np.generic, covariant=True)
# The state types of _StatefulDecorator's overloads: integers, half-precision
# floats, complex numbers, and the rest.
_IntegerStateT = TypeVar("_IntegerStateT", bound=np.integer[Any])
_OtherStateT = TypeVar("_OtherStateT", np.float32, np.float64, np.void)
_ComplexStateT = TypeVar("_ComplexStateT", np.complex64, np.complex128)
_HalfOrComplexStateT = TypeVar("_HalfOrComplexStateT", np.complex64, np.complex128)
#: The value type of a callback with an integer state (named for mypy's message).
IntegerStateNeedsIntegerValues = TypeVar("IntegerStateNeedsIntegerValues", bound=np.integer[Any])
#: The value type of a callback with a float16 state: float16 (a wider one would be
#: truncated; bfloat16's range exceeds float16's). Named for mypy's message.
Float16StateNeedsFloat16Values = TypeVar("Float16StateNeedsFloat16Values", bound=np.float16)
#: The value type of a callback with a complex state: complex (a real value could
#: not hold the complex prefix the state carries). Named for mypy's message.
ComplexStateNeedsComplexValues = TypeVar(
    "ComplexStateNeedsComplexValues", bound=np.complexfloating[Any, Any]
)
if TYPE_CHECKING:
    # bfloat16 as a type: numba-stubs' companion stubs of ml_dtypes declare it a class
    from ml_dtypes import bfloat16

    #: The value type of a callback with a bfloat16 state: bfloat16.
    BFloat16StateNeedsBFloat16Values = TypeVar("BFloat16StateNeedsBFloat16Values", bound=bfloat16)

#: What :func:`normalize` returns for ``role="prefix"``.
PrefixDescriptor: TypeAlias = StatefulFunction[Any, Any] | StatelessFunction[Any]


# ---------------------------------------------------------------- decorators


class _StatefulFunctor(Protocol[ValueT_co]):
    """A functor class's instances: ``__call__(self, block_aggregate)``, ``self`` the state."""

    def __call__(self, block_aggregate: Any, /) -> ValueT_co: ...


class _RecordStatefulFunctor(Protocol):
    """A functor class for record values: ``__call__`` returns a tuple of the fields."""

    def __call__(self, block_aggregate: Any, /) -> tuple[Any, ...]: ...


#: What a callback for record values returns (a tuple of numbers, one per field,
#: in field order); its record operands are named tuples, typed ``Any``. Static
#: types see a record value as ``np.void``, the type NumPy gives a record.
_RecordResult: TypeAlias = tuple[Any, ...]


class _StatefulDecorator(Generic[StateT]):
    """What ``stateful(dtype)`` returns: applies the declaration to a function or functor class."""

    __slots__ = ("_name", "_state_dtype")

    def __init__(self, state_dtype: Any, name: str | None) -> None:
        self._state_dtype = state_dtype
        self._name = name

    # Typed as the callback's shape so a wrong arity is a static error too; a
    # functor class is matched first (a class is also callable, as its constructor).
    # A callback for record values returns a tuple; the numeric overloads come
    # first so that their errors are the ones reported. The record overloads give
    # StatefulFunction[StateT, Any]: that is also what the numeric overload gives
    # a callback whose block_aggregate is annotated Any, and mypy keeps a result
    # that every overload matched by an Any argument agrees on (different
    # results would be erased to StatefulFunction[Any, Any], losing StateT).
    # An integer state takes integer values only (the plan refuses float values:
    # the state would truncate their aggregate): mypy keeps the overloads whose
    # self type fits the state, so for an integer state a float callback fails
    # its overload with "Value of type variable "IntegerStateNeedsIntegerValues"
    # ... cannot be "floating[_32Bit]"".
    @overload
    def __call__(
        self: _StatefulDecorator[_IntegerStateT],
        op: type[_StatefulFunctor[IntegerStateNeedsIntegerValues]],
    ) -> StatefulFunction[_IntegerStateT, IntegerStateNeedsIntegerValues]: ...
    @overload
    def __call__(
        self: _StatefulDecorator[_OtherStateT], op: type[_StatefulFunctor[ValueT]]
    ) -> StatefulFunction[_OtherStateT, ValueT]: ...
    @overload
    def __call__(
        self: _StatefulDecorator[_HalfOrComplexStateT], op: type[_StatefulFunctor[ValueT]]
    ) -> StatefulFunction[_HalfOrComplexStateT, ValueT]: ...
    @overload
    def __call__(self, op: type[_RecordStatefulFunctor]) -> StatefulFunction[StateT, Any]: ...
    @overload
    def __call__(
        self: _StatefulDecorator[_IntegerStateT],
        op: Callable[
            [npt.NDArray[_IntegerStateT], IntegerStateNeedsIntegerValues],
            IntegerStateNeedsIntegerValues,
        ],
    ) -> StatefulFunction[_IntegerStateT, IntegerStateNeedsIntegerValues]: ...
    @overload
    def __call__(
        self: _StatefulDecorator[bfloat16],
        op: Callable[
            [npt.NDArray[bfloat16], BFloat16StateNeedsBFloat16Values],
            BFloat16StateNeedsBFloat16Values,
        ],
    ) -> StatefulFunction[bfloat16, BFloat16StateNeedsBFloat16Values]: ...
    @overload
    def __call__(
        self: _StatefulDecorator[_ComplexStateT],
        op: Callable[
            [npt.NDArray[_ComplexStateT], ComplexStateNeedsComplexValues],
            ComplexStateNeedsComplexValues,
        ],
    ) -> StatefulFunction[_ComplexStateT, ComplexStateNeedsComplexValues]: ...
    @overload
    def __call__(
        self: _StatefulDecorator[_OtherStateT],
        op: Callable[[npt.NDArray[_OtherStateT], ValueT], ValueT],
    ) -> StatefulFunction[_OtherStateT, ValueT]: ...
    @overload
    def __call__(
        self, op: Callable[[npt.NDArray[StateT], Any], _RecordResult]
    ) -> StatefulFunction[StateT, Any]: ...
    def __call__(self, op: Any) -> StatefulFunction[Any, Any]:
        return StatefulFunction(op, self._state_dtype, self._name)


class _Float16StatefulDecorator(Protocol):
    """What ``stateful(np.float16)`` is to static types: a callback of float16 values.

    A decorator of its own because NumPy's stubs make float16 a subtype of
    float32 (``floating[_16Bit]`` of ``floating[_32Bit]``): the float32 overloads
    of :class:`_StatefulDecorator` would take a float16 state beside float32
    values, whose aggregate it cannot hold (the plan refuses that).
    """

    @overload
    def __call__(
        self, op: type[_StatefulFunctor[Float16StateNeedsFloat16Values]], /
    ) -> StatefulFunction[np.float16, Float16StateNeedsFloat16Values]: ...
    @overload
    def __call__(
        self,
        op: Callable[
            [npt.NDArray[np.float16], Float16StateNeedsFloat16Values],
            Float16StateNeedsFloat16Values,
        ],
        /,
    ) -> StatefulFunction[np.float16, Float16StateNeedsFloat16Values]: ...


@overload
def stateful(
    state_dtype: type[np.float16] | np.dtype[np.float16], *, name: str | None = None
) -> _Float16StatefulDecorator: ...
@overload
def stateful(
    state_dtype: type[StateT], *, name: str | None = None
) -> _StatefulDecorator[StateT]: ...
@overload
def stateful(
    state_dtype: np.dtype[StateT], *, name: str | None = None
) -> _StatefulDecorator[StateT]: ...
@overload
def stateful(state_dtype: npt.DTypeLike, *, name: str | None = None) -> _StatefulDecorator[Any]: ...
def stateful(state_dtype: npt.DTypeLike, *, name: str | None = None) -> _StatefulDecorator[Any]:
    """Declare a stateful prefix callback ``op(state, block_aggregate)``.

    The decorated object is a function (``def`` or ``lambda``), a
    ``@cuda.jit(device=True)`` function, or a functor class whose
    ``__call__(self, block_aggregate)`` treats ``self`` as the one-item state
    array (``self[0]``), as in the reference design.

    Parameters
    ----------
    state_dtype : dtype-like
        The state's dtype, one of :data:`statefn.STATE_DTYPES` in any NumPy
        spelling. Checked now.
    name : str or None
        A label for messages (part of the key).

    Returns
    -------
    callable
        A decorator turning a function into a :class:`StatefulFunction`.

    Raises
    ------
    StateDtypeError
        At once, if *state_dtype* is not allowed.

    Examples
    --------
    >>> import numpy as np, statefn
    >>> @statefn.stateful(np.int64)
    ... def running_total(state, block_aggregate):
    ...     prefix = state[0]
    ...     state[0] = prefix + block_aggregate
    ...     return prefix
    >>> running_total.state_dtype
    dtype('int64')

    .. versionadded:: 0.1
    """
    return _StatefulDecorator(as_state_dtype(state_dtype), name)


class _StatelessDecorator(Protocol):
    """What ``stateless(name=...)`` returns: applies the declaration to a function."""

    @overload
    def __call__(self, op: Callable[[ValueT], ValueT], /) -> StatelessFunction[ValueT]: ...
    @overload
    def __call__(self, op: Callable[[Any], _RecordResult], /) -> StatelessFunction[Any]: ...


@overload
def stateless(
    op: Callable[[ValueT], ValueT], *, name: str | None = None
) -> StatelessFunction[ValueT]: ...
@overload
def stateless(
    op: Callable[[Any], _RecordResult], *, name: str | None = None
) -> StatelessFunction[Any]: ...
@overload
def stateless(op: None = None, *, name: str | None = None) -> _StatelessDecorator: ...
def stateless(
    op: Callable[[Any], Any] | None = None, *, name: str | None = None
) -> StatelessFunction[Any] | Callable[[Callable[[Any], Any]], StatelessFunction[Any]]:
    """Declare a stateless prefix callback ``op(block_aggregate)``; bare or called.

    Parameters
    ----------
    op : callable or None
        The function, when used bare (``@stateless``).
    name : str or None
        A label for messages (part of the key).

    Returns
    -------
    StatelessFunction or callable
        The descriptor, or a decorator producing it.

    .. versionadded:: 0.1
    """
    if op is None:
        return lambda fn: StatelessFunction(fn, name)
    return StatelessFunction(op, name)


def _scan_op_from(op: object, name: str | None) -> ScanOperator:
    spelled = builtin_for_callable(op)
    if spelled is not None:
        return ScanOperator(builtin=spelled, name=name)
    return ScanOperator(op=op, name=name)  # type: ignore[arg-type]


@overload
def scan_op(op: Callable[..., object], *, name: str | None = None) -> ScanOperator: ...
@overload
def scan_op(
    op: None = None, *, name: str | None = None
) -> Callable[[Callable[..., object]], ScanOperator]: ...
def scan_op(
    op: Callable[..., object] | None = None, *, name: str | None = None
) -> ScanOperator | Callable[[Callable[..., object]], ScanOperator]:
    """Declare a scan operator ``op(a, b)``; bare or called.

    ``operator.add``, ``min``, ``np.maximum`` and the other recognised
    built-ins become built-in operators (CUB supplies them).

    Parameters
    ----------
    op : callable or None
        The function, when used bare (``@scan_op``).
    name : str or None
        A label for messages (part of the key of user operators).

    Returns
    -------
    ScanOperator or callable
        The descriptor, or a decorator producing it.

    .. versionadded:: 0.1
    """
    if op is None:
        return lambda fn: _scan_op_from(fn, name)
    return _scan_op_from(op, name)


# ----------------------------------------------------------------- normalize


@overload
def normalize(obj: object, *, role: Literal["prefix"]) -> PrefixDescriptor: ...
@overload
def normalize(obj: object, *, role: Literal["scan_op"]) -> ScanOperator: ...
@overload
def normalize(obj: object, *, role: Role) -> Descriptor: ...
def normalize(obj: object, *, role: Role) -> Descriptor:
    """Turn any accepted spelling of a callback into a descriptor for *role*.

    Parameters
    ----------
    obj : object
        A descriptor (returned as is after the role check), a Python function,
        a ``@cuda.jit(device=True)`` dispatcher, or for ``role="scan_op"`` a
        built-in spelling: a string (``"+"``, ``"add"``, ``"min"``, ...),
        ``operator.add``/``mul``/``and_``/``or_``/``xor``, ``min``/``max``, or a
        NumPy ufunc (``np.add``, ``np.minimum``, ``np.bitwise_xor``, ...).
    role : {"prefix", "scan_op"}
        ``"prefix"``: a :class:`StatefulFunction` or :class:`StatelessFunction`
        (a plain function becomes a stateless one). ``"scan_op"``: a
        :class:`ScanOperator`.

    Returns
    -------
    StatefulFunction, StatelessFunction or ScanOperator
        The descriptor.

    Raises
    ------
    RoleError
        A descriptor or spelling that cannot play *role*.
    UnknownOperatorError
        A string that names no built-in operator.
    NotCallableError
        Something that is not a compilable callable.
    ArityError
        A function whose parameters do not fit the role.

    .. versionadded:: 0.1
    """
    if role == "prefix":
        return _normalize_prefix(obj)
    if role == "scan_op":
        return _normalize_scan_op(obj)
    raise ValueError(f"role must be 'prefix' or 'scan_op'; got {role!r}.")


def _normalize_prefix(obj: object) -> PrefixDescriptor:
    if isinstance(obj, StatefulFunction | StatelessFunction):
        return obj
    if isinstance(obj, ScanOperator):
        raise RoleError(
            f"{obj!r} is a scan operator, offered as a prefix callback; expected a "
            "StatefulFunction or a function op(block_aggregate). Pass it as scan_op= "
            "instead, or declare the callback with @statefn.stateful(state_dtype)."
        )
    if isinstance(obj, str):
        if obj in BUILTIN_ALIASES:
            raise RoleError(
                f"{obj!r} names a scan operator, offered as a prefix callback; expected "
                "a StatefulFunction or a function op(block_aggregate). Pass it as scan_op=."
            )
        raise NotCallableError(
            f"a prefix callback must be callable; got the string {obj!r}. Pass a "
            "function op(block_aggregate) or a @statefn.stateful(...) callback."
        )
    require_function(obj, role="prefix callback")
    return StatelessFunction(obj)  # type: ignore[arg-type]


def _normalize_scan_op(obj: object) -> ScanOperator:
    if isinstance(obj, ScanOperator):
        return obj
    if isinstance(obj, StatefulFunction):
        raise RoleError(
            f"stateful callback {describe_callable(obj.op)} offered as a scan operator; "
            "expected a function op(a, b) or a built-in such as '+' (scan operators "
            "carry no state). Pass it as prefix_op= with prefix_state=, or pass a "
            "plain binary function."
        )
    if isinstance(obj, StatelessFunction):
        raise RoleError(
            f"stateless callback {describe_callable(obj.op)} offered as a scan operator; "
            "expected a function op(a, b) or a built-in such as '+'. Pass it as "
            "prefix_op=, or pass a plain binary function as the scan operator."
        )
    if isinstance(obj, str):
        # the converter canonicalises aliases and rejects unknown strings
        return ScanOperator(builtin=obj)
    spelled = builtin_for_callable(obj)
    if spelled is not None:
        return ScanOperator(builtin=spelled)
    if python_function(obj) is None:
        require_function(obj, role="scan operator")
    return ScanOperator(op=obj)  # type: ignore[arg-type]
