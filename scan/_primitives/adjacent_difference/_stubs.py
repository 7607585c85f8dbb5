# SPDX-License-Identifier: Apache-2.0
"""The overloads of ``scan.block.adjacent_difference`` in ``block.pyi`` (see :mod:`scan._stubgen`).

One overload: the items, ``out`` and ``carry`` local arrays of one scalar
type, ``op`` the default ``"-"`` or a function of two items of it; the call
returns nothing.
"""

from __future__ import annotations

from .._stubs_common import Overload, StubFunction, banner, opt, req

__all__ = ["FUNCTIONS"]

FUNCTIONS: tuple[StubFunction, ...] = (
    StubFunction(
        "adjacent_difference",
        (
            banner("adjacent_difference"),
            Overload(
                (
                    req("items", "NDArray[ValueT]"),
                    opt("out", "NDArray[ValueT] | None"),
                    opt("op", 'Literal["-"] | ScanOperator | Callable[[ValueT, ValueT], ValueT]'),
                    opt("carry", "NDArray[ValueT] | None"),
                    opt("temp_storage", "_TempStorage | None"),
                    opt("threads", "_Threads | None"),
                    opt("items_per_thread", "int | None"),
                    opt("auto_sync", "bool"),
                ),
                "None",
            ),
        ),
    ),
)
