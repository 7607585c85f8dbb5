# SPDX-License-Identifier: Apache-2.0
"""A scan plan for tests: an int32 ``inclusive_sum`` of 4 items at 128 threads, ``raking``,
with any of :func:`scan._plan.plan_scan`'s arguments overridden."""

from __future__ import annotations

from typing import Any

import numpy as np

from scan._plan import ArrayFact, ScanPlan, plan_scan


def scan_plan(**over: Any) -> ScanPlan:
    """:func:`scan._plan.plan_scan` with these defaults, `over` replacing any of them."""
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
