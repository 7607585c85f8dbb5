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

from ._stubs_common import Overload, StubFunction, opt, req, tail

__all__ = ["FUNCTIONS"]

_INDEX = "int | np.integer[Any]"
_TAIL = tail("_TileAlgorithmLike")

FUNCTIONS: tuple[StubFunction, ...] = (
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
                    *_TAIL,
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
                    *_TAIL,
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
                    *_TAIL,
                ),
                "None",
            ),
            Overload(
                (
                    req("dst", "NDArray[np.void]"),
                    req("offset", _INDEX),
                    req("items", "NDArray[np.void]"),
                    opt("valid_items", f"{_INDEX} | None"),
                    *_TAIL,
                ),
                "None",
            ),
        ),
    ),
)
