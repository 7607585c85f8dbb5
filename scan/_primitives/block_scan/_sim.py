# SPDX-License-Identifier: Apache-2.0
"""Block scans in numba's CUDA simulator, with CUB's observable semantics.

A scan is a rendezvous (:meth:`scan._spec.SimEngine.rendezvous`): every
thread deposits its operands in a record shared by the block, the last
thread to arrive computes the per-thread partials and the block aggregate,
and the block barrier releases everyone. Then the prefix callback runs where
CUB runs it: in the calling lanes' own threads, in lane order, each with its
own ``prefix_state``; only thread 0's return value seeds the scan (a
look-back scan's prefix comes from the earlier tiles' published ones
instead). Each thread finally finishes its own items, as CUB's per-thread
scan does. Warp scans (:mod:`scan._primitives.warp_scan._sim`) use the same
record, partials and callback turns within each logical warp.

Results are exact for integer types (wrapping in the value type), ``min`` and
``max``. Floating-point sums and products are accumulated left to right, while
CUB combines partials in a tree: results may differ from the GPU's in the last
bits.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import statefn

from ..._spec import SimEngine
from ..._vocab import WARP_THREADS
from .._sim_common import (
    CONTRACT_ENV,
    DERIVED,
    IN_CALLBACK,
    LOADED,
    NEVER,
    CallRecord,
    bad_items,
    cast,
    integer,
    record_fields,
    result,
    same_plan,
    scalar_operand,
)

__all__ = [
    "ScanRecord",
    "callers",
    "check_carried",
    "delivered",
    "items_to_check",
    "run_prefix",
    "scan_call",
    "thread_results",
]


def callers(plan: Any) -> int:
    """How many threads (linear ranks ``0 .. n-1``) call the prefix callback.

    Under ``raking``/``raking_memoize`` a block of at most 32 threads runs
    CUB's warp-synchronous path and every thread calls; a larger block calls
    from its raking threads, ``ceil(B / ceil(B / 32))`` of them. Under
    ``warp_scans`` the 32 lanes of warp 0 call.

    Parameters
    ----------
    plan : ScanPlan

    Returns
    -------
    int
    """
    threads: int = plan.threads
    if plan.algorithm == "warp_scans":
        return min(threads, WARP_THREADS)
    max_raking = min(threads, WARP_THREADS)
    segment = -(-threads // max_raking)
    return -(-threads // segment)


# ---------------------------------------------------------------------------
# the state contract


def items_to_check(sim: SimEngine, plan: Any, values: Any) -> tuple[int, int] | None:
    """The first item no load filled, when the scan's carried result takes it in.

    The aggregate reaches the prefix callback (and so the state carried to
    the next tile) or ``block_aggregate=`` (``warp_aggregate=``): every item of
    the tile counts.
    """
    if not (plan.prefix_op is not None or _aggregate_out(plan)):
        return None
    if plan.scalar:
        return (0, DERIVED) if sim.is_unfilled(values) else None
    return bad_items(values, plan.items_per_thread)


def _aggregate_out(plan: Any) -> str | None:
    """The parameter receiving the scan's aggregate, when the call passes it."""
    if getattr(plan, "has_block_aggregate", False):
        return "block_aggregate="
    if getattr(plan, "has_warp_aggregate", False):
        return "warp_aggregate="
    return None


def _check_items(
    sim: SimEngine, plan: Any, bad: list[tuple[int, int] | None], first_rank: int = 0
) -> None:
    """Refuse a scan whose carried result takes in items no load filled (any thread's).

    `bad` is indexed from linear thread `first_rank` (a logical warp's lane 0).
    """
    found = next(((first_rank + i, b) for i, b in enumerate(bad) if b is not None), None)
    if found is None or not sim.contract_checks():
        return
    rank, (item, origin) = found
    consumer = "the prefix callback" if plan.prefix_op is not None else _aggregate_out(plan)
    load = "warp.load" if getattr(plan, "lanes", None) else "block.load"
    if origin == DERIVED:
        raise sim.contract_error(
            f"{plan.function}: values hold an item computed from an item that no load filled: "
            f"item {item} of thread {rank} was computed from (or chosen by a comparison of) an "
            f"item past a partial tile's valid range, which {load} leaves as it was without "
            f"oob_default=, and {consumer} takes in the whole tile's aggregate; pass "
            f"oob_default= to {load} (a value whose result is the scan's identity, e.g. 0 "
            "when the flags are items[i] > 0), or compute only from items before the valid "
            "count (flags[i] = 1 if base + cuda.threadIdx.x * len(items) + i < n and "
            "items[i] > 0 else 0)"
        )
    if origin == NEVER:
        what = (
            f"item {item} of thread {rank} was never written (a cuda.local.array starts "
            f"uninitialised, and {load} leaves items past a partial tile's valid range as "
            "they are)"
        )
    else:
        what = (
            f"item {item} of thread {rank} is left over from an earlier tile: a partial tile "
            "was loaded without oob_default=, which leaves items past the valid range as they are"
        )
    raise sim.contract_error(
        f"{plan.function}: values hold an item that no load filled: {what}, and {consumer} "
        f"takes in the whole tile's aggregate; pass oob_default= to {load} (the operator's "
        "identity: 0 for a sum, -inf or the dtype's minimum for max)"
    )


def _check_states(
    sim: SimEngine, plan: Any, call: ScanRecord, n_callers: int, first_rank: int = 0
) -> None:
    """At a state's first call: every calling lane wrote it, and all hold the same value.

    The callers are linear threads `first_rank` to ``first_rank + n_callers - 1``
    (a logical warp's lanes for warp scans).
    """
    if not sim.contract_checks():
        return
    states = call.states[:n_callers]
    last = first_rank + n_callers - 1
    callers_text = f"threads {first_rank} to {last}"
    for rank, state in enumerate(states):
        origin = getattr(state, "origin", None)
        if origin is not None and origin.size and origin[0] == NEVER:
            written = [
                r
                for r, s in enumerate(states)
                if getattr(s, "origin", None) is not None and s.origin.size and s.origin[0] != NEVER
            ]
            also = f" (thread {first_rank + written[0]} did)" if written else ""
            raise sim.contract_error(
                f"{plan.function}: prefix_state was never written in thread "
                f"{first_rank + rank}{also} before the callback's first call; "
                f"{callers_text} each call it "
                "with their own state, and a cuda.local.array starts uninitialised; write "
                "state[0] = <initial value> in every thread before the first scan, not only "
                "in thread 0"
            )
    first = np.asarray(states[0])[:1].tobytes()
    for rank, state in enumerate(states[1:], start=1):
        if np.asarray(state)[:1].tobytes() != first:
            raise sim.contract_error(
                f"{plan.function}: prefix_state differs between the threads that call the "
                f"callback at its first call (thread {first_rank} holds {states[0][0]}, thread "
                f"{first_rank + rank} holds {state[0]}); {callers_text} each run the callback "
                f"on their own state, and only thread {first_rank}'s result counts: initialise "
                f"the state equally in every thread and read the final state from thread "
                f"{first_rank} (set "
                f"{CONTRACT_ENV}=off to run such a kernel anyway)"
            )


def check_carried(sim: SimEngine, plan: Any, options: Mapping[str, Any]) -> None:
    """Refuse a carried scan whose tile cannot follow the last one on its state."""
    state = options.get("prefix_state")
    if not plan.stateful or not sim.is_local_array(state) or not sim.contract_checks():
        return
    wrong = sim.carried_scan_error(plan, options["values"], state)
    if wrong is not None:
        raise sim.contract_error(wrong)


def _first_use(block: Any, state: Any) -> bool:
    """Whether the callback is called with thread 0's *state* for the first time in the block."""
    seen = block.records("prefix_states", list)  # thread 0's state arrays already called with
    with block.lock:
        if any(s is state for s in seen):
            return False
        seen.append(state)
        return True


# ---------------------------------------------------------------------------
# the per-block record


class ScanRecord(CallRecord):
    """One scan call of one block (or logical warp): every thread's operands, the results."""

    def __init__(self, function: str, threads: int) -> None:
        super().__init__(function, threads)
        self.items: list[Any] = [None] * threads
        self.unfilled: list[tuple[int, int] | None] = [None] * threads
        self.states: list[Any] = [None] * threads
        self.initial_value: Any = None
        self.exclusive: list[Any] = [None] * threads  # combined items of lower ranks
        self.aggregate: Any = None
        self.turn = 0  # the calling lane whose turn it is to run the callback
        self.prefix: Any = None
        self.prefix_ready = False
        # each thread's index arguments (a look-back's tile=), and thread 0's tile
        self.indices: list[Mapping[str, Any]] = [{}] * threads
        self.source: Any = None

    def compute(self, sim: SimEngine, first_rank: int = 0, group: str = "a block") -> None:
        """Per-thread reductions, exclusive partials and the aggregate (of the block, or of
        the logical warp whose lane 0 is linear thread `first_rank`)."""
        plan = same_plan(self.plans, first_rank, group)
        sim.same_indices(plan.function, self.indices, "the block")
        _check_items(sim, plan, self.unfilled, first_rank)
        dtype = plan.value_dtype
        combine = sim.combiner(plan.scan_op, dtype)
        running: Any = None
        # forward: the items of lower ranks; reverse: those of higher ranks
        reverse = getattr(plan, "reverse", False)
        ranks = range(self.threads - 1, -1, -1) if reverse else range(self.threads)
        for rank in ranks:
            self.exclusive[rank] = running
            items = self.items[rank]
            partial = items[0]
            for i in range(1, len(items)):
                partial = combine(partial, items[i])
            if running is None:
                running = partial
            elif reverse:
                running = combine(partial, running)
            else:
                running = combine(running, partial)
        self.aggregate = running  # the tile's items in order, both ways
        self.computed = True


# ---------------------------------------------------------------------------
# block scans


def scan_call(sim: SimEngine, function: str, bound: Mapping[str, Any]) -> Any:
    """Run one block-scan entry point for the calling simulated thread.

    Every thread of the block calls it, like a barrier.

    Parameters
    ----------
    sim : SimEngine
    function : str
        The public entry point (``"inclusive_sum"``, ``"scan"``, ...).
    bound : mapping
        The arguments passed, by parameter name (:func:`scan._calls.bind`).

    Returns
    -------
    scalar or None
        The scanned item for a scalar ``values``.
    """
    thread = sim.current_thread(function)
    sim.clear_branch()
    launch = sim.launch_block(thread)
    memory = {"prefix_state": sim.memory(bound.get("prefix_state"))}
    options = {k: sim.pinned(thread, sim.unwrap(v)) for k, v in bound.items()}
    with np.errstate(all="ignore"):
        plan = sim.plan(function, options, launch, memory)
        sim.check_library_storage(plan)
        if plan.prefix_op is not None:
            sim.note_carried_scan(thread)
            check_carried(sim, plan, options)
        return _scan(sim, thread, plan, options["values"], options.get("out"), options)


def _scan(
    sim: SimEngine, thread: Any, plan: Any, values: Any, out: Any, options: Mapping[str, Any]
) -> Any:
    dtype = plan.value_dtype
    rank = sim.rank(thread)
    if plan.scalar:
        items = np.array([values], dtype=dtype)
    else:
        items = np.array(values[: plan.items_per_thread], dtype=dtype)

    unfilled = items_to_check(sim, plan, values)
    initial = None
    if plan.has_initial_value:
        initial = scalar_operand(plan.function, "initial_value", options["initial_value"], dtype)

    def deposit(call: ScanRecord) -> None:
        call.items[rank] = items
        call.unfilled[rank] = unfilled
        call.states[rank] = options.get("prefix_state")
        call.indices[rank] = {"tile": options.get("tile")} if plan.lookback else {}
        if rank == 0:
            call.source = getattr(values, "tile_source", None)
        if rank == 0 and plan.has_initial_value:
            call.initial_value = initial

    block, seq, call = sim.rendezvous(
        thread, plan, ScanRecord, deposit, lambda call: call.compute(sim)
    )
    if plan.prefix_op is not None:
        run_prefix(sim, thread, plan, call, rank, block)
    elif plan.lookback:
        _run_lookback(sim, thread, plan, call, rank, options)
    results = thread_results(sim, plan, call, rank, items)
    aggregate_out = options.get("block_aggregate")
    if aggregate_out is not None:
        aggregate_out[0] = call.aggregate
    sim.leave(thread, plan, block, seq, call)
    return delivered(plan, results, values, out)


def thread_results(
    sim: SimEngine, plan: Any, call: ScanRecord, index: int, items: np.ndarray[Any, Any]
) -> Any:
    """Thread `index`'s results (of the call's threads): its items scanned from its prefix.

    The prefix is the seed (the callback's return, the initial value, or 0 for
    an exclusive sum) combined with the thread's partial (the items of the
    threads before it: after it, for reverse scans).
    """
    dtype = plan.value_dtype
    combine = sim.combiner(plan.scan_op, dtype)
    reverse = getattr(plan, "reverse", False)
    if plan.prefix_op is not None or (getattr(plan, "lookback", False) and call.prefix_ready):
        seed = call.prefix
    elif plan.has_initial_value:
        seed = call.initial_value
    elif plan.mode == "exclusive":  # a sum: CUB seeds ExclusiveSum with T{}
        seed = dtype.type(0)
    else:
        seed = None
    partial = call.exclusive[index]
    if seed is None:
        acc = partial
    elif partial is None:
        acc = seed
    elif reverse:  # the items after this thread's, then the tiles to the right
        acc = combine(partial, seed)
    else:
        acc = combine(seed, partial)

    results = np.empty_like(items)
    if reverse:  # from the thread's last item to its first
        for i in range(len(items) - 1, -1, -1):
            if plan.mode == "inclusive":
                acc = items[i] if acc is None else combine(items[i], acc)
                results[i] = acc
            else:
                results[i] = acc
                if i > 0:
                    acc = items[i] if acc is None else combine(items[i], acc)
    else:
        for i in range(len(items)):
            if plan.mode == "inclusive":
                acc = items[i] if acc is None else combine(acc, items[i])
                results[i] = acc
            else:
                results[i] = acc
                if i + 1 < len(items):
                    acc = combine(acc, items[i])
    return results


def delivered(plan: Any, results: np.ndarray[Any, Any], values: Any, out: Any) -> Any:
    """A scan's results as the call gives them: returned (a scalar scan), or written to `out`."""
    dtype = plan.value_dtype
    if plan.scalar and dtype.names is not None:
        return results.view(np.dtype((np.record, dtype)))[0]  # fields as attributes
    if plan.scalar:
        return results[0]
    target = values if out is None else out
    target[: plan.items_per_thread] = results
    origin = getattr(target, "origin", None)
    if origin is not None:  # the tile's data, as if loaded: a partial load keeps it
        origin[: plan.items_per_thread] = LOADED
    return None


# ---------------------------------------------------------------------------
# the prefix: a callback's, or the look-back's


def run_prefix(
    sim: SimEngine,
    thread: Any,
    plan: Any,
    call: ScanRecord,
    rank: int,
    block: Any,
    n_callers: int | None = None,
    first_rank: int = 0,
) -> None:
    """Call the prefix callback from the calling lanes, in lane order; publish lane 0's.

    `rank` is the thread's index among the call's threads (its lane, for a
    logical warp whose lane 0 is linear thread `first_rank`); `n_callers`
    defaults to the block scan's callers (:func:`callers`).
    """
    descriptor = plan.prefix_op
    assert descriptor is not None
    fn = sim.host_callable(descriptor.op, descriptor)
    if n_callers is None:
        n_callers = callers(plan)
    if rank < n_callers:
        sim.wait(thread, call, lambda: call.turn == rank or call.error is not None)
        if call.error is not None:
            raise sim.rethrown(call.error)
        try:
            if rank == 0 and plan.stateful and _first_use(block, call.states[0]):
                _check_states(sim, plan, call, n_callers, first_rank)
            aggregate = call.aggregate
            record = plan.value_dtype.names is not None
            if record:  # callbacks see a record value as a named tuple
                aggregate = record_fields(aggregate, statefn.record_tuple(plan.value_dtype))
            setattr(thread, IN_CALLBACK, True)
            try:
                returned = fn(call.states[rank], aggregate) if plan.stateful else fn(aggregate)
            finally:
                setattr(thread, IN_CALLBACK, False)
            returned = result(descriptor, returned, plan.value_dtype)
            if rank == 0:
                call.prefix = cast(returned, plan.value_dtype)
        except BaseException as exc:
            _share_error(call, exc)
            raise
        with call.cond:
            call.turn += 1
            if rank == 0:
                call.prefix_ready = True
            call.cond.notify_all()
    _wait_for_prefix(sim, thread, call, lambda: call.prefix_ready)


def _share_error(call: ScanRecord, exc: BaseException) -> None:
    """Hand an exception of one thread to every thread of the call (each re-raises it)."""
    with call.cond:
        call.error = exc
        call.cond.notify_all()


def _wait_for_prefix(
    sim: SimEngine, thread: Any, call: ScanRecord, ready: Callable[[], bool]
) -> None:
    """Wait until the call's prefix is `ready`, re-raising another thread's error."""
    sim.wait(thread, call, lambda: ready() or call.error is not None)
    if call.error is not None:
        raise sim.rethrown(call.error)


def _run_lookback(
    sim: SimEngine,
    thread: Any,
    plan: Any,
    call: ScanRecord,
    rank: int,
    options: Mapping[str, Any],
) -> None:
    """A look-back scan's prefix: thread 0 reads the earlier tiles and publishes its own.

    Blocks run one after another here, so a tile finds every earlier tile's
    inclusive prefix published (the GPU may find some as aggregates only and
    combine them; the integer results are the same, floating-point ones may
    round differently). Tile 0 takes no prefix (the initial value seeds it, if
    given); tile ``t`` takes tile ``t - 1``'s inclusive prefix, or over a
    deterministic status the generated code's formula (the last anchor's
    inclusive prefix, then the aggregates since, in a fixed tree), so float
    results equal the GPU's bit for bit where the tiles' aggregates do. In a
    reverse scan the earlier tiles are those to the right: the prefix is their
    suffix.
    """
    if rank == 0:
        try:
            prefix = _lookback_prefix(sim, thread, plan, call, options)
        except BaseException as exc:
            _share_error(call, exc)
            raise
        with call.cond:
            if prefix is not _NO_PREFIX:
                call.prefix = prefix
                call.prefix_ready = True
            call.turn = -1  # done
            call.cond.notify_all()
    _wait_for_prefix(sim, thread, call, lambda: call.turn == -1)


_NO_PREFIX = object()
# per tile status: where each tile scanned so far came from (tile index -> its Tile)
_status_tiles: weakref.WeakKeyDictionary[Any, dict[int, Any]] = weakref.WeakKeyDictionary()
# per deterministic status: each tile's aggregate (tile index -> aggregate)
_status_aggregates: weakref.WeakKeyDictionary[Any, dict[int, Any]] = weakref.WeakKeyDictionary()
#: A deterministic status's anchors: every ANCHOR-th tile publishes its inclusive prefix.
ANCHOR = 32


def _tree(combine: Callable[[Any, Any], Any], values: list[Any]) -> Any:
    """The values combined in the tree the generated code's warp uses (fixed by their count).

    Lane ``i`` holds value ``i``; at each step ``d`` = 1, 2, 4, 8, 16 a lane
    ``i`` with ``i % 2d == 0`` combines its value with lane ``i + d``'s, if
    that lane holds one; lane 0 ends with the whole combination.
    """
    v = list(values)
    d = 1
    while d < ANCHOR:
        for i in range(0, len(v), 2 * d):
            if i + d < len(v):
                v[i] = combine(v[i], v[i + d])
        d *= 2
    return v[0]


_status_lock = threading.Lock()


def _lookback_prefix(
    sim: SimEngine, thread: Any, plan: Any, call: ScanRecord, options: Mapping[str, Any]
) -> Any:
    status = options["prefix_state"]  # a scan.TileStatus (the plan's operand facts say so)
    f = plan.function
    tile = options.get("tile")
    block_idx, linear = sim.block_index(thread)
    if not sim.passed(tile):
        tile = linear
        how = "the block's linear index"
    else:
        tile = integer(f, "tile", tile)
        how = "tile="
    where = f"block {block_idx}"
    if not 0 <= tile < status.tiles:
        raise sim.contract_error(
            f"{f}: {where} scans tile {tile} ({how}) but the status holds tiles 0 to "
            f"{status.tiles - 1} (scan.tile_status({status.tiles}, ...)); on a GPU the kernel "
            "would stop with an error. Make the status with as many tiles as the launch has "
            "blocks along the sequence, or give tile= the block's index within its row"
        )
    if status.published(tile) is not None:
        raise sim.contract_error(
            f"{f}: {where} scans tile {tile}, which the status already holds from an earlier "
            "scan: two blocks of this launch scan the same tile, or the status was not reset "
            "since the last launch; on a GPU later tiles would read stale prefixes. Call "
            "status.reset() before each launch, and give each block its own tile"
        )
    if sim.contract_checks():
        with _status_lock:
            offsets = _status_tiles.setdefault(status, {})
            wrong = sim.lookback_order_error(plan, offsets, tile, call.source)
        if wrong is not None:
            raise sim.contract_error(wrong)
    op = sim.combiner(plan.scan_op, plan.value_dtype)

    def combine(earlier: Any, tile_items: Any) -> Any:
        # a reverse scan's earlier tiles lie to the right of this one's items
        return op(tile_items, earlier) if plan.reverse else op(earlier, tile_items)

    aggregate = call.aggregate
    if plan.deterministic:
        with _status_lock:
            aggregates = _status_aggregates.setdefault(status, {})
        aggregates[tile] = aggregate
    if tile == 0:
        prefix = _NO_PREFIX
        inclusive = aggregate
        if plan.has_initial_value:
            inclusive = combine(call.initial_value, aggregate)
    else:
        prefix = status.published(tile - 1)
        if prefix is None:
            raise sim.contract_error(
                f"{f}: {where} scans tile {tile}, but tile {tile - 1} has not been scanned "
                "yet. The simulator runs blocks one after another (blockIdx.x slowest, then "
                "y, then z); on a GPU this tile would wait for it, forever if no block scans "
                "it. Number the tiles in the order blocks run (tile=cuda.blockIdx.x with one "
                "status row per sequence), and scan every tile from 0 up"
                + (
                    "; a reverse look-back numbers them from the sequence's end in that order "
                    "(block t scans base = (last - cuda.blockIdx.x) * TILE)"
                    if plan.reverse
                    else ""
                )
            )
        if plan.deterministic:
            # the anchors' formula (the generated code's): the last anchor's inclusive
            # prefix, then the tiles after it combined in a tree fixed by their count
            anchor = (tile - 1) // ANCHOR * ANCHOR
            prefix = status.published(anchor)
            between = [aggregates[t] for t in range(anchor + 1, tile)]
            if between:
                prefix = combine(prefix, _tree(combine, between))
        inclusive = combine(prefix, aggregate)
    status.publish(tile, inclusive)
    return prefix
