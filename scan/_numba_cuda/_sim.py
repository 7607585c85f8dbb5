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

import linecache
import os
import sys
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

import statefn

from .. import _tiles as tiles
from .._calls import (
    CALLS,
    MISSING,
    Converter,
    Role,
    boolean_operand,
    collect_facts,
    kernel_only,
    plan_call,
    set_host_backend,
)
from .._errors import PlanError, ScanTypeError, StateContractError, too_much_shared_memory
from .._lookback import status_dtype
from .._plan import (
    ArrayFact,
    Block,
    Memory,
    Operand,
    ScalarFact,
    TupleFact,
    ZipFact,
    check_operand_range,
    tile_size,
)
from .._primitives import for_call, for_plan
from .._primitives.block_scan._plan import ScanPlan
from .._primitives.tile_io._plan import TileIOPlan
from .._spec import THREAD_ZERO_ONLY
from .._tile_status import TileStatus
from .._vocab import WARP_THREADS, is_bfloat16, round_to_bfloat16
from ._strides import note_carried_scan, tile_step_error
from ._thread_zero import thread_zero_only
from ._tile_order import (
    Tile,
    array_key,
    carried_scan_error,
    different_arguments,
    forget_carried,
    library_storage_floor,
    lookback_order_error,
    store_lanes_error,
    warp_lanes_error,
)
from ._unfilled import UnfilledBool, clear_branch, is_unfilled, plain, taints_write, unfilled

__all__ = [
    "CONTRACT_ENV",
    "SIMULATOR_CC",
    "SimulatorHost",
    "callers",
    "install",
    "scan_call",
    "tile_io_call",
    "tile_loop_call",
    "tile_size_call",
]

# how often a thread waiting for its turn checks whether the simulator aborted
_POLL_S = 0.05

_PLAN_CACHE_LIMIT = 4096
_plan_cache: dict[tuple[Any, ...], Any] = {}
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
        raise kernel_only(function, simulator=True)
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
    """The NumPy array behind a simulator device array (or *obj* itself; a tuple: each item's)."""
    if isinstance(obj, np.ndarray):
        return obj
    if isinstance(obj, tuple):
        return tuple(_unwrap(item) for item in obj)
    item = getattr(obj, "__dict__", {}).get("_item")  # kernel-side array wrapper
    if item is not None:
        obj = item
    ary = getattr(obj, "_ary", None)
    if isinstance(ary, np.ndarray | np.void) and type(obj).__module__.startswith("numba"):
        return ary  # an array, or one record of a record array
    return obj


def _array_fact(obj: np.ndarray[Any, Any], memory: Memory | None) -> ArrayFact:
    return ArrayFact(
        dtype=obj.dtype,
        ndim=obj.ndim,
        length=obj.shape[0] if obj.ndim == 1 else None,
        contiguous=bool(obj.flags.c_contiguous),
        memory=memory,
    )


def _operand(function: str, name: str, obj: Any, memory: Memory | None = None) -> Operand | None:
    if obj is None or obj is MISSING:
        return None
    if isinstance(obj, TileStatus):  # a look-back scan's status: an array of status elements
        return ArrayFact(
            dtype=status_dtype(obj.dtype, deterministic=obj.deterministic),
            ndim=len(obj.shape),
            memory="global",
        )
    if isinstance(obj, np.ndarray):
        return _array_fact(obj, memory)
    if isinstance(obj, tuple) and obj and all(isinstance(x, np.ndarray) for x in obj):
        # zipped tile I/O: one array per record field
        return ZipFact(tuple(_array_fact(x, None) for x in obj))
    if isinstance(obj, bool | np.bool_ | UnfilledBool):
        raise boolean_operand(function, name)
    if isinstance(obj, np.generic | int | float | complex):
        return ScalarFact(np.asarray(obj).dtype)
    if isinstance(obj, tuple) and all(
        isinstance(x, np.number | int | float) and not isinstance(x, bool) for x in obj
    ):  # a record value spelled as a tuple (initial_value=(1.0, 0.0))
        return TupleFact(tuple(np.asarray(x).dtype for x in obj))
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


def _plan(
    function: str, bound: Mapping[str, Any], launch: Block, state_memory: Memory | None = None
) -> Any:
    """The plan of a call, memoised: every simulated thread makes the same calls."""
    converters = _CONVERTERS
    if state_memory is not None:

        def state(function: str, name: str, obj: Any) -> Operand | None:
            return _operand(function, name, obj, state_memory if name == "prefix_state" else None)

        converters = {**_CONVERTERS, "array": state}
    facts = collect_facts(function, bound, converters)
    key = (function, launch, *facts.items())
    try:
        hit = _plan_cache.get(key)
    except TypeError:  # an unhashable option: plan without the memo
        return _checked(plan_call(function, facts, launch))
    if hit is not None:
        return hit
    plan = _checked(plan_call(function, facts, launch))
    with _plan_cache_lock:
        if len(_plan_cache) >= _PLAN_CACHE_LIMIT:
            _plan_cache.clear()
        _plan_cache[key] = plan
    return plan


# ---------------------------------------------------------------------------
# memory spaces, uninitialised local memory, and the state contract

#: Set to ``off`` to run kernels that break the state contract on purpose
#: (state initialised differently per thread, scans over items no load filled).
CONTRACT_ENV = "STATEFN_SCAN_SIM_CONTRACT"

# set on a simulated thread while it runs a prefix callback (its writes to the
# state are the callback's, not a new pass's)
_IN_CALLBACK = "_scan_in_callback"

# where a local array's items came from (one code per item); _DERIVED: written
# with a value computed from (or chosen by a comparison of) an unfilled item
_NEVER, _WRITTEN, _LOADED, _LEFTOVER, _DERIVED = 0, 1, 2, 3, 4


def _unfilled_codes(origin: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Per item: whether no load filled it (never written, left over, or derived from such)."""
    return (origin == _NEVER) | (origin >= _LEFTOVER)  # type: ignore[no-any-return]


class _LocalArray(np.ndarray):
    """A simulated ``cuda.local.array``: poisoned when allocated, its writes recorded.

    A GPU's local memory starts with whatever was there; NumPy's ``empty``
    often gives zeros, which would hide a missing initialisation. The items
    are filled with a poison pattern (NaN for floats, bytes ``0xA5``
    otherwise), and :attr:`origin` records per item whether it was ever
    written, loaded by ``block.load``, or left over from an earlier load by a
    partial one. Reading an item that no load filled gives a value marked as
    such (:mod:`scan._numba_cuda._unfilled`), and writing a marked value (or
    one a marked comparison chose) marks the item written to.

    The tile-loop checks (:mod:`scan._numba_cuda._tile_order`) keep their
    records here too: :attr:`tile_source`, where a load's items came from;
    :attr:`scan_lanes`, the ``lanes=`` of the warp scan that last wrote them;
    :attr:`carried`, the tile a carried scan last scanned on this
    ``prefix_state`` (forgotten when kernel code writes the state).
    """

    origin: np.ndarray[Any, Any] | None = None
    tile_source: Tile | None = None
    scan_lanes: int | None = None
    carried: Any = None

    def __array_finalize__(self, obj: Any) -> None:
        self.origin = None  # views and copies: set by __getitem__ when they alias
        self.tile_source = self.scan_lanes = self.carried = None

    def __getitem__(self, key: Any) -> Any:
        out = super().__getitem__(key)
        if isinstance(out, _LocalArray) and self.origin is not None:
            view = self.origin[key]
            out.origin = view if np.shares_memory(view, self.origin) else None
        elif isinstance(out, np.void) and self.origin is not None:
            # a record item is a reference: its fields are set through it
            # (state[0].a = 1.0), which the array does not see
            never = self.origin[key] == _NEVER
            self.origin[key] = np.where(never, _WRITTEN, self.origin[key])
        elif isinstance(out, np.number) and self.origin is not None:
            code = self.origin[key]
            if code == _NEVER or code >= _LEFTOVER:
                return unfilled(out)
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.carried is not None and not getattr(
            threading.current_thread(), _IN_CALLBACK, False
        ):
            forget_carried(self)  # kernel code writes a prefix state: a new pass
        origin = self.origin
        if origin is None:
            super().__setitem__(key, plain(value))
            return
        code = _WRITTEN
        if is_unfilled(value):
            code, value = _DERIVED, plain(value)
        elif taints_write(sys._getframe(1)):
            code = _DERIVED
        super().__setitem__(key, value)
        source = getattr(value, "origin", None)
        if source is not None and code == _WRITTEN:
            try:  # a copy of items (flags[:4] = items[:4]) keeps their marks
                origin[key] = np.where(_unfilled_codes(source), _DERIVED, _WRITTEN)
                return
            except ValueError:
                pass
        origin[key] = code


def _local_array(buffer: np.ndarray[Any, Any]) -> _LocalArray:
    """*buffer* as a tracked, poisoned local array.

    A record array's items are ``np.record`` scalars, whose fields can be read
    and set as attributes (``state[0].a``), as in compiled kernels.
    """
    if buffer.dtype.names is not None:
        buffer = buffer.view(np.dtype((np.record, buffer.dtype)))
    array = buffer.view(_LocalArray)
    if array.dtype.kind in "fc" or statefn.dtype_key(array.dtype) == "bfloat16":
        np.ndarray.fill(array, np.nan)
    else:
        array.view(np.uint8)[...] = 0xA5
    array.origin = np.zeros(array.shape, dtype=np.uint8)
    return array


# the simulated shared arrays alive, by id (weak: they die with their block)
_shared_arrays: weakref.WeakValueDictionary[int, np.ndarray[Any, Any]] = (
    weakref.WeakValueDictionary()
)


def _root(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _memory(obj: Any) -> Memory | None:
    """Where a kernel's array lives: a local or shared allocation, or global memory."""
    if obj is None or obj is MISSING:
        return None
    module = type(obj).__module__ or ""
    if module.startswith("numba") and type(obj).__name__.startswith("Fake"):
        return "global"  # a kernel argument (a simulated device array) or a slice of one
    if not isinstance(obj, np.ndarray):
        return None
    root = _root(obj)
    if isinstance(obj, _LocalArray) or isinstance(root, _LocalArray):
        return "local"
    if _shared_arrays.get(id(root)) is root or _shared_arrays.get(id(obj)) is obj:
        return "shared"
    return None


def _contract_checks() -> bool:
    return os.environ.get(CONTRACT_ENV, "").strip().lower() not in ("off", "0", "false", "no")


def _kernel_site() -> str:
    """``File "k.py", line 12, in kernel`` and the source of the kernel's call."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame: Any = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = os.path.abspath(filename).startswith(here + os.sep)
        if not inside and "numba" not in filename and "threading" not in filename:
            text = linecache.getline(filename, frame.f_lineno).strip()
            where = f'File "{filename}", line {frame.f_lineno}, in {frame.f_code.co_name}'
            return f"{where}\n    {text}" if text else where
        frame = frame.f_back
    return "(kernel location unknown)"


def _contract_error(message: str) -> StateContractError:
    return StateContractError(f"{_kernel_site()}\n{message}")


def _bad_items(values: Any, items: int) -> tuple[int, int] | None:
    """(item, origin) of the first item a scan reads that was never written or is left over."""
    origin = getattr(values, "origin", None)
    if origin is None:
        return None
    for i in range(min(items, len(origin))):
        if origin[i] in (_NEVER, _LEFTOVER, _DERIVED):
            return i, int(origin[i])
    return None


def _items_to_check(plan: ScanPlan, values: Any) -> tuple[int, int] | None:
    """The first item no load filled, when the scan's carried result takes it in.

    The block aggregate reaches the prefix callback (and so the state carried
    to the next tile) or ``block_aggregate=``: every item of the tile counts.
    """
    if not (plan.prefix_op is not None or _aggregate_out(plan)):
        return None
    if plan.scalar:
        return (0, _DERIVED) if is_unfilled(values) else None
    return _bad_items(values, plan.items_per_thread)


def _aggregate_out(plan: Any) -> str | None:
    """The parameter receiving the scan's aggregate, when the call passes it."""
    if getattr(plan, "has_block_aggregate", False):
        return "block_aggregate="
    if getattr(plan, "has_warp_aggregate", False):
        return "warp_aggregate="
    return None


def _check_items(plan: Any, bad: list[tuple[int, int] | None], first_rank: int = 0) -> None:
    """Refuse a scan whose carried result takes in items no load filled (any thread's).

    `bad` is indexed from linear thread `first_rank` (a logical warp's lane 0).
    """
    found = next(((first_rank + i, b) for i, b in enumerate(bad) if b is not None), None)
    if found is None or not _contract_checks():
        return
    rank, (item, origin) = found
    consumer = "the prefix callback" if plan.prefix_op is not None else _aggregate_out(plan)
    load = "warp.load" if getattr(plan, "lanes", None) else "block.load"
    if origin == _DERIVED:
        raise _contract_error(
            f"{plan.function}: values hold an item computed from an item that no load filled: "
            f"item {item} of thread {rank} was computed from (or chosen by a comparison of) an "
            f"item past a partial tile's valid range, which {load} leaves as it was without "
            f"oob_default=, and {consumer} takes in the whole tile's aggregate; pass "
            f"oob_default= to {load} (a value whose result is the scan's identity, e.g. 0 "
            "when the flags are items[i] > 0), or compute only from items before the valid "
            "count (flags[i] = 1 if base + cuda.threadIdx.x * len(items) + i < n and "
            "items[i] > 0 else 0)"
        )
    if origin == _NEVER:
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
    raise _contract_error(
        f"{plan.function}: values hold an item that no load filled: {what}, and {consumer} "
        f"takes in the whole tile's aggregate; pass oob_default= to {load} (the operator's "
        "identity: 0 for a sum, -inf or the dtype's minimum for max)"
    )


def _check_states(plan: Any, call: _Call, n_callers: int, first_rank: int = 0) -> None:
    """At a state's first call: every calling lane wrote it, and all hold the same value.

    The callers are linear threads `first_rank` to ``first_rank + n_callers - 1``
    (a logical warp's lanes for warp scans).
    """
    if not _contract_checks():
        return
    states = call.states[:n_callers]
    last = first_rank + n_callers - 1
    callers_text = f"threads {first_rank} to {last}"
    for rank, state in enumerate(states):
        origin = getattr(state, "origin", None)
        if origin is not None and origin.size and origin[0] == _NEVER:
            written = [
                r
                for r, s in enumerate(states)
                if getattr(s, "origin", None) is not None
                and s.origin.size
                and s.origin[0] != _NEVER
            ]
            also = f" (thread {first_rank + written[0]} did)" if written else ""
            raise _contract_error(
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
            raise _contract_error(
                f"{plan.function}: prefix_state differs between the threads that call the "
                f"callback at its first call (thread {first_rank} holds {states[0][0]}, thread "
                f"{first_rank + rank} holds {state[0]}); {callers_text} each run the callback "
                f"on their own state, and only thread {first_rank}'s result counts: initialise "
                f"the state equally in every thread and read the final state from thread "
                f"{first_rank} (set "
                f"{CONTRACT_ENV}=off to run such a kernel anyway)"
            )


# ---------------------------------------------------------------------------
# callbacks the compiler would refuse


_compilable: dict[tuple[str, str], BaseException | None] = {}
_compilable_lock = threading.Lock()


def _checked(plan: Any) -> Any:
    """*plan*, once its user callbacks are known to name only what Numba can compile."""
    for descriptor in for_plan(plan).callbacks(plan):
        _check_compilable(descriptor, plan)
    return plan


def _compiled_function(op: Any) -> Any:
    """The Python function the compiler compiles for a callback's ``op``."""
    py_func = getattr(op, "py_func", None)
    if callable(py_func):
        return py_func
    if isinstance(op, type):
        for klass in op.__mro__[:-1]:
            if "__call__" in vars(klass):
                return vars(klass)["__call__"]
    return op


def _loaded_globals(code: Any) -> list[str]:
    import dis

    names: list[str] = []
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL" and ins.argval not in names:
            names.append(ins.argval)
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            names += [n for n in _loaded_globals(const) if n not in names]
    return names


def _untypeable(name: str, value: Any) -> str | None:
    """Why numba-cuda cannot use *value*, named *name* in a callback, as a constant."""
    from types import BuiltinFunctionType, FunctionType, ModuleType

    from numba.cuda.typing.typeof import Purpose, typeof

    if isinstance(value, ModuleType | type | BuiltinFunctionType | np.ufunc):
        return None  # attributes are resolved by the compiler; classes are dtypes here
    module = type(value).__module__ or ""
    if module.startswith(("numba", "statefn")):
        return None  # device functions, descriptors
    if isinstance(value, FunctionType):
        return f"Untyped global name {name!r}: Cannot determine Numba type of {type(value)}"
    try:
        ty = typeof(value, Purpose.constant)
    except ValueError as exc:
        return f"Untyped global name {name!r}: {exc}"
    if ty is None:
        return f"Untyped global name {name!r}: Cannot determine Numba type of {type(value)}"
    if type(value) in (list, set, dict, str):
        return (
            f"global name {name!r} is a {type(value).__name__} ({ty}), which Numba cannot use "
            "as a constant in device code"
        )
    return None


def _check_compilable(descriptor: Any, plan: Any) -> None:
    """Refuse a callback that names Python objects numba-cuda cannot compile.

    The compiler types every global a callback loads and every closure cell it
    reads; these checks use numba-cuda's own ``typeof`` on the same values, so
    a callback that appends to a Python list or calls a plain Python helper is
    refused here with the compiler's words instead of running as Python.
    """
    key = (descriptor.key, statefn.dtype_key(plan.value_dtype))
    with _compilable_lock:
        if key in _compilable:
            found = _compilable[key]
            if found is not None:
                raise found
            return
    fn = _compiled_function(descriptor.op)
    reason = None
    code = getattr(fn, "__code__", None)
    if code is not None:
        namespace = getattr(fn, "__globals__", {})
        pairs = [(n, namespace[n]) for n in _loaded_globals(code) if n in namespace]
        for cell_name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
            try:
                pairs.append((cell_name, cell.cell_contents))
            except ValueError:
                continue
        for name, value in pairs:
            reason = _untypeable(name, value)
            if reason is not None:
                break
    error: BaseException | None = None
    if reason is not None:
        state = plan.state_dtype if descriptor is getattr(plan, "prefix_op", None) else None
        dtypes = f"value dtype {plan.value_dtype}" + (f", state dtype {state}" if state else "")
        label = (
            repr(descriptor.name)
            if descriptor.name is not None
            else f"{fn.__module__}.{fn.__qualname__}"
        )
        cc = SIMULATOR_CC
        error = statefn.CallbackCompileError(
            f"could not compile {descriptor.kind} callback {label} for {dtypes} "
            f"(cc {cc[0]}.{cc[1]}): TypingError: {reason}\n"
            "The simulator refuses what the compiler refuses: a callback may use numbers, "
            "tuples, NumPy arrays and scalars, math and numpy functions and "
            "@cuda.jit(device=True) functions, not Python objects."
        )
    with _compilable_lock:
        _compilable[key] = error
    if error is not None:
        raise error


# ---------------------------------------------------------------------------
# arithmetic in the value type


def _cast(value: Any, dtype: np.dtype[Any]) -> Any:
    """*value* as a NumPy scalar of *dtype*, converting as C++ would (integers wrap).

    A record is built field by field from a tuple (or copied from a record).
    """
    if dtype.names is not None:
        fields = statefn.record_fields(dtype)
        out = np.zeros((), dtype=dtype)
        for f, item in zip(fields, tuple(value), strict=True):
            out[f.name] = _cast(item, f.dtype)
        return out[()]
    if type(value) is dtype.type:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        bits = dtype.itemsize * 8
        value &= (1 << bits) - 1
        if dtype.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
        return dtype.type(value)
    return np.asarray(value).astype(dtype)[()]


def _scalar_operand(function: str, what: str, value: Any, dtype: np.dtype[Any]) -> Any:
    """A scalar operand (``oob_default=``, ``initial_value=``) as a value of *dtype*.

    A number outside the range of half-precision values is refused as the
    compiler refuses a constant (:func:`scan._plan.check_operand_range`).
    """
    if not isinstance(value, tuple):
        check_operand_range(function, what, value, np.asarray(value).dtype, dtype)
    return _cast(value, dtype)


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
    if dtype.names is not None:
        tup = statefn.record_tuple(dtype)
        return lambda a, b: _cast(_result(op, fn(_fields(a, tup), _fields(b, tup)), dtype), dtype)
    return lambda a, b: _cast(_result(op, fn(a, b), dtype), dtype)


def _fields(value: Any, tup: Any) -> Any:
    """A record as the named tuple callbacks see, its fields NumPy scalars of their types."""
    return tup(*(value[i] for i in range(len(tup._fields))))


def _returned(value: Any, dtype: np.dtype[Any]) -> str | None:
    """What a callback returned that cannot be a value of *dtype* (:func:`statefn.result_error`)."""
    if value is None:
        return "none"
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, np.void):
        return "record"
    if dtype.names is not None:
        if not isinstance(value, tuple):
            return f"a value of type {type(value).__name__}"
        if len(value) != len(dtype.names):
            return f"a tuple of {len(value)} items"
    elif isinstance(value, tuple | list | dict | str | bytes):
        return f"a value of type {type(value).__name__}"
    elif dtype.kind != "c" and isinstance(value, complex | np.complexfloating):
        return f"complex:{np.asarray(value).dtype}"
    return None


def _result(descriptor: Any, value: Any, dtype: np.dtype[Any]) -> Any:
    """*value*, which the callback *descriptor* returned, if it can be a value of *dtype*.

    Refused otherwise with the compiler's words, the callback's ``def`` line
    in the message and no traceback of the simulator's own.
    """
    returned = _returned(value, dtype)
    if returned is None:
        return value
    raise statefn.result_error(descriptor, returned, dtype).with_traceback(None) from None


def _rethrown(error: BaseException) -> BaseException:
    """*error*, raised first by another thread of the block, for this thread to raise.

    A copy: one exception object re-raised by every thread would collect every
    thread's frames. The copy keeps the first thread's frames from the user's
    own code on (a callback's failing line), under this thread's.
    """
    try:
        copied = type(error)(*error.args)
    except Exception:
        return error
    # the frames are the simulator's, the kernel's, the library's, then the user's callback's
    tb, runs, inside = error.__traceback__, 0, None
    while tb is not None:
        library = _library_file(tb.tb_frame.f_code.co_filename)
        if library != inside:
            inside, runs = library, runs + 1
        if runs == 4:
            break
        tb = tb.tb_next
    return copied.with_traceback(tb)


def _library_file(filename: str) -> bool:
    """Whether *filename* is this library's, Numba's or Python's threading code."""
    path = os.path.abspath(filename)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    inside = any(path.startswith(os.path.join(root, pkg) + os.sep) for pkg in ("scan", "statefn"))
    return inside or "numba" in filename or "threading" in filename


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
        self.unfilled: list[tuple[int, int] | None] = [None] * threads
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
        # each thread's index arguments (a look-back's tile=), and thread 0's tile
        self.indices: list[Mapping[str, Any]] = [{}] * threads
        self.source: Tile | None = None

    def compute(self, first_rank: int = 0, group: str = "a block") -> None:
        """Per-thread reductions, exclusive partials and the aggregate (of the block, or of
        the logical warp whose lane 0 is linear thread `first_rank`)."""
        plan = _same_plan(self.plans, first_rank, group)
        _same_indices(plan.function, self.indices, "the block")
        _check_items(plan, self.unfilled, first_rank)
        dtype = plan.value_dtype
        combine = _combiner(plan.scan_op, dtype)
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


def _same_indices(function: str, indices: list[Mapping[str, Any]], group: str) -> None:
    """Refuse index arguments (a look-back's tile=, a reduce's valid=) that differ by thread."""
    if not indices or not indices[0] or not _contract_checks():
        return
    for name, value in indices[0].items():
        first = None if value is None or value is MISSING else _integer(function, name, value)
        for rank, other in enumerate(indices[1:], start=1):
            got = other.get(name)
            mine = None if got is None or got is MISSING else _integer(function, name, got)
            if mine != first:
                raise _contract_error(
                    different_arguments(function, name, group, (0, first), (rank, mine))
                )


def _same_plan(plans: list[Any], first_rank: int = 0, group: str = "a block") -> Any:
    """The first thread's plan, once every thread's is equal to it (else the call is refused).

    `plans` are those of linear threads `first_rank` on: the block's, or a logical warp's.
    """
    plan = plans[0]
    assert plan is not None
    for rank, other in enumerate(plans):
        if other is not plan and other != plan:
            raise PlanError(
                f"{plan.function}: thread {first_rank + rank} called it with other operand "
                f"types or options than thread {first_rank}; every thread of {group} must "
                "make the same call"
            )
    return plan


class _BlockState:
    """The rendezvous records of one simulated block."""

    def __init__(self, threads: int) -> None:
        self.lock = threading.Lock()
        self.calls: dict[int, _Call | _Collective] = {}
        self.sequence = [0] * threads  # scans made so far, per thread
        self.states: list[Any] = []  # thread 0's state arrays already called with
        # warp scans: the calls of each logical warp, by (first rank, sequence)
        self.warp_calls: dict[tuple[int, int], _Call] = {}
        self.warp_sequence = [0] * threads  # warp scans made so far, per thread
        # tile I/O: calls made so far, per thread; the first thread's arguments of each
        # (by (the group's first thread, call number): [thread, arguments, arrivals])
        self.io_sequence: dict[int, int] = {}
        self.io_calls: dict[tuple[int, int], list[Any]] = {}

    def first_use(self, state: Any) -> bool:
        """Whether the callback is called with thread 0's *state* for the first time."""
        with self.lock:
            if any(seen is state for seen in self.states):
                return False
            self.states.append(state)
            return True


_blocks: weakref.WeakKeyDictionary[Any, _BlockState] = weakref.WeakKeyDictionary()
_blocks_lock = threading.Lock()


_DESCRIPTORS = (statefn.StatefulFunction, statefn.StatelessFunction, statefn.ScanOperator)
# per simulated block: its descriptors, pinned (object id -> (object, pinned copy))
_pins: weakref.WeakKeyDictionary[Any, dict[int, tuple[Any, Any]]] = weakref.WeakKeyDictionary()


def _pinned(thread: Any, value: Any) -> Any:
    """A descriptor pinned once per simulated block, else *value* itself.

    A descriptor's key is computed from the globals its callable reads at each
    read; the plan memo hashes the call's descriptors at every call of every
    thread, so each block pins them once (the callbacks themselves still run
    as Python, with the globals' current values).
    """
    if not isinstance(value, _DESCRIPTORS):
        return value
    with _blocks_lock:
        memo = _pins.setdefault(thread._manager, {})
        found = memo.get(id(value))
        if found is None or found[0] is not value:
            try:
                pinned = value.pinned()
            except statefn.StatefnError as exc:  # an unkeyable global: named at the call
                raise exc.with_traceback(None) from None
            found = memo[id(value)] = (value, pinned)
    return found[1]


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
    clear_branch()
    launch = _launch_block(thread)
    memory = _memory(bound.get("prefix_state"))
    options = {k: _pinned(thread, _unwrap(v)) for k, v in bound.items()}
    with np.errstate(all="ignore"):
        plan = _plan(function, options, launch, memory)
        assert isinstance(plan, ScanPlan)
        _check_library_storage(plan)
        if plan.prefix_op is not None:
            note_carried_scan(thread)
            _check_carried(plan, options)
        return _scan(thread, plan, options["values"], options.get("out"), options)


def _check_carried(plan: Any, options: Mapping[str, Any]) -> None:
    """Refuse a carried scan whose tile cannot follow the last one on its state."""
    state = options.get("prefix_state")
    if not plan.stateful or not isinstance(state, _LocalArray) or not _contract_checks():
        return
    wrong = carried_scan_error(plan, options["values"], state)
    if wrong is not None:
        raise _contract_error(wrong)


def _check_library_storage(plan: Any) -> None:
    """Refuse a call whose library-owned temp storage cannot fit in a compiled kernel.

    The least the call's storage takes (:func:`library_storage_floor`), with
    the kernel's own shared arrays, over the 48 KiB a kernel may declare: the
    compiled kernel would not link. The largest floor of the launch is kept
    with its shared arrays, for the allocations that follow.
    """
    floor = library_storage_floor(plan)
    if floor is None:
        return
    from numba.cuda.simulator.kernel import _get_kernel_context

    context = _get_kernel_context()
    shared = getattr(context, "shared", None)
    if shared is None:
        return
    size, what = floor
    with _allocation_lock:
        if size > getattr(shared, _LIBRARY_FLOOR, (0, ""))[0]:
            setattr(shared, _LIBRARY_FLOOR, floor)
    own = sum(int(a.nbytes) for a in shared._allocations.values())
    if own + size > STATIC_SHARED_LIMIT:
        raise too_much_shared_memory(
            _kernel_name(), own + size, STATIC_SHARED_LIMIT, library=what
        ).with_traceback(None)


def _scan(thread: Any, plan: ScanPlan, values: Any, out: Any, options: Mapping[str, Any]) -> Any:
    dtype = plan.value_dtype
    rank = _rank(thread)
    if plan.scalar:
        items = np.array([values], dtype=dtype)
    else:
        items = np.array(values[: plan.items_per_thread], dtype=dtype)

    unfilled = _items_to_check(plan, values)
    initial = None
    if plan.has_initial_value:
        initial = _scalar_operand(plan.function, "initial_value", options["initial_value"], dtype)

    def deposit(call: _Call) -> None:
        call.items[rank] = items
        call.unfilled[rank] = unfilled
        call.states[rank] = options.get("prefix_state")
        call.indices[rank] = {"tile": options.get("tile")} if plan.lookback else {}
        if rank == 0:
            call.source = getattr(values, "tile_source", None)
        if rank == 0 and plan.has_initial_value:
            call.initial_value = initial

    block, seq, call = _rendezvous(thread, plan, _Call, deposit, _Call.compute)
    if plan.prefix_op is not None:
        _run_prefix(thread, plan, call, rank, block)
    elif plan.lookback:
        _run_lookback(thread, plan, call, rank, options)
    results = _thread_results(plan, call, rank, items)
    aggregate_out = options.get("block_aggregate")
    if aggregate_out is not None:
        aggregate_out[0] = call.aggregate
    _leave(thread, plan, block, seq, call)
    return _delivered(plan, results, values, out)


def _thread_results(plan: Any, call: _Call, index: int, items: np.ndarray[Any, Any]) -> Any:
    """Thread `index`'s results (of the call's threads): its items scanned from its prefix.

    The prefix is the seed (the callback's return, the initial value, or 0 for
    an exclusive sum) combined with the thread's partial (the items of the
    threads before it: after it, for reverse scans).
    """
    dtype = plan.value_dtype
    combine = _combiner(plan.scan_op, dtype)
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


def _delivered(plan: Any, results: np.ndarray[Any, Any], values: Any, out: Any) -> Any:
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
        origin[: plan.items_per_thread] = _LOADED
    return None


def _run_prefix(
    thread: Any,
    plan: Any,
    call: _Call,
    rank: int,
    block: _BlockState,
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
    fn = _host_callable(descriptor.op, descriptor)
    if n_callers is None:
        n_callers = callers(plan)
    if rank < n_callers:
        _wait(thread, call, lambda: call.turn == rank or call.error is not None)
        if call.error is not None:
            raise _rethrown(call.error)
        try:
            if rank == 0 and plan.stateful and block.first_use(call.states[0]):
                _check_states(plan, call, n_callers, first_rank)
            aggregate = call.aggregate
            record = plan.value_dtype.names is not None
            if record:  # callbacks see a record value as a named tuple
                aggregate = _fields(aggregate, statefn.record_tuple(plan.value_dtype))
            setattr(thread, _IN_CALLBACK, True)
            try:
                result = fn(call.states[rank], aggregate) if plan.stateful else fn(aggregate)
            finally:
                setattr(thread, _IN_CALLBACK, False)
            result = _result(descriptor, result, plan.value_dtype)
            if rank == 0:
                call.prefix = _cast(result, plan.value_dtype)
        except BaseException as exc:
            _share_error(call, exc)
            raise
        with call.cond:
            call.turn += 1
            if rank == 0:
                call.prefix_ready = True
            call.cond.notify_all()
    _wait_for_prefix(thread, call, lambda: call.prefix_ready)


def _share_error(call: _Call, exc: BaseException) -> None:
    """Hand an exception of one thread to every thread of the call (each re-raises it)."""
    with call.cond:
        call.error = exc
        call.cond.notify_all()


def _wait_for_prefix(thread: Any, call: _Call, ready: Callable[[], bool]) -> None:
    """Wait until the call's prefix is `ready`, re-raising another thread's error."""
    _wait(thread, call, lambda: ready() or call.error is not None)
    if call.error is not None:
        raise _rethrown(call.error)


def _run_lookback(
    thread: Any, plan: ScanPlan, call: _Call, rank: int, options: Mapping[str, Any]
) -> None:
    """A look-back scan's prefix: thread 0 reads the earlier tiles and publishes its own.

    Blocks run one after another here, so a tile finds every earlier tile's
    inclusive prefix published (the GPU may find some as aggregates only and
    combine them; the integer results are the same, floating-point ones may
    round differently). Tile 0 takes no prefix (the initial value seeds it, if
    given); tile ``t`` takes tile ``t - 1``'s inclusive prefix. In a reverse
    scan the earlier tiles are those to the right: the prefix is their suffix.
    """
    if rank == 0:
        try:
            prefix = _lookback_prefix(thread, plan, call, options)
        except BaseException as exc:
            _share_error(call, exc)
            raise
        with call.cond:
            if prefix is not _NO_PREFIX:
                call.prefix = prefix
                call.prefix_ready = True
            call.turn = -1  # done
            call.cond.notify_all()
    _wait_for_prefix(thread, call, lambda: call.turn == -1)


_NO_PREFIX = object()
# per tile status: where each tile scanned so far came from (tile index -> Tile)
_status_tiles: weakref.WeakKeyDictionary[Any, dict[int, Tile]] = weakref.WeakKeyDictionary()
_status_lock = threading.Lock()


def _lookback_prefix(thread: Any, plan: ScanPlan, call: _Call, options: Mapping[str, Any]) -> Any:
    status = options["prefix_state"]
    assert isinstance(status, TileStatus)
    f = plan.function
    tile = options.get("tile")
    if tile is None or tile is MISSING:
        (bx, by, bz), (gx, gy, _) = thread.blockIdx, thread._manager._grid_dim
        tile = int(bx) + int(gx) * (int(by) + int(gy) * int(bz))
        how = "the block's linear index"
    else:
        tile = _integer(f, "tile", tile)
        how = "tile="
    where = f"block {tuple(int(v) for v in thread.blockIdx)}"
    if not 0 <= tile < status.tiles:
        raise _contract_error(
            f"{f}: {where} scans tile {tile} ({how}) but the status holds tiles 0 to "
            f"{status.tiles - 1} (scan.tile_status({status.tiles}, ...)); on a GPU the kernel "
            "would stop with an error. Make the status with as many tiles as the launch has "
            "blocks along the sequence, or give tile= the block's index within its row"
        )
    if status.published(tile) is not None:
        raise _contract_error(
            f"{f}: {where} scans tile {tile}, which the status already holds from an earlier "
            "scan: two blocks of this launch scan the same tile, or the status was not reset "
            "since the last launch; on a GPU later tiles would read stale prefixes. Call "
            "status.reset() before each launch, and give each block its own tile"
        )
    if _contract_checks():
        with _status_lock:
            offsets = _status_tiles.setdefault(status, {})
            wrong = lookback_order_error(plan, offsets, tile, call.source)
        if wrong is not None:
            raise _contract_error(wrong)
    op = _combiner(plan.scan_op, plan.value_dtype)

    def combine(earlier: Any, tile_items: Any) -> Any:
        # a reverse scan's earlier tiles lie to the right of this one's items
        return op(tile_items, earlier) if plan.reverse else op(earlier, tile_items)

    aggregate = call.aggregate
    if tile == 0:
        prefix = _NO_PREFIX
        inclusive = aggregate
        if plan.has_initial_value:
            inclusive = combine(call.initial_value, aggregate)
    else:
        prefix = status.published(tile - 1)
        if prefix is None:
            raise _contract_error(
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
        inclusive = combine(prefix, aggregate)
    status.publish(tile, inclusive)
    return prefix


# ---------------------------------------------------------------------------
# warp scans


def warp_scan_call(function: str, bound: Mapping[str, Any]) -> Any:
    """Run one :mod:`scan.warp` scan for the calling simulated thread.

    The lanes of the thread's logical warp meet (not the whole block, and
    with no barrier): the last to arrive computes every lane's partial and
    the warp aggregate; each lane then calls the prefix callback in turn,
    lane 0's return seeds the warp's scan, and each lane finishes its items.
    """
    thread = _current_thread(function)
    clear_branch()
    launch = _launch_block(thread)
    memory = _memory(bound.get("prefix_state"))
    options = {k: _pinned(thread, _unwrap(v)) for k, v in bound.items()}
    with np.errstate(all="ignore"):
        plan = _plan(function, options, launch, memory)
        lanes = warp_lanes_error(plan, options["values"])
        if lanes is not None and _contract_checks():
            raise _contract_error(lanes)
        if plan.prefix_op is not None:
            note_carried_scan(thread)
            _check_carried(plan, options)
        return _warp_scan(thread, plan, options)


def _warp_scan(thread: Any, plan: Any, options: Mapping[str, Any]) -> Any:
    dtype = plan.value_dtype
    values = options["values"]
    rank = _rank(thread)
    lane = rank % plan.lanes
    first = rank - lane  # the logical warp's lane 0
    if plan.scalar:
        items = np.array([values], dtype=dtype)
    else:
        items = np.array(values[: plan.items_per_thread], dtype=dtype)
    unfilled = _items_to_check(plan, values)
    initial = None
    if plan.has_initial_value:
        initial = _scalar_operand(plan.function, "initial_value", options["initial_value"], dtype)

    block = _block_state(thread, plan.threads)
    seq = block.warp_sequence[rank]
    block.warp_sequence[rank] = seq + 1
    with block.lock:
        call = block.warp_calls.get((first, seq))
        if call is None:
            call = block.warp_calls[(first, seq)] = _Call(plan.function, plan.lanes)
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
                call.compute(first, "a logical warp")
            except BaseException as exc:
                call.error = exc
            call.cond.notify_all()
    _wait_for_lanes(thread, plan, call, first)
    if call.error is not None:
        raise _rethrown(call.error)
    lane0 = call.initial_value
    differs = np.asarray(initial).tobytes() != np.asarray(lane0).tobytes()
    if plan.has_initial_value and differs and _contract_checks():
        raise _initial_value_error(plan, first, rank, lane0, initial)

    if plan.prefix_op is not None:
        _run_prefix(thread, plan, call, lane, block, plan.lanes, first)
    results = _thread_results(plan, call, lane, items)
    aggregate_out = options.get("warp_aggregate")
    if aggregate_out is not None:
        aggregate_out[0] = call.aggregate
    with call.cond:
        call.left += 1
        if call.left == plan.lanes:
            with block.lock:
                block.warp_calls.pop((first, seq), None)
    delivered = _delivered(plan, results, values, options.get("out"))
    target = values if options.get("out") is None else options["out"]
    if isinstance(target, _LocalArray):
        target.scan_lanes = plan.lanes  # the lanes its tile was scanned with
    return delivered


def _initial_value_error(
    plan: Any, first: int, rank: int, lane0: Any, mine: Any
) -> StateContractError:
    return _contract_error(
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


def _missing_lanes(thread: Any, plan: Any, call: _Call, first: int) -> list[str]:
    """The lanes that cannot arrive: returned from the kernel, or waiting at a block barrier."""
    arrived = {i for i, p in enumerate(call.plans) if p is not None}
    running: dict[int, Any] = {}
    for other in threading.enumerate():  # the block's threads still running
        if getattr(other, "_manager", None) is thread._manager:
            running[int(getattr(other, "thread_id", -1))] = other
    found = []
    for lane in range(plan.lanes):
        if lane in arrived:
            continue
        lane_thread = running.get(first + lane)
        if lane_thread is None:
            found.append(f"thread {first + lane} returned from the kernel")
        elif getattr(lane_thread, "syncthreads_blocked", False):
            found.append(f"thread {first + lane} waits at a block barrier")
    return found


def _wait_for_lanes(thread: Any, plan: Any, call: _Call, first: int) -> None:
    """Wait until the warp's last lane has computed the call; refuse lanes that never come.

    A lane that returned from the kernel or waits at a block barrier cannot
    arrive (the block's barrier waits for this lane): seen so on two checks
    0.2 s apart, the call is refused.
    """
    polls = 0
    suspect: list[str] = []
    with call.cond:
        while not (call.computed or call.error is not None):
            _check_abort(thread)
            call.cond.wait(_POLL_S)
            polls += 1
            if polls % 4:
                continue
            missing = _missing_lanes(thread, plan, call, first)
            if missing and missing == suspect and not (call.computed or call.error is not None):
                raise RuntimeError(
                    f"{plan.function}: every lane of a logical warp ({plan.lanes} threads from "
                    f"thread {first}) must make the same scan.warp calls; at this call "
                    f"{call.arrived} of {plan.lanes} lanes arrived, and {'; '.join(missing)}. "
                    "Do not call warp scans under a condition that differs between the lanes "
                    "of a warp, and do not return early from some lanes"
                )
            suspect = missing


# ---------------------------------------------------------------------------
# families whose block-wide semantics their spec gives (Primitive.simulate)


class _Collective:
    """One call of one block, for a family the spec simulates: every thread's arguments."""

    def __init__(self, function: str, threads: int) -> None:
        self.function = function
        self.threads = threads
        self.cond = threading.Condition()
        self.arrived = 0
        self.mismatch: str | None = None
        self.plans: list[Any] = [None] * threads
        self.args: list[Mapping[str, Any]] = [{}] * threads
        self.results: list[Any] = []
        self.computed = False
        self.error: BaseException | None = None
        self.left = 0

    # the view the spec's semantics read (scan._spec.BlockInputs)
    @property
    def plan(self) -> Any:
        return self.plans[0]

    def items(self, rank: int, name: str, count: int) -> Any:
        plan = self.plans[0]
        value = self.args[rank][name]
        n = plan.items_per_thread
        if getattr(plan, "scalar", False):
            if count > rank and is_unfilled(value):
                self._unfilled(rank, 0, _DERIVED)
            return np.array([_cast(value, plan.value_dtype)], dtype=plan.value_dtype)
        bad = _bad_items(value, min(n, max(0, count - rank * n)))
        if bad is not None and name == "carry" and _contract_checks():
            raise _contract_error(
                f"{self.function}: carry[0] of thread {rank} was never set, and the call takes "
                "it as the item before the tile's first; set carry[0] in every thread before "
                "the first tile (the item before the row, e.g. 0), or leave carry= out"
            )
        if bad is not None:
            self._unfilled(rank, *bad)
        return np.asarray(value[:n], dtype=plan.value_dtype)

    def index(self, rank: int, name: str) -> int:
        return _integer(self.function, name, self.args[rank][name])

    def combiner(self, op: Any) -> Callable[[Any, Any], Any]:
        return _combiner(op, self.plans[0].value_dtype)

    def _unfilled(self, rank: int, item: int, origin: int) -> None:
        if not _contract_checks():
            return
        how = {
            _NEVER: "was never written (a cuda.local.array starts uninitialised)",
            _LEFTOVER: "is left over from an earlier tile",
            _DERIVED: "was computed from (or chosen by a comparison of) an item no load filled",
        }[origin]
        raise _contract_error(
            f"{self.function}: item {item} of thread {rank} {how}, and the call takes it in: "
            "a partial tile was loaded without oob_default=, which leaves items past the valid "
            "range as they are; pass oob_default= to block.load (the operator's identity: 0 "
            "for a sum, -inf or the dtype's minimum for max) or pass valid= to the call"
        )

    def compute(self, simulate: Callable[[Any], list[Any]]) -> None:
        plan = _same_plan(self.plans)
        index = [p.name for p in CALLS[self.function].params if p.role == "index"]
        _same_indices(self.function, [{n: a.get(n) for n in index} for a in self.args], "the block")
        del plan
        self.results = simulate(self)
        self.computed = True


def _returned_value(plan: Any, value: Any, rank: int) -> Any:
    """A result as a kernel sees it: a NumPy scalar, or a record with attribute access.

    A result defined in thread 0 only (:data:`~scan._spec.THREAD_ZERO_ONLY`)
    is NaN for floats, and a value refused where it is used otherwise
    (:mod:`scan._numba_cuda._thread_zero`).
    """
    dtype = plan.value_dtype
    if value is THREAD_ZERO_ONLY:
        return thread_zero_only(plan.function, rank, dtype, _contract_error)
    if dtype.names is not None:
        return np.array([value], dtype=dtype).view(np.dtype((np.record, dtype)))[0]
    return _cast(value, dtype)


def collective_call(function: str, bound: Mapping[str, Any]) -> Any:
    """Run one call of a family its spec simulates, for the calling simulated thread.

    Every thread of the block calls it, like a barrier: the last to arrive
    runs the family's block-wide semantics (:attr:`scan._spec.Primitive.simulate`)
    on every thread's arguments, and each thread takes its own result.
    """
    thread = _current_thread(function)
    clear_branch()
    launch = _launch_block(thread)
    options = {k: _pinned(thread, _unwrap(v)) for k, v in bound.items()}
    spec = for_call(function)
    assert spec.simulate is not None
    with np.errstate(all="ignore"):
        plan = _plan(function, options, launch)
        _check_library_storage(plan)
        rank = _rank(thread)

        def deposit(call: _Collective) -> None:
            call.args[rank] = options

        simulate = spec.simulate
        block, seq, call = _rendezvous(
            thread, plan, _Collective, deposit, lambda call: call.compute(simulate)
        )
        if plan.returns_value:
            result = _returned_value(plan, call.results[rank], rank)
        else:
            result = None
            _write_back(spec, options, call.results[rank])
        _leave(thread, plan, block, seq, call)
    return result


def _write_back(spec: Any, options: Mapping[str, Any], writes: Mapping[str, Any]) -> None:
    """Store a thread's results of a call that writes its arrays: values by parameter name.

    An ``output`` operand's parameter that was not passed names its alias
    (``out`` left out: the items, in place).
    """
    aliases = {op.param: op.alias for op in spec.operands if op.kind == "output" and op.alias}
    for name, values in writes.items():
        target = options.get(name)
        if target is None and name in aliases:
            target = options.get(aliases[name])
        assert target is not None, f"{spec.family}: no array for {name}"
        for i, value in enumerate(values):
            target[i] = value


_C = TypeVar("_C", _Call, _Collective)


def _rendezvous(
    thread: Any,
    plan: Any,
    cls: type[_C],
    deposit: Callable[[_C], None],
    compute: Callable[[_C], None],
) -> tuple[_BlockState, int, _C]:
    """Meet the block's other threads at their next call: every thread's operands, computed once.

    The thread deposits its operands (`deposit`); the last to arrive runs
    `compute`, and all pass a barrier. Refuses threads making other calls or
    arriving in another order.
    """
    threads = plan.threads
    rank = _rank(thread)
    block = _block_state(thread, threads)
    seq = block.sequence[rank]
    block.sequence[rank] = seq + 1
    with block.lock:
        found = block.calls.get(seq)
        if found is None:
            found = block.calls[seq] = cls(plan.function, threads)
    if not isinstance(found, cls):
        raise _order_error(plan.function, found.function, found.arrived, threads)
    call = found
    with call.cond:
        if call.function != plan.function and call.mismatch is None:
            call.mismatch = call.function
        call.plans[rank] = plan
        deposit(call)
        call.arrived += 1
        last = call.arrived == threads and call.mismatch is None
    if last:
        try:
            compute(call)
        except BaseException as exc:
            call.error = exc
            raise
    _barrier(thread)
    if call.error is not None:
        raise _rethrown(call.error)
    if call.mismatch is not None or call.arrived != threads or not call.computed:
        raise _order_error(plan.function, call.mismatch or call.function, call.arrived, threads)
    return block, seq, call


def _leave(thread: Any, plan: Any, block: _BlockState, seq: int, call: _Call | _Collective) -> None:
    """The thread is done with the call: the last one drops it; the trailing barrier."""
    with call.cond:
        call.left += 1
        if call.left == plan.threads:
            with block.lock:
                block.calls.pop(seq, None)
    if plan.auto_sync:
        _barrier(thread)


def _order_error(function: str, first: str, arrived: int, threads: int) -> RuntimeError:
    return RuntimeError(
        f"{function}: every thread of the block must make the same scan.block calls "
        f"in the same order; at this call {arrived} of {threads} threads arrived "
        f"(first call here: {first}, this one: {function}). "
        "Do not call block scans under a condition that differs between threads, and do "
        "not return early from some threads"
    )


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
    clear_branch()
    launch = _launch_block(thread)
    options = {k: _unwrap(v) for k, v in bound.items()}
    plan = _plan(function, options, launch)
    assert isinstance(plan, TileIOPlan)
    array = options["src" if function == "load" else "dst"]
    items = options["items"]
    start, valid = _tile_start(function, options, array)
    _check_library_storage(plan)
    threads = plan.threads
    rank = _rank(thread)
    _same_tile(thread, function, options, start, 0, threads, "the block")
    first = array[0] if isinstance(array, tuple) else array
    if isinstance(first, np.ndarray) and _contract_checks():
        wrong_step = tile_step_error(thread, plan, first, start, valid)
        if wrong_step is not None:
            raise _contract_error(wrong_step)
    ipt = plan.items_per_thread
    if plan.algorithm == "striped":
        positions = [i * threads + rank for i in range(ipt)]
    else:
        positions = [rank * ipt + i for i in range(ipt)]
    _move_items(plan, options, array, items, start, valid, positions)
    if plan.direction == "load" and isinstance(items, _LocalArray):
        full = valid >= plan.tile_items
        key = array_key(first)
        items.tile_source = Tile(key, start, full, plan.tile_items, "block")
        items.scan_lanes = None
    if plan.auto_sync and _moved_through_shared_memory(plan, array, start, valid):
        _barrier(thread)


def _move_items(
    plan: Any,
    options: Mapping[str, Any],
    array: Any,
    items: Any,
    start: int,
    valid: int,
    positions: list[int],
) -> None:
    """Move item ``i`` of the thread to or from ``array[start + positions[i]]``, the valid ones.

    A load gives the others ``oob_default`` when passed, and leaves them as
    they are otherwise (marking an earlier tile's item as left over). Zipped
    tile I/O (a plan with ``fields``) moves each field of the record items to
    or from its own array (`array` is then a tuple of them, or one array).
    """
    fields = getattr(plan, "fields", None)
    arrays = (array if isinstance(array, tuple) else (array,)) if fields is not None else ()

    def read(pos: int) -> Any:
        if fields is None:
            return array[start + pos]
        return tuple(a[start + pos] for a in arrays)

    with np.errstate(all="ignore"):
        if plan.direction == "load":
            oob = options.get("oob_default")
            function = getattr(plan, "function", plan.direction)
            fill = (
                None
                if oob is None
                else _scalar_operand(function, "oob_default", oob, plan.value_dtype)
            )
            origin = getattr(items, "origin", None)
            for i, pos in enumerate(positions):
                if pos < valid:
                    items[i] = read(pos)
                    if origin is not None:
                        origin[i] = _LOADED
                elif fill is not None:
                    items[i] = fill
                elif origin is not None and origin[i] in (_LOADED, _LEFTOVER):
                    origin[i] = _LEFTOVER  # an earlier tile's item, kept as on the GPU
        elif fields is None:
            for i, pos in enumerate(positions):
                if pos < valid:
                    array[start + pos] = _stored(items[i], array.dtype)
        else:
            records = np.asarray(items).view(np.ndarray)  # reading marks nothing written
            for i, pos in enumerate(positions):
                if pos < valid:
                    for a, name in zip(arrays, fields, strict=True):
                        a[start + pos] = _stored(records[i][name], a.dtype)


def _stored(value: Any, dtype: np.dtype[Any]) -> Any:
    """`value` as a store into an array of `dtype` writes it: bfloat16 rounded once."""
    return round_to_bfloat16(value)[()] if is_bfloat16(dtype) else value


def _same_tile(
    thread: Any,
    function: str,
    options: Mapping[str, Any],
    start: int,
    first: int,
    count: int,
    group: str,
) -> None:
    """Refuse a load or store whose offset (or valid_items) differs between the threads
    making it together: the block's, or a logical warp's (`count` threads from `first`).

    Each thread numbers its tile I/O calls; the first thread of the group to
    make its n-th call records its arguments, the others compare theirs.
    """
    if count == 1 or not _contract_checks():
        return
    valid = options.get("valid_items")
    mine = {"offset": start, "valid_items": None if valid is None else int(valid)}
    rank = _rank(thread)
    bx, by, bz = _launch_block(thread)
    block = _block_state(thread, bx * by * bz)
    with block.lock:
        seq = block.io_sequence.get(rank, 0)
        block.io_sequence[rank] = seq + 1
        record = block.io_calls.setdefault((first, seq), [rank, mine, 0])
        record[2] += 1
        if record[2] == count:
            del block.io_calls[(first, seq)]
    theirs = record[1]
    for name in ("offset", "valid_items"):
        if mine[name] != theirs[name]:
            raise _contract_error(
                different_arguments(
                    function, name, group, (record[0], theirs[name]), (rank, mine[name])
                )
            )


def _tile_start(function: str, options: Mapping[str, Any], array: Any) -> tuple[int, int]:
    """(offset, valid items from it) of a load or store: at most ``valid_items``.

    For a tuple of arrays (zipped tile I/O), the shortest array's.
    """
    start = _integer(function, "offset", options["offset"])
    valid = min(map(len, array) if isinstance(array, tuple) else [len(array)]) - start
    requested = options.get("valid_items")
    if requested is not None:
        valid = min(valid, _integer(function, "valid_items", requested))
    if start < 0:
        raise IndexError(
            f"{function}: offset={start} is negative; the tile would start before the array "
            "(on a GPU nothing is read or written: an empty tile, almost always a bug in the "
            "kernel); compute the offset from the tile loop, for base in block.tiles(n, items)"
        )
    return start, valid


def warp_io_call(function: str, bound: Mapping[str, Any]) -> None:
    """Run ``warp.load`` or ``warp.store`` for the calling simulated thread.

    Lane ``l`` of its logical warp moves the warp's tile items ``l * ipt + i``
    (``i * lanes + l`` for ``striped``) from the warp's ``offset``, only those
    before ``min(len(array) - offset, valid_items)``; as ``block.load`` and
    ``block.store`` otherwise. Each lane moves its own items: no rendezvous.
    """
    thread = _current_thread(function)
    clear_branch()
    launch = _launch_block(thread)
    options = {k: _unwrap(v) for k, v in bound.items()}
    plan = _plan(function, options, launch)
    array = options["src" if plan.direction == "load" else "dst"]
    items = options["items"]
    start, valid = _tile_start(function, options, array)
    ipt, lanes = plan.items_per_thread, plan.lanes
    lane = _rank(thread) % lanes
    first = _rank(thread) - lane
    group = f"a logical warp ({lanes} threads from thread {first})"
    _same_tile(thread, function, options, start, first, lanes, group)
    if plan.direction == "store" and _contract_checks():
        wrong_lanes = store_lanes_error(plan, items)
        if wrong_lanes is not None:
            raise _contract_error(wrong_lanes)
    if plan.algorithm == "striped":
        positions = [i * lanes + lane for i in range(ipt)]
    else:
        positions = [lane * ipt + i for i in range(ipt)]
    _move_items(plan, options, array, items, start, valid, positions)
    if plan.direction == "load" and isinstance(items, _LocalArray):
        key = array_key(array[0] if isinstance(array, tuple) else array)
        full = valid >= plan.warp_tile
        items.tile_source = Tile(key, start, full, plan.warp_tile, "warp", lanes)
        items.scan_lanes = None


def tile_size_call(bound: Mapping[str, Any]) -> int:
    """``block.tile_size`` for the calling simulated thread.

    As when compiled, the items array must be a local array (its length is
    the items per thread) or the items per thread a literal int.
    """
    thread = _current_thread("tile_size")
    items = _unwrap(bound["items"])
    per_thread: object = None
    if isinstance(items, np.ndarray):
        if items.ndim == 1 and _memory(items) == "local":
            per_thread = items.shape[0]
    elif isinstance(items, int | np.integer):
        per_thread = items
    return tile_size(per_thread, bound.get("threads"), _launch_block(thread))


def tile_loop_call(function: str, bound: Mapping[str, Any]) -> Any:
    """``block.tiles``, ``warp.tiles`` or ``warp.tile_size`` for the calling simulated thread.

    The tile (and so the step) as when compiled: the items array must be a
    local array (its length is the items per thread) or the items per thread
    a literal int; ``tiles`` returns the loop's ``range``.
    """
    thread = _current_thread(function)
    items = _unwrap(bound["items"])
    per_thread: object = None
    if isinstance(items, np.ndarray):
        if items.ndim == 1 and _memory(items) == "local":
            per_thread = items.shape[0]
    elif isinstance(items, int | np.integer):
        per_thread = items
    tile = tiles.step(
        function,
        per_thread,
        threads=bound.get("threads"),
        lanes=bound.get("lanes"),
        launch=_launch_block(thread),
    )
    if function == "warp.tile_size":
        return tile
    reverse = tiles.check_reverse(function, bound.get("reverse"))
    return tiles.offsets(tiles.check_length(function, bound["n"]), tile, reverse)


def _moved_through_shared_memory(
    plan: TileIOPlan,
    array: np.ndarray[Any, Any] | tuple[np.ndarray[Any, Any], ...],
    start: int,
    valid: int,
) -> bool:
    """Whether the generated provider's path for this tile uses its temp storage.

    ``vectorize`` with ``unaligned="warp_transpose"`` does only for a full tile
    whose address is not 16-byte aligned (partial tiles move without shared
    memory for every algorithm but ``striped``, which has none).
    """
    if plan.unaligned is None:
        return plan.uses_shared_memory
    arrays = array if isinstance(array, tuple) else (array,)
    addresses = [int(a.__array_interface__["data"][0]) + start * a.itemsize for a in arrays]
    return valid >= plan.tile_items and any(address % 16 != 0 for address in addresses)


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

    simulated = True

    def call(self, name: str, bound: Mapping[str, Any]) -> Any:
        """Run entry point `name` for the calling simulated thread."""
        if name == "tile_size":
            return tile_size_call(bound)
        if name in tiles.TILE_FUNCTIONS:
            return tile_loop_call(name, bound)
        spec = for_call(name)
        if spec.simulate is not None:
            return collective_call(name, bound)
        if spec.family == "warp_scan":
            return warp_scan_call(name, bound)
        if spec.family == "warp_io":
            return warp_io_call(name, bound)
        if spec.family == "tile_io":
            return tile_io_call(name, bound)
        return scan_call(name, bound)

    def default_cc(self) -> tuple[int, int]:
        """:data:`SIMULATOR_CC`."""
        return SIMULATOR_CC


def install() -> None:
    """Route :mod:`scan.block` calls to the simulator, and let kernels align arrays."""
    set_host_backend(SimulatorHost())
    _allow_alignment()


#: The static shared memory a kernel may declare (ptxas refuses more).
STATIC_SHARED_LIMIT = 48 * 1024

_allocation_lock = threading.Lock()


# on a launch's simulated shared memory: (size, what) of the largest library-owned
# temp storage its calls need (scan._numba_cuda._tile_order.library_storage_floor)
_LIBRARY_FLOOR = "_scan_library_floor"


def _kernel_name() -> str:
    manager = getattr(threading.current_thread(), "_manager", None)
    kernel = getattr(manager, "_f", None)
    return str(getattr(kernel, "__name__", "(unnamed)"))


def _check_static_shared(shared: Any, adding: int) -> None:
    """Refuse a block's static shared arrays beyond what a compiled kernel may declare.

    The library-owned temp storage of the calls made so far counts too (the
    largest: calls overlay theirs).
    """
    own = adding + sum(int(a.nbytes) for a in shared._allocations.values())
    library, what = getattr(shared, _LIBRARY_FLOOR, (0, ""))
    if own + library <= STATIC_SHARED_LIMIT:
        return
    if library:
        raise too_much_shared_memory(
            _kernel_name(), own + library, STATIC_SHARED_LIMIT, library=what
        )
    raise too_much_shared_memory(_kernel_name(), own, STATIC_SHARED_LIMIT, arrays_only=True)


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
        if shape == 0:  # dynamic shared memory is one buffer
            array = shared_array(self, shape, dtype)
            _shared_arrays[id(array)] = array
            return array
        align = None if alignment is None else check(alignment)
        # the simulator's rule: one allocation per calling source line and block
        # (its own lookup would name this function's line for every array)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with _allocation_lock:
            found = self._allocations.get(key)
            if found is None:
                dt = numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype
                found = np.zeros(shape, dtype=dt)
                if align is not None:
                    found = _aligned(found, align)
                _check_static_shared(self, found.nbytes)
                self._allocations[key] = found
                _shared_arrays[id(found)] = found
        return found

    def local(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        array = local_array(self, shape, dtype)
        if alignment is not None:
            array = _aligned(array, check(alignment))
        return _local_array(array)

    shared._scan_aligned = True  # type: ignore[attr-defined]
    kernelapi.FakeCUDAShared.array = shared
    kernelapi.FakeCUDALocal.array = local
