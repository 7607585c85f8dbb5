# SPDX-License-Identifier: Apache-2.0
"""CUB's observable block-scan semantics in numba's CUDA simulator.

Under ``NUMBA_ENABLE_CUDASIM=1`` numba runs every thread of a block as a Python
thread, and the public functions of :mod:`scan.block` call into this module
from each of them. A scan is a rendezvous: every thread deposits its operands
in a record shared by the block (keyed by how many scans the thread has made
so far), the last thread to arrive computes the per-thread partials and the
block aggregate, and the simulator's own block barrier (the one behind
``cuda.syncthreads()``) releases everyone. Then the prefix callback runs where
CUB runs it: in the calling lanes' own threads, in lane order, each with its
own ``prefix_state``; only thread 0's return value seeds the scan. Each thread
finally finishes its own items, as CUB's per-thread scan does.

Every call is bound and planned by :mod:`scan._calls` from facts about the
runtime values, so the simulator refuses exactly the calls the compiled path refuses,
with the same messages (the simulator prefixes the thread and block index when
it re-raises an exception from a kernel thread).

Results are exact for integer types (wrapping in the value type), ``min`` and
``max``. Floating-point sums and products are accumulated left to right, while
CUB combines partials in a tree: results may differ from the GPU's in the last
bits.
"""

from __future__ import annotations

import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import statefn

from .._calls import (
    MISSING,
    Converter,
    Role,
    boolean_operand,
    collect_facts,
    kernel_only,
    plan_call,
    set_host_backend,
)
from .._errors import PlanError, ScanTypeError
from .._plan import ArrayFact, Block, Operand, ScalarFact, ScanPlan, TileIOPlan
from .._vocab import NO_SHARED_MEMORY_IO, WARP_THREADS

__all__ = ["SIMULATOR_CC", "SimulatorHost", "callers", "install", "scan_call", "tile_io_call"]

# how often a thread waiting for its turn checks whether the simulator aborted
_POLL_S = 0.05

_PLAN_CACHE_LIMIT = 4096
_plan_cache: dict[tuple[Any, ...], ScanPlan | TileIOPlan] = {}
_plan_cache_lock = threading.Lock()


# ---------------------------------------------------------------------------
# the simulated thread


def _block_thread_type() -> type:
    from numba.cuda.simulator.kernel import BlockThread

    return BlockThread  # type: ignore[no-any-return]


def _current_thread(function: str) -> Any:
    """The simulator thread running the caller; refuses host calls."""
    thread = threading.current_thread()
    if not isinstance(thread, _block_thread_type()):
        raise kernel_only(function)
    return thread


def _launch_block(thread: Any) -> Block:
    bx, by, bz = (int(d) for d in thread._manager._block_dim)
    return (bx, by, bz)


def _rank(thread: Any) -> int:
    return int(thread.thread_id)


def _barrier(thread: Any) -> None:
    """The block barrier, exactly as ``cuda.syncthreads()`` waits in the simulator."""
    thread.syncthreads()


def _check_abort(thread: Any) -> None:
    if thread.abort:
        raise RuntimeError("another thread of the block raised; this thread stops here")


def callers(plan: ScanPlan) -> int:
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
    threads = plan.threads
    if plan.algorithm == "warp_scans":
        return min(threads, WARP_THREADS)
    max_raking = min(threads, WARP_THREADS)
    segment = -(-threads // max_raking)
    return -(-threads // segment)


# ---------------------------------------------------------------------------
# runtime values as plan facts


def _unwrap(obj: Any) -> Any:
    """The NumPy array behind a simulator device array (or *obj* itself)."""
    if isinstance(obj, np.ndarray):
        return obj
    item = getattr(obj, "__dict__", {}).get("_item")  # kernel-side array wrapper
    if item is not None:
        obj = item
    ary = getattr(obj, "_ary", None)
    if isinstance(ary, np.ndarray) and type(obj).__module__.startswith("numba"):
        return ary
    return obj


def _operand(function: str, name: str, obj: Any) -> Operand | None:
    if obj is None or obj is MISSING:
        return None
    if isinstance(obj, np.ndarray):
        return ArrayFact(
            dtype=obj.dtype,
            ndim=obj.ndim,
            length=obj.shape[0] if obj.ndim == 1 else None,
            contiguous=bool(obj.flags.c_contiguous),
        )
    if isinstance(obj, bool | np.bool_):
        raise boolean_operand(function, name)
    if isinstance(obj, np.generic | int | float | complex):
        return ScalarFact(np.asarray(obj).dtype)
    raise ScanTypeError(
        f"{function}: {name} must be a number or an array (got {type(obj).__name__})"
    )


def _value(function: str, name: str, obj: Any) -> Any:
    return None if obj is MISSING else obj


_CONVERTERS: dict[Role, Converter] = {
    "operand": _operand,
    "array": _operand,
    "index": _operand,
    "literal": _value,
    "callable": _value,
}


def _plan(function: str, bound: Mapping[str, Any], launch: Block) -> ScanPlan | TileIOPlan:
    """The plan of a call, memoised: every simulated thread makes the same calls."""
    facts = collect_facts(function, bound, _CONVERTERS)
    key = (function, launch, *facts.items())
    try:
        hit = _plan_cache.get(key)
    except TypeError:  # an unhashable option: plan without the memo
        return plan_call(function, facts, launch)
    if hit is not None:
        return hit
    plan = plan_call(function, facts, launch)
    with _plan_cache_lock:
        if len(_plan_cache) >= _PLAN_CACHE_LIMIT:
            _plan_cache.clear()
        _plan_cache[key] = plan
    return plan


# ---------------------------------------------------------------------------
# arithmetic in the value type


def _cast(value: Any, dtype: np.dtype[Any]) -> Any:
    """*value* as a NumPy scalar of *dtype*, converting as C++ would (integers wrap)."""
    if type(value) is dtype.type:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        bits = dtype.itemsize * 8
        value &= (1 << bits) - 1
        if dtype.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
        return dtype.type(value)
    return np.asarray(value).astype(dtype)[()]


def _combiner(op: statefn.ScanOperator, dtype: np.dtype[Any]) -> Callable[[Any, Any], Any]:
    """``op(a, b)`` on scalars of *dtype*, with the generated C++'s semantics."""
    builtin = op.builtin
    if builtin == "+":
        return lambda a, b: a + b
    if builtin == "*":
        return lambda a, b: a * b
    if builtin == "min":
        return lambda a, b: b if b < a else a
    if builtin == "max":
        return lambda a, b: b if a < b else a
    if builtin == "&":
        return lambda a, b: a & b
    if builtin == "|":
        return lambda a, b: a | b
    if builtin == "^":
        return lambda a, b: a ^ b
    fn = _host_callable(op.op, op)
    return lambda a, b: _cast(fn(a, b), dtype)


def _host_callable(obj: Any, descriptor: Callable[..., Any]) -> Callable[..., Any]:
    """What to call on the host: a simulated device function itself (it swaps in
    the simulated ``cuda`` module for its own module), else the descriptor."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    if isinstance(obj, FakeCUDAKernel):
        return obj  # type: ignore[no-any-return]
    return descriptor


# ---------------------------------------------------------------------------
# the per-block rendezvous


class _Call:
    """One scan call of one block: every thread's operands and the shared results."""

    def __init__(self, function: str, threads: int) -> None:
        self.function = function
        self.threads = threads
        self.cond = threading.Condition()
        self.arrived = 0
        self.mismatch: str | None = None
        self.plans: list[ScanPlan | None] = [None] * threads
        self.items: list[Any] = [None] * threads
        self.states: list[Any] = [None] * threads
        self.initial_value: Any = None
        self.computed = False
        self.exclusive: list[Any] = [None] * threads  # combined items of lower ranks
        self.aggregate: Any = None
        self.turn = 0  # the calling lane whose turn it is to run the callback
        self.prefix: Any = None
        self.prefix_ready = False
        # an exception raised by the call's shared work or by a callback; every
        # thread re-raises it, so the simulator reports it whichever thread it
        # looks at first
        self.error: BaseException | None = None
        self.left = 0

    def compute(self) -> None:
        """Per-thread reductions, exclusive partials and the block aggregate."""
        plan = self.plans[0]
        assert plan is not None
        for rank, other in enumerate(self.plans):
            if other is not plan and other != plan:
                raise PlanError(
                    f"{plan.function}: thread {rank} of the block called it with other operand "
                    "types or options than thread 0; every thread of a block must make the "
                    "same call"
                )
        dtype = plan.value_dtype
        combine = _combiner(plan.scan_op, dtype)
        running: Any = None
        for rank in range(self.threads):
            self.exclusive[rank] = running
            items = self.items[rank]
            partial = items[0]
            for i in range(1, len(items)):
                partial = combine(partial, items[i])
            running = partial if running is None else combine(running, partial)
        self.aggregate = running
        self.computed = True


class _BlockState:
    """The rendezvous records of one simulated block."""

    def __init__(self, threads: int) -> None:
        self.lock = threading.Lock()
        self.calls: dict[int, _Call] = {}
        self.sequence = [0] * threads  # scans made so far, per thread


_blocks: weakref.WeakKeyDictionary[Any, _BlockState] = weakref.WeakKeyDictionary()
_blocks_lock = threading.Lock()


def _block_state(thread: Any, threads: int) -> _BlockState:
    manager = thread._manager
    with _blocks_lock:
        state = _blocks.get(manager)
        if state is None:
            state = _blocks[manager] = _BlockState(threads)
    return state


def _wait(thread: Any, call: _Call, ready: Callable[[], bool]) -> None:
    """Wait on the call's condition until *ready*, giving up if the simulator aborts."""
    with call.cond:
        while not ready():
            _check_abort(thread)
            call.cond.wait(_POLL_S)


# ---------------------------------------------------------------------------
# scans


def scan_call(function: str, bound: Mapping[str, Any]) -> Any:
    """Run one block-scan entry point for the calling simulated thread.

    Every thread of the block calls it, like a barrier.

    Parameters
    ----------
    function : str
        The public entry point (``"inclusive_sum"``, ``"scan"``, ...).
    bound : mapping
        The arguments passed, by parameter name (:func:`scan._calls.bind`).

    Returns
    -------
    scalar or None
        The scanned item for a scalar ``values``.
    """
    thread = _current_thread(function)
    launch = _launch_block(thread)
    options = {k: _unwrap(v) for k, v in bound.items()}
    with np.errstate(all="ignore"):
        plan = _plan(function, options, launch)
        assert isinstance(plan, ScanPlan)
        return _scan(thread, plan, options["values"], options.get("out"), options)


def _scan(thread: Any, plan: ScanPlan, values: Any, out: Any, options: Mapping[str, Any]) -> Any:
    dtype = plan.value_dtype
    threads = plan.threads
    rank = _rank(thread)
    if plan.scalar:
        items = np.array([values], dtype=dtype)
    else:
        items = np.array(values[: plan.items_per_thread], dtype=dtype)

    block = _block_state(thread, threads)
    seq = block.sequence[rank]
    block.sequence[rank] = seq + 1
    with block.lock:
        call = block.calls.get(seq)
        if call is None:
            call = block.calls[seq] = _Call(plan.function, threads)
    with call.cond:
        if call.function != plan.function and call.mismatch is None:
            call.mismatch = call.function
        call.plans[rank] = plan
        call.items[rank] = items
        call.states[rank] = options.get("prefix_state")
        if rank == 0 and plan.has_initial_value:
            call.initial_value = _cast(options["initial_value"], dtype)
        call.arrived += 1
        last = call.arrived == threads and call.mismatch is None
    if last:
        try:
            call.compute()
        except BaseException as exc:
            call.error = exc
            raise
    _barrier(thread)
    if call.error is not None:
        raise call.error
    if call.mismatch is not None or call.arrived != threads or not call.computed:
        raise RuntimeError(
            f"{plan.function}: every thread of the block must make the same scan.block calls "
            f"in the same order; at this call {call.arrived} of {threads} threads arrived "
            f"(first call here: {call.mismatch or call.function}, this one: {plan.function}). "
            "Do not call block scans under a condition that differs between threads, and do "
            "not return early from some threads"
        )

    combine = _combiner(plan.scan_op, dtype)
    if plan.prefix_op is not None:
        _run_prefix(thread, plan, call, rank)
        seed = call.prefix
    elif plan.has_initial_value:
        seed = call.initial_value
    elif plan.mode == "exclusive":  # a sum: CUB seeds ExclusiveSum with T{}
        seed = dtype.type(0)
    else:
        seed = None

    partial = call.exclusive[rank]
    if seed is None:
        thread_prefix = partial
    elif rank == 0 or partial is None:
        thread_prefix = seed
    else:
        thread_prefix = combine(seed, partial)

    results = np.empty_like(items)
    acc = thread_prefix
    for i in range(len(items)):
        if plan.mode == "inclusive":
            acc = items[i] if acc is None else combine(acc, items[i])
            results[i] = acc
        else:
            results[i] = acc
            if i + 1 < len(items):
                acc = combine(acc, items[i])
    aggregate_out = options.get("block_aggregate")
    if aggregate_out is not None:
        aggregate_out[0] = call.aggregate

    with call.cond:
        call.left += 1
        if call.left == threads:
            with block.lock:
                block.calls.pop(seq, None)
    if plan.auto_sync:
        _barrier(thread)
    if plan.scalar:
        return results[0]
    target = values if out is None else out
    target[: plan.items_per_thread] = results
    return None


def _run_prefix(thread: Any, plan: ScanPlan, call: _Call, rank: int) -> None:
    """Call the prefix callback from the calling lanes, in lane order; publish lane 0's."""
    descriptor = plan.prefix_op
    assert descriptor is not None
    fn = _host_callable(descriptor.op, descriptor)
    if rank < callers(plan):
        _wait(thread, call, lambda: call.turn == rank or call.error is not None)
        if call.error is not None:
            raise call.error
        try:
            aggregate = call.aggregate
            result = fn(call.states[rank], aggregate) if plan.stateful else fn(aggregate)
            if rank == 0:
                call.prefix = _cast(result, plan.value_dtype)
        except BaseException as exc:
            with call.cond:
                call.error = exc
                call.cond.notify_all()
            raise
        with call.cond:
            call.turn += 1
            if rank == 0:
                call.prefix_ready = True
            call.cond.notify_all()
    _wait(thread, call, lambda: call.prefix_ready or call.error is not None)
    if call.error is not None:
        raise call.error


# ---------------------------------------------------------------------------
# tile I/O


def _integer(function: str, name: str, value: Any) -> int:
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return int(value)
    raise ScanTypeError(f"{function}: {name} must be an integer (got {type(value).__name__})")


def tile_io_call(function: str, bound: Mapping[str, Any]) -> None:
    """Run ``load`` or ``store`` for the calling simulated thread.

    Thread ``t`` moves tile items ``t * ipt + i`` (``i * threads + t`` for the
    ``striped`` algorithm, as CUB's ``BLOCK_*_STRIPED``), only those before
    ``min(len(array) - offset, valid_items)``. Loads give items past that range
    ``oob_default`` when it is passed and leave them unchanged otherwise.

    Parameters
    ----------
    function : {"load", "store"}
    bound : mapping
        The arguments passed, by parameter name (:func:`scan._calls.bind`).
    """
    thread = _current_thread(function)
    launch = _launch_block(thread)
    options = {k: _unwrap(v) for k, v in bound.items()}
    plan = _plan(function, options, launch)
    assert isinstance(plan, TileIOPlan)
    array = options["src" if function == "load" else "dst"]
    items = options["items"]
    offset = options["offset"]
    start = _integer(function, "offset", offset)
    valid = len(array) - start
    requested = options.get("valid_items")
    if requested is not None:
        valid = min(valid, _integer(function, "valid_items", requested))
    if start < 0:
        raise IndexError(
            f"{function}: offset={start} is negative; the tile would start before the array "
            "(out-of-bounds access on a GPU)"
        )
    ipt = plan.items_per_thread
    threads = plan.threads
    rank = _rank(thread)
    if plan.algorithm == "striped":
        positions = [i * threads + rank for i in range(ipt)]
    else:
        positions = [rank * ipt + i for i in range(ipt)]
    with np.errstate(all="ignore"):
        if plan.direction == "load":
            oob = options.get("oob_default")
            fill = None if oob is None else _cast(oob, plan.value_dtype)
            for i, pos in enumerate(positions):
                if pos < valid:
                    items[i] = array[start + pos]
                elif fill is not None:
                    items[i] = fill
        else:
            for i, pos in enumerate(positions):
                if pos < valid:
                    array[start + pos] = items[i]
    if plan.auto_sync and plan.algorithm not in NO_SHARED_MEMORY_IO:
        _barrier(thread)


# ---------------------------------------------------------------------------
# simulator support for the documented temp-storage pattern


def _aligned(array: np.ndarray[Any, Any], alignment: int) -> np.ndarray[Any, Any]:
    """``array``'s contents in a buffer whose data pointer is ``alignment``-aligned."""
    if array.ctypes.data % alignment == 0:
        return array
    out: np.ndarray[Any, Any]
    raw = np.zeros(array.nbytes + alignment, dtype=np.uint8)
    start = (-raw.ctypes.data) % alignment
    out = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


#: The compute capability whose layouts host-side queries use in the simulator
#: (it has no real device).
SIMULATOR_CC = (9, 0)


class SimulatorHost:
    """Runs :mod:`scan.block` calls made by simulated kernel threads."""

    def call(self, name: str, bound: Mapping[str, Any]) -> Any:
        """Run entry point `name` for the calling simulated thread."""
        if name in ("load", "store"):
            return tile_io_call(name, bound)
        return scan_call(name, bound)

    def default_cc(self) -> tuple[int, int]:
        """:data:`SIMULATOR_CC`."""
        return SIMULATOR_CC


def install() -> None:
    """Route :mod:`scan.block` calls to the simulator, and let kernels align arrays."""
    set_host_backend(SimulatorHost())
    _allow_alignment()


def _allow_alignment() -> None:
    """Let simulated kernels pass ``alignment=`` to ``cuda.shared/local.array``.

    numba's simulator refuses the argument, which would keep the documented
    caller-owned temp-storage pattern
    (``cuda.shared.array(size, np.uint8, alignment=align)``) from running
    there. Simulated arrays are NumPy arrays: the alignment is honoured by
    placing the array in a suitably aligned buffer. Shared arrays keep the
    simulator's identity rule (one allocation per source line and block).
    """
    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.kernelapi import numpy_support, types

    if getattr(kernelapi.FakeCUDAShared.array, "_scan_aligned", False):
        return
    shared_array = kernelapi.FakeCUDAShared.array
    local_array = kernelapi.FakeCUDALocal.array

    def check(alignment: Any) -> int:
        if not isinstance(alignment, int) or alignment < 1 or alignment & (alignment - 1):
            raise ValueError(f"alignment must be a power of two (got {alignment!r})")
        return alignment

    def shared(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        if alignment is None or shape == 0:  # dynamic shared memory is one buffer
            return shared_array(self, shape, dtype)
        align = check(alignment)
        # the simulator's rule: one allocation per calling source line and block
        key = traceback.extract_stack(sys._getframe())[-2][0:2]
        found = self._allocations.get(key)
        if found is None:
            dt = numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype
            found = _aligned(np.zeros(shape, dtype=dt), align)
            self._allocations[key] = found
        return found

    def local(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        array = local_array(self, shape, dtype)
        return array if alignment is None else _aligned(array, check(alignment))

    shared._scan_aligned = True  # type: ignore[attr-defined]
    kernelapi.FakeCUDAShared.array = shared
    kernelapi.FakeCUDALocal.array = local
