# SPDX-License-Identifier: Apache-2.0
"""The host cases reach every path of the generated code (no build: the plans only).

If a list of cases loses the last case that reaches one of these paths, this
test names it, so the host tests keep running all of the code the generator
writes.
"""

from __future__ import annotations

from typing import Any

from hostexec import families as fam
from hostexec import lookback as lb
from hostexec import suite as host_cases
from hostexec.kernels import scan_case_plans
from scan._primitives.block_reduce import ALGORITHMS as REDUCE_ALGORITHMS
from scan._primitives.block_scan._unit import callback_barrier_suffices, thread_items_first
from scan._primitives.tile_io._unit import ZIPPED_OWN_STORAGE, whole_warps_partial
from scan._primitives.warp_io import ALGORITHMS as WARP_IO_ALGORITHMS
from scan._primitives.warp_scan import LANES
from scan._vocab import IO_ALGORITHMS, SCAN_ALGORITHMS


def _plans() -> list[Any]:
    plans: list[Any] = []
    for case in host_cases.CASES:
        plans += scan_case_plans(case)
    for z in host_cases.ZIPS:
        plans += fam._zip_plans(z)
    for r in host_cases.REDUCES:
        plans += fam._reduce_plans(r)
    for w in host_cases.WARPS:
        plans += fam._warp_plans(w)
    for c in host_cases.LOOKBACKS:
        plans += lb._plans(c)
    return [p for p in plans if p is not None]


def _paths(plan: Any) -> set[str]:
    kind = type(plan).__name__
    out = {kind}
    if kind == "ScanPlan":
        out.add(f"scan {plan.algorithm}")
        out.add(f"scan {plan.mode}")
        flags = {
            "reverse one item": plan.reverse and plan.items_per_thread == 1,
            "reverse items": plan.reverse and plan.items_per_thread > 1,
            "look-back": plan.lookback and not plan.reverse,
            "reverse look-back": plan.lookback and plan.reverse,
            "look-back seeded": plan.lookback and plan.has_initial_value,
            "thread items first": thread_items_first(plan),
            "callback barrier suffices": callback_barrier_suffices(plan),
            "stateful": plan.stateful,
            "stateless": plan.prefix_op is not None and not plan.stateful,
            "initial value": plan.has_initial_value,
            "block aggregate": plan.has_block_aggregate,
            "caller temp": plan.caller_temp,
            "no auto_sync": not plan.auto_sync,
            "scalar": plan.scalar,
            "records": plan.value_dtype.names is not None,
            "user operator": not plan.scan_op.is_builtin,
        }
        out |= {f"scan {name}" for name, reached in flags.items() if reached}
    elif kind == "TileIOPlan":
        out.add(f"{plan.direction} {plan.algorithm}")
        if plan.zipped:
            fields = plan.field_plans()
            nbytes = sum(p.tile_items * p.value_dtype.itemsize for p in fields)
            out.add(f"zipped {plan.direction}")
            out.add("zipped shared buffer" if nbytes > ZIPPED_OWN_STORAGE else "zipped buffers")
        if plan.unaligned is not None:
            out.add(f"{plan.direction} vectorize else {plan.unaligned}")
        if whole_warps_partial(plan):
            out.add(f"{plan.direction} whole warps of a partial tile")
        if plan.has_oob_default:
            out.add("load oob_default")
    elif kind == "ReducePlan":
        out.add(f"reduce {plan.algorithm}")
        out |= {
            f"reduce {n}" for n in ("has_valid", "broadcast", "caller_temp") if getattr(plan, n)
        }
        if plan.value_dtype.names is not None:
            out.add("reduce records")
        if plan.items_dtype is not None:
            out.add("reduce scalar dtype=" if plan.scalar else "reduce items dtype=")
    elif kind == "WarpScanPlan":
        out.add(f"warp scan lanes {plan.lanes}")
        out |= {
            f"warp scan {n}"
            for n, reached in {
                "prefix": plan.prefix_op is not None,
                "initial value": plan.has_initial_value,
                "aggregate": plan.has_warp_aggregate,
                "exclusive": plan.mode == "exclusive",
            }.items()
            if reached
        }
    elif kind == "WarpIOPlan":
        out.add(f"warp {plan.direction} {plan.algorithm}")
        if plan.vector_stores > 1:
            out.add("warp vector stores")
    return out


def test_every_generated_path_is_run() -> None:
    reached: set[str] = set()
    for plan in _plans():
        reached |= _paths(plan)
    expected = {f"scan {a}" for a in SCAN_ALGORITHMS}
    expected |= {f"{d} {a}" for d in ("load", "store") for a in IO_ALGORITHMS}
    expected |= {f"reduce {a}" for a in REDUCE_ALGORITHMS}
    expected |= {f"warp scan lanes {n}" for n in LANES}
    expected |= {f"warp {d} {a}" for d in ("load", "store") for a in WARP_IO_ALGORITHMS}
    expected |= {
        f"scan {name}"
        for name in (
            "inclusive",
            "exclusive",
            "reverse one item",
            "reverse items",
            "look-back",
            "reverse look-back",
            "look-back seeded",
            "thread items first",
            "callback barrier suffices",
            "stateful",
            "stateless",
            "initial value",
            "block aggregate",
            "caller temp",
            "no auto_sync",
            "scalar",
            "records",
            "user operator",
        )
    }
    expected |= {
        "zipped load",
        "zipped store",
        "zipped shared buffer",
        "zipped buffers",
        "load vectorize else warp_transpose",
        "store vectorize else warp_transpose",
        "load whole warps of a partial tile",
        "store whole warps of a partial tile",
        "load oob_default",
        "reduce has_valid",
        "reduce broadcast",
        "reduce caller_temp",
        "reduce records",
        "reduce items dtype=",
        "reduce scalar dtype=",
        "warp scan prefix",
        "warp scan initial value",
        "warp scan aggregate",
        "warp scan exclusive",
        "warp vector stores",
    }
    assert expected - reached == set()
