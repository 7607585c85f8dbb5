# SPDX-License-Identifier: Apache-2.0
"""The overloads of ``scan.block.flag_heads`` in ``block.pyi`` (see :mod:`scan._stubgen`).

One overload: bool or integer flags, items and ``carry`` of one scalar type,
``op`` a predicate of two items of it; the call returns nothing.
"""

from __future__ import annotations

from .._stubs_common import Overload, StubFunction, banner, opt, req

__all__ = ["FUNCTIONS"]

FUNCTIONS: tuple[StubFunction, ...] = (
    StubFunction(
        "flag_heads",
        (
            banner("flag_heads"),
            Overload(
                (
                    req("flags", "NDArray[np.bool_] | NDArray[np.integer[Any]]"),
                    req("items", "NDArray[ValueT]"),
                    opt("op", "ScanOperator | Callable[[ValueT, ValueT], object] | None"),
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
