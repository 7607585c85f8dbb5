# SPDX-License-Identifier: Apache-2.0
"""The overloads of ``scan.block.load`` and ``store`` in ``block.pyi`` (see :mod:`scan._stubgen`).

Each :class:`~scan._primitives._stubs_common.Overload` lists every parameter
of the entry point in the call table's order, with its type in that overload
and whether the overload requires it; the names, defaults and keyword-only
flags are checked against :data:`scan._calls.CALLS` when the stubs are
generated. The numeric overload comes first, then the record one
(``np.void``): see the notes at the top of ``block.pyi``.
"""

from __future__ import annotations

from ._stubs_common import Arg, Overload, StubFunction, opt, req, tail

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


def _functions(tail: tuple[Arg, ...]) -> tuple[StubFunction, ...]:
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
                        *tail,
                    ),
                    "None",
                ),
            ),
        ),
    )


FUNCTIONS: tuple[StubFunction, ...] = _functions(_TAIL)
#: ``warp.pyi``'s ``load`` and ``store``
WARP_FUNCTIONS: tuple[StubFunction, ...] = _functions(_WARP_TAIL)
