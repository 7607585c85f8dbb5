# SPDX-License-Identifier: Apache-2.0
"""The overloads of ``scan.block.load`` and ``store`` in ``block.pyi`` (see :mod:`scan._stubgen`).

Each :class:`~scan._primitives._stubs_common.Overload` lists every parameter
of the entry point in the call table's order, with its type in that overload
and whether the overload requires it; the names, defaults and keyword-only
flags are checked against :data:`scan._calls.CALLS` when the stubs are
generated. The numeric overload comes first, then the record one
(``np.void``): see the notes at the top of ``block.pyi``. ``scan.block``'s
load and store then take zipped tile I/O: a tuple of arrays (one per field)
and record items, and a store of the fields ``field=`` names. Last, both
modules' load and store convert: a float16 or bfloat16 array and float32 or
float64 items.
"""

from __future__ import annotations

from .._stubs_common import Arg, Overload, StubFunction, opt, req, tail

__all__ = ["FUNCTIONS", "WARP_FUNCTIONS"]

_INDEX = "int | np.integer[Any]"
_TAIL = tail("_TileAlgorithmLike")
#: scan.warp's load and store: the warp's algorithms and options
_WARP_TAIL = (
    opt("algorithm", "_WarpIOAlgorithmLike | None"),
    opt("lanes", "int"),
    opt("threads", "_Threads | None"),
    opt("items_per_thread", "int | None"),
)


_ARRAYS = "tuple[NDArray[Any], ...]"


def _own_storage(tail: tuple[Arg, ...]) -> tuple[Arg, ...]:
    """`tail` without ``temp_storage=``: zipped tile I/O owns its temp storage."""
    return tuple(opt(a.name, "None") if a.name == "temp_storage" else a for a in tail)


def _zipped_load(tail: tuple[Arg, ...]) -> Overload:
    """A tuple of arrays, one per field of the record items."""
    return Overload(
        (
            req("src", _ARRAYS),
            req("offset", _INDEX),
            req("items", "NDArray[np.void]"),
            opt("valid_items", f"{_INDEX} | None"),
            opt("oob_default", "_RecordInitialLike | None"),
            *_own_storage(tail),
        ),
        "None",
    )


def _zipped_stores(tail: tuple[Arg, ...]) -> tuple[Overload, ...]:
    """One field to its array (``field=`` required), and fields to a tuple of arrays."""
    return (
        Overload(
            (
                req("dst", "NDArray[Any]"),
                req("offset", _INDEX),
                req("items", "NDArray[np.void]"),
                opt("valid_items", f"{_INDEX} | None"),
                req("field", "str"),
                *_own_storage(tail),
            ),
            "None",
        ),
        Overload(
            (
                req("dst", _ARRAYS),
                req("offset", _INDEX),
                req("items", "NDArray[np.void]"),
                opt("valid_items", f"{_INDEX} | None"),
                opt("field", "str | tuple[str, ...] | None"),
                *_own_storage(tail),
            ),
            "None",
        ),
    )


def _converting(name: str, tail: tuple[Arg, ...], field: tuple[Arg, ...]) -> Overload:
    """A half-precision array and float32 or float64 items: a load widens, a store rounds.

    mypy reports that the store's overload "will never be matched" (the
    numeric overload's ``NDArray[ValueT]`` looks broader to its check); it is
    matched: tests/typing/pass/half_precision.py stores float32 items to
    float16 and bfloat16 arrays.
    """
    array = "src" if name == "load" else "dst"
    extra = (opt("oob_default", "int | float | np.floating[Any] | None"),) if name == "load" else ()
    return Overload(
        (
            req(array, "_HalfArray"),
            req("offset", _INDEX),
            req("items", "_WideItems"),
            opt("valid_items", f"{_INDEX} | None"),
            *extra,
            *field,
            *tail,
        ),
        "None",
        ignore="" if name == "load" else "overload-cannot-match",
    )


def _functions(tail: tuple[Arg, ...], *, zipped: bool = True) -> tuple[StubFunction, ...]:
    # scan.block's store has field= (None in its numeric and record overloads)
    field = (opt("field", "None"),) if zipped else ()
    return (
        StubFunction(
            "load",
            (
                Overload(
                    (
                        req("src", "NDArray[ValueT]"),
                        req("offset", _INDEX),
                        req("items", "_SameDtype[ValueT]"),
                        opt("valid_items", f"{_INDEX} | None"),
                        opt("oob_default", "ValueT | int | float | None"),
                        *tail,
                    ),
                    "None",
                ),
                Overload(
                    (
                        req("src", "NDArray[np.void]"),
                        req("offset", _INDEX),
                        req("items", "NDArray[np.void]"),
                        opt("valid_items", f"{_INDEX} | None"),
                        opt("oob_default", "_RecordInitialLike | None"),
                        *tail,
                    ),
                    "None",
                ),
                *((_zipped_load(tail),) if zipped else ()),
                _converting("load", tail, ()),
            ),
        ),
        StubFunction(
            "store",
            (
                Overload(
                    (
                        req("dst", "NDArray[ValueT]"),
                        req("offset", _INDEX),
                        req("items", "_SameDtype[ValueT]"),
                        opt("valid_items", f"{_INDEX} | None"),
                        *field,
                        *tail,
                    ),
                    "None",
                ),
                Overload(
                    (
                        req("dst", "NDArray[np.void]"),
                        req("offset", _INDEX),
                        req("items", "NDArray[np.void]"),
                        opt("valid_items", f"{_INDEX} | None"),
                        *field,
                        *tail,
                    ),
                    "None",
                ),
                *(_zipped_stores(tail) if zipped else ()),
                _converting("store", tail, field),
            ),
        ),
    )


FUNCTIONS: tuple[StubFunction, ...] = _functions(_TAIL)
#: ``warp.pyi``'s ``load`` and ``store``
WARP_FUNCTIONS: tuple[StubFunction, ...] = _functions(_WARP_TAIL, zipped=False)
