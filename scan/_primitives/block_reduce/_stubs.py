# SPDX-License-Identifier: Apache-2.0
"""The overloads of ``scan.block.reduce`` and ``sum`` in ``block.pyi`` (see :mod:`scan._stubgen`).

Each :class:`~scan._primitives._stubs_common.Overload` lists every parameter
of the entry point in the call table's order, with its type in that overload
and whether the overload requires it. A local array comes first, then one
scalar, then a Python ``int``/``float``, each returning the items' type; then
the same with ``dtype=``, returning the dtype's scalar type (``_AccT``);
``reduce`` then takes records (``np.void``) with an operator returning a
tuple. ``sum`` has no record overload (records have no ``+``).
"""

from __future__ import annotations

from .._stubs_common import Arg, Overload, StubFunction, banner, opt, req, tail

__all__ = ["DECLARATIONS", "FUNCTIONS"]

#: The family's aliases, after the common ones (``_ReduceAlgorithmCodes`` is
#: generated from the spec's algorithms).
DECLARATIONS = (
    "_ReduceAlgorithmLike: TypeAlias = _ReduceAlgorithmCodes | Sequence[Never]\n"
    "# dtype= of reduce and sum: the scalar type the reduction accumulates in and returns\n"
    '_AccT = TypeVar("_AccT", bound=np.number[Any])\n'
    "_AccumulatorLike: TypeAlias = type[_AccT] | np.dtype[_AccT]\n"
    "_AccumulatorOpLike: TypeAlias = (\n"
    "    _ScanOpCodes | ScanOperator | np.ufunc | Callable[[_AccT, _AccT], _AccT]\n"
    ")\n"
)

_INDEX = "int | np.integer[Any]"
_NUMBERS = "NDArray[np.number[Any]] | np.number[Any] | int | float"


def _options(dtype: str | None) -> tuple[Arg, ...]:
    return (
        opt("valid", f"{_INDEX} | None"),
        opt("broadcast", "bool"),
        opt("dtype", "None") if dtype is None else req("dtype", dtype),
        *tail("_ReduceAlgorithmLike"),
    )


def _reduce(items: str, op: str, returns: str, dtype: str | None = None) -> Overload:
    return Overload((req("items", items), req("op", op), *_options(dtype)), returns)


def _sum(items: str, returns: str, dtype: str | None = None) -> Overload:
    args: tuple[Arg, ...] = (req("items", items), *_options(dtype))
    return Overload(args, returns)


FUNCTIONS: tuple[StubFunction, ...] = (
    StubFunction(
        "reduce",
        (
            banner("reduce"),
            _reduce("NDArray[ValueT]", "_ScanOpLike[ValueT]", "ValueT"),
            _reduce("ValueT", "_ScanOpLike[ValueT]", "ValueT"),
            _reduce("_PyScalarT", "_PyScanOpLike[_PyScalarT]", "_PyScalarT"),
            _reduce(_NUMBERS, "_AccumulatorOpLike[_AccT]", "_AccT", "_AccumulatorLike[_AccT]"),
            _reduce("NDArray[np.void]", "_RecordScanOpLike", "np.void"),
            _reduce("_RecordT", "_RecordScanOpLike", "_RecordT"),
        ),
    ),
    StubFunction(
        "sum",
        (
            banner("sum"),
            _sum("NDArray[ValueT]", "ValueT"),
            _sum("ValueT", "ValueT"),
            _sum("_PyScalarT", "_PyScalarT"),
            _sum(_NUMBERS, "_AccT", "_AccumulatorLike[_AccT]"),
        ),
    ),
)
