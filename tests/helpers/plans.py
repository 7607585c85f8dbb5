# SPDX-License-Identifier: Apache-2.0
"""Plans for tests: :func:`scan_plan` (an int32 ``inclusive_sum`` of 4 items at 128
threads, ``raking``, with any of :func:`plan_scan`'s arguments overridden)
and :func:`tile_plan`, :func:`zipped_plan`."""

from __future__ import annotations

from typing import Any

import numpy as np

from scan._plan import ArrayFact, TupleFact, ZipFact
from scan._primitives.block_reduce import ReducePlan, plan_reduce
from scan._primitives.block_scan._plan import ScanPlan, plan_scan
from scan._primitives.tile_io._plan import TileIOPlan, plan_tile_io
from scan._primitives.warp_scan import WarpScanPlan, plan_warp_scan


def scan_plan(**over: Any) -> ScanPlan:
    """:func:`plan_scan` with these defaults, `over` replacing any of them."""
    kwargs: dict[str, Any] = {
        "function": "inclusive_sum",
        "values": ArrayFact(np.int32, 1, 4),
        "out": None,
        "mode": "inclusive",
        "scan_op": "+",
        "initial_value": None,
        "prefix_op": None,
        "prefix_state": None,
        "block_aggregate": None,
        "algorithm": "raking",
        "temp_storage": None,
        "block": (128, 1, 1),
    }
    kwargs.update(over)
    return plan_scan(**kwargs)


def tile_plan(
    direction: str, dtype: Any, threads: int, items: int, algorithm: str | None
) -> TileIOPlan:
    """:func:`plan_tile_io` for a 1-D array and library-owned storage."""
    dt = np.dtype(dtype)
    return plan_tile_io(
        function=direction,  # type: ignore[arg-type]
        array=ArrayFact(dtype=dt, ndim=1),
        items=ArrayFact(dtype=dt, ndim=1, length=items),
        algorithm=algorithm,
        oob_default=None,
        temp_storage=None,
        block=(threads, 1, 1),
    )


def reduce_plan(**over: Any) -> ReducePlan:
    """:func:`~scan._primitives.block_reduce.plan_reduce`: float32 max, 4 items, 128 threads."""
    kwargs: dict[str, Any] = {
        "function": "reduce",
        "items": ArrayFact(np.float32, 1, 4),
        "op": "max",
        "valid": None,
        "broadcast": False,
        "algorithm": None,
        "temp_storage": None,
        "block": (128, 1, 1),
    }
    kwargs.update(over)
    return plan_reduce(**kwargs)


def warp_plan(**over: Any) -> WarpScanPlan:
    """An int32 inclusive sum of 4 items a thread over 32-lane warps, 64 threads."""
    kwargs: dict[str, Any] = {
        "function": "warp.inclusive_sum",
        "values": ArrayFact(np.int32, 1, 4),
        "out": None,
        "mode": "inclusive",
        "scan_op": "+",
        "initial_value": None,
        "prefix_op": None,
        "prefix_state": None,
        "warp_aggregate": None,
        "lanes": None,
        "block": (64, 1, 1),
    }
    kwargs.update(over)
    return plan_warp_scan(**kwargs)


#: The record of the zipped tile I/O tests: a linear recurrence's (a, b) pair.
ZIP_PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def zipped_plan(
    direction: str,
    algorithm: str | None = None,
    *,
    record: Any = ZIP_PAIR,
    field: Any = None,
    threads: int = 256,
    items: int = 4,
    oob: bool = False,
) -> TileIOPlan:
    """:func:`plan_tile_io` of zipped tile I/O: one array per field of `record`
    (those `field` names, for a store)."""
    record = np.dtype(record)
    names = record.names if field is None else ((field,) if isinstance(field, str) else field)
    arrays = tuple(ArrayFact(record.fields[n][0], 1) for n in names)
    return plan_tile_io(
        function=direction,  # type: ignore[arg-type]
        array=ZipFact(arrays),
        items=ArrayFact(record, 1, items),
        algorithm=algorithm,
        oob_default=TupleFact((np.float64,) * len(record.names)) if oob else None,
        temp_storage=None,
        block=(threads, 1, 1),
        field=field,
    )
