# SPDX-License-Identifier: Apache-2.0
"""Warp scans (:mod:`scan.warp`) in numba's CUDA simulator.

The lanes of the thread's logical warp meet (not the whole block, and with no
barrier): the last to arrive computes every lane's partial and the warp
aggregate (:class:`scan._primitives.block_scan._sim.ScanRecord`); each lane
then calls the prefix callback in turn, lane 0's return seeds the warp's
scan, and each lane finishes its items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._spec import SimEngine
from .._sim_common import CONTRACT_ENV, scalar_operand
from ..block_scan._sim import (
    ScanRecord,
    check_carried,
    delivered,
    items_to_check,
    run_prefix,
    thread_results,
)

__all__ = ["warp_scan_call"]


def warp_scan_call(sim: SimEngine, function: str, bound: Mapping[str, Any]) -> Any:
    """Run one :mod:`scan.warp` scan for the calling simulated thread."""
    thread = sim.current_thread(function)
    sim.clear_branch()
    launch = sim.launch_block(thread)
    memory = {"prefix_state": sim.memory(bound.get("prefix_state"))}
    options = {k: sim.pinned(thread, sim.unwrap(v)) for k, v in bound.items()}
    with np.errstate(all="ignore"):
        plan = sim.plan(function, options, launch, memory)
        lanes = sim.warp_lanes_error(plan, options["values"])
        if lanes is not None and sim.contract_checks():
            raise sim.contract_error(lanes)
        if plan.prefix_op is not None:
            sim.note_carried_scan(thread)
            check_carried(sim, plan, options)
        return _warp_scan(sim, thread, plan, options)


def _warp_scan(sim: SimEngine, thread: Any, plan: Any, options: Mapping[str, Any]) -> Any:
    dtype = plan.value_dtype
    values = options["values"]
    rank = sim.rank(thread)
    lane = rank % plan.lanes
    first = rank - lane  # the logical warp's lane 0
    if plan.scalar:
        items = np.array([values], dtype=dtype)
    else:
        items = np.array(values[: plan.items_per_thread], dtype=dtype)
    unfilled = items_to_check(sim, plan, values)
    initial = None
    if plan.has_initial_value:
        initial = scalar_operand(plan.function, "initial_value", options["initial_value"], dtype)

    block = sim.block_state(thread, plan.threads)
    # the calls of each logical warp, by (first rank, call number); warp scans made, per thread
    warp_calls: dict[tuple[int, int], ScanRecord] = block.records("warp_calls", dict)
    sequence: dict[int, int] = block.records("warp_sequence", dict)
    seq = sequence.get(rank, 0)
    sequence[rank] = seq + 1
    with block.lock:
        call = warp_calls.get((first, seq))
        if call is None:
            call = warp_calls[(first, seq)] = ScanRecord(plan.function, plan.lanes)
    with call.cond:
        if call.function != plan.function and call.mismatch is None:
            call.mismatch = call.function
        call.plans[lane] = plan
        call.items[lane] = items
        call.unfilled[lane] = unfilled
        call.states[lane] = options.get("prefix_state")
        if lane == 0:
            call.initial_value = initial
        call.arrived += 1
        last = call.arrived == plan.lanes
    if last:
        with call.cond:
            try:
                if call.mismatch is not None:
                    raise _warp_order_error(plan, first, call.mismatch)
                call.compute(sim, first, "a logical warp")
            except BaseException as exc:
                call.error = exc
            call.cond.notify_all()
    _wait_for_lanes(sim, thread, plan, call, first)
    if call.error is not None:
        raise sim.rethrown(call.error)
    lane0 = call.initial_value
    differs = np.asarray(initial).tobytes() != np.asarray(lane0).tobytes()
    if plan.has_initial_value and differs and sim.contract_checks():
        raise _initial_value_error(sim, plan, first, rank, lane0, initial)

    if plan.prefix_op is not None:
        run_prefix(sim, thread, plan, call, lane, block, plan.lanes, first)
    results = thread_results(sim, plan, call, lane, items)
    aggregate_out = options.get("warp_aggregate")
    if aggregate_out is not None:
        aggregate_out[0] = call.aggregate
    with call.cond:
        call.left += 1
        if call.left == plan.lanes:
            with block.lock:
                warp_calls.pop((first, seq), None)
    result = delivered(plan, results, values, options.get("out"))
    target = values if options.get("out") is None else options["out"]
    if sim.is_local_array(target):
        target.scan_lanes = plan.lanes  # the lanes its tile was scanned with
    return result


def _initial_value_error(
    sim: SimEngine, plan: Any, first: int, rank: int, lane0: Any, mine: Any
) -> Exception:
    return sim.contract_error(
        f"{plan.function}: initial_value differs between the lanes of a logical warp (thread "
        f"{first} passes {lane0}, thread {rank} passes {mine}); every lane of a warp passes "
        f"the same value, and the warp's scan is seeded with lane 0's (thread {first}) (set "
        f"{CONTRACT_ENV}=off to run such a kernel anyway)"
    )


def _warp_order_error(plan: Any, first: int, other: str) -> RuntimeError:
    return RuntimeError(
        f"{plan.function}: every lane of a logical warp ({plan.lanes} threads from thread "
        f"{first}) must make the same scan.warp calls in the same order; at this call lanes "
        f"called {other} and {plan.function}. Do not call warp scans under a condition that "
        "differs between the lanes of a warp"
    )


def _wait_for_lanes(sim: SimEngine, thread: Any, plan: Any, call: ScanRecord, first: int) -> None:
    """Wait until the warp's last lane has computed the call; refuse lanes that never come.

    A lane that returned from the kernel or waits at a block barrier cannot
    arrive (the block's barrier waits for this lane): seen so on two checks
    0.2 s apart, the call is refused.
    """
    polls = 0
    suspect: list[str] = []
    with call.cond:
        while not (call.computed or call.error is not None):
            sim.check_abort(thread)
            call.cond.wait(sim.poll_s)
            polls += 1
            if polls % 4:
                continue
            arrived = {i for i, p in enumerate(call.plans) if p is not None}
            waiting = [first + lane for lane in range(plan.lanes) if lane not in arrived]
            missing = sim.missing_threads(thread, waiting)
            if missing and missing == suspect and not (call.computed or call.error is not None):
                raise RuntimeError(
                    f"{plan.function}: every lane of a logical warp ({plan.lanes} threads from "
                    f"thread {first}) must make the same scan.warp calls; at this call "
                    f"{call.arrived} of {plan.lanes} lanes arrived, and {'; '.join(missing)}. "
                    "Do not call warp scans under a condition that differs between the lanes "
                    "of a warp, and do not return early from some lanes"
                )
            suspect = missing
