# SPDX-License-Identifier: Apache-2.0
"""The simulator engine: CUB's observable semantics in numba's CUDA simulator.

Under ``NUMBA_ENABLE_CUDASIM=1`` numba runs every thread of a block as a Python
thread, and the public functions of :mod:`scan.block` and :mod:`scan.warp`
call into this module from each of them. The engine knows no family: it looks
each call's family up in the registry (:mod:`scan._primitives`) and runs it

* generically, where the family's spec gives its block-wide semantics
  (:attr:`scan._spec.Primitive.simulate`): a rendezvous where every thread
  deposits its arguments in a record shared by the block (keyed by how many
  calls the thread has made so far), the last thread to arrive computes every
  thread's result, and the simulator's own block barrier (the one behind
  ``cuda.syncthreads()``) releases everyone; or
* through the family's own simulation (:attr:`scan._spec.Primitive.simulator`,
  in ``scan._primitives.<family>._sim``), which reaches the engine's services
  through :class:`scan._spec.SimEngine`.

The engine owns what every family shares: the simulated thread and block, the
rendezvous, runtime values as plan facts (every call is bound and planned by
:mod:`scan._calls`, so the simulator refuses exactly the calls the compiled
path refuses, with the same messages; the simulator prefixes the thread and
block index when it re-raises an exception from a kernel thread), callbacks
the compiler would refuse, arithmetic in the value type, tracked local and
shared memory, the state contract, the kernel's static shared memory limit,
and ``alignment=`` for simulated arrays.
"""

from __future__ import annotations

import linecache
import os
import sys
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
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
from .._errors import ScanTypeError, StateContractError, too_much_shared_memory
from .._lookback import status_dtype
from .._plan import (
    ArrayFact,
    Block,
    Memory,
    Operand,
    ScalarFact,
    TupleFact,
    ZipFact,
    tile_size,
)
from .._primitives import for_call, for_plan
from .._primitives._sim_common import (
    CONTRACT_ENV,
    DERIVED,
    IN_CALLBACK,
    LEFTOVER,
    NEVER,
    WRITTEN,
    CallRecord,
    bad_items,
    cast,
    integer,
    record_fields,
    result,
    same_plan,
)
from .._spec import THREAD_ZERO_ONLY, SimEngine
from .._tile_status import TileStatus
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
    "install",
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
    function: str,
    bound: Mapping[str, Any],
    launch: Block,
    memory: Mapping[str, Memory | None] | None = None,
) -> Any:
    """The plan of a call, memoised: every simulated thread makes the same calls.

    `memory` names where the call's array arguments named in it live (the facts
    of the others name none).
    """
    converters = _CONVERTERS
    if memory:
        where = dict(memory)

        def state(function: str, name: str, obj: Any) -> Operand | None:
            return _operand(function, name, obj, where.get(name))

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


def _unfilled_codes(origin: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Per item: whether no load filled it (never written, left over, or derived from such)."""
    return (origin == NEVER) | (origin >= LEFTOVER)  # type: ignore[no-any-return]


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
            never = self.origin[key] == NEVER
            self.origin[key] = np.where(never, WRITTEN, self.origin[key])
        elif isinstance(out, np.number) and self.origin is not None:
            code = self.origin[key]
            if code == NEVER or code >= LEFTOVER:
                return unfilled(out)
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.carried is not None and not getattr(threading.current_thread(), IN_CALLBACK, False):
            forget_carried(self)  # kernel code writes a prefix state: a new pass
        origin = self.origin
        if origin is None:
            super().__setitem__(key, plain(value))
            return
        code = WRITTEN
        if is_unfilled(value):
            code, value = DERIVED, plain(value)
        elif taints_write(sys._getframe(1)):
            code = DERIVED
        super().__setitem__(key, value)
        source = getattr(value, "origin", None)
        if source is not None and code == WRITTEN:
            try:  # a copy of items (flags[:4] = items[:4]) keeps their marks
                origin[key] = np.where(_unfilled_codes(source), DERIVED, WRITTEN)
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
        return lambda a, b: cast(
            result(op, fn(record_fields(a, tup), record_fields(b, tup)), dtype), dtype
        )
    return lambda a, b: cast(result(op, fn(a, b), dtype), dtype)


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


def _same_indices(function: str, indices: list[Mapping[str, Any]], group: str) -> None:
    """Refuse index arguments (parameters of role ``index``) that differ by thread."""
    if not indices or not indices[0] or not _contract_checks():
        return
    for name, value in indices[0].items():
        first = None if value is None or value is MISSING else integer(function, name, value)
        for rank, other in enumerate(indices[1:], start=1):
            got = other.get(name)
            mine = None if got is None or got is MISSING else integer(function, name, got)
            if mine != first:
                raise _contract_error(
                    different_arguments(function, name, group, (0, first), (rank, mine))
                )


class _BlockState:
    """The rendezvous records of one simulated block, and the families' own records."""

    def __init__(self, threads: int) -> None:
        self.lock = threading.Lock()
        self.calls: dict[int, CallRecord] = {}
        self.sequence = [0] * threads  # rendezvous calls made so far, per thread
        self._records: dict[str, Any] = {}

    def records(self, key: str, factory: Callable[[], Any]) -> Any:
        """The block's record `key` of a family's simulation, made by `factory` at first use.

        The caller guards its use with :attr:`lock` where threads share it.
        """
        with self.lock:
            found = self._records.get(key)
            if found is None:
                found = self._records[key] = factory()
            return found


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


def _wait(thread: Any, call: CallRecord, ready: Callable[[], bool]) -> None:
    """Wait on the call's condition until *ready*, giving up if the simulator aborts."""
    with call.cond:
        while not ready():
            _check_abort(thread)
            call.cond.wait(_POLL_S)


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


# ---------------------------------------------------------------------------
# families whose block-wide semantics their spec gives (Primitive.simulate)


class _Collective(CallRecord):
    """One call of one block, for a family the spec simulates: every thread's arguments."""

    def __init__(self, function: str, threads: int) -> None:
        super().__init__(function, threads)
        self.args: list[Mapping[str, Any]] = [{}] * threads
        self.results: list[Any] = []

    # the view the spec's semantics read (scan._spec.BlockInputs)
    @property
    def plan(self) -> Any:
        return self.plans[0]

    def items(self, rank: int, name: str, count: int, unset: str | None = None) -> Any:
        plan = self.plans[0]
        value = self.args[rank][name]
        n = plan.items_per_thread
        if getattr(plan, "scalar", False):
            if count > rank and is_unfilled(value):
                self._unfilled(rank, 0, DERIVED)
            return np.array([cast(value, plan.value_dtype)], dtype=plan.value_dtype)
        bad = bad_items(value, min(n, max(0, count - rank * n)))
        if bad is not None and unset is not None and _contract_checks():
            raise _contract_error(f"{self.function}: {unset}")
        if bad is not None:
            self._unfilled(rank, *bad)
        return np.asarray(value[:n], dtype=plan.value_dtype)

    def index(self, rank: int, name: str) -> int:
        return integer(self.function, name, self.args[rank][name])

    def combiner(self, op: Any) -> Callable[[Any, Any], Any]:
        return _combiner(op, self.plans[0].value_dtype)

    def _unfilled(self, rank: int, item: int, origin: int) -> None:
        if not _contract_checks():
            return
        how = {
            NEVER: "was never written (a cuda.local.array starts uninitialised)",
            LEFTOVER: "is left over from an earlier tile",
            DERIVED: "was computed from (or chosen by a comparison of) an item no load filled",
        }[origin]
        raise _contract_error(
            f"{self.function}: item {item} of thread {rank} {how}, and the call takes it in: "
            "a partial tile was loaded without oob_default=, which leaves items past the valid "
            "range as they are; pass oob_default= to block.load (the operator's identity: 0 "
            "for a sum, -inf or the dtype's minimum for max) or pass valid= to the call"
        )

    def compute(self, simulate: Callable[[Any], list[Any]]) -> None:
        plan = same_plan(self.plans)
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
    return cast(value, dtype)


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


_C = TypeVar("_C", bound=CallRecord)


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


def _leave(thread: Any, plan: Any, block: _BlockState, seq: int, call: CallRecord) -> None:
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


# ---------------------------------------------------------------------------
# the engine's services to the families' own simulations


def _block_index(thread: Any) -> tuple[tuple[int, int, int], int]:
    (bx, by, bz), (gx, gy, _) = thread.blockIdx, thread._manager._grid_dim
    linear = int(bx) + int(gx) * (int(by) + int(gy) * int(bz))
    return (int(bx), int(by), int(bz)), linear


def _missing_threads(thread: Any, ranks: Sequence[int]) -> list[str]:
    """Of the threads `ranks`, those that cannot arrive: returned from the kernel, or
    waiting at a block barrier."""
    running: dict[int, Any] = {}
    for other in threading.enumerate():  # the block's threads still running
        if getattr(other, "_manager", None) is thread._manager:
            running[int(getattr(other, "thread_id", -1))] = other
    found = []
    for rank in ranks:
        waiting = running.get(rank)
        if waiting is None:
            found.append(f"thread {rank} returned from the kernel")
        elif getattr(waiting, "syncthreads_blocked", False):
            found.append(f"thread {rank} waits at a block barrier")
    return found


def _passed(value: Any) -> bool:
    return value is not None and value is not MISSING


def _is_local_array(value: Any) -> bool:
    return isinstance(value, _LocalArray)


class _Engine:
    """The engine's services (:class:`scan._spec.SimEngine`) to a family's simulation."""

    poll_s = _POLL_S
    current_thread = staticmethod(_current_thread)
    launch_block = staticmethod(_launch_block)
    rank = staticmethod(_rank)
    block_index = staticmethod(_block_index)
    barrier = staticmethod(_barrier)
    check_abort = staticmethod(_check_abort)
    wait = staticmethod(_wait)
    missing_threads = staticmethod(_missing_threads)
    clear_branch = staticmethod(clear_branch)
    passed = staticmethod(_passed)
    unwrap = staticmethod(_unwrap)
    pinned = staticmethod(_pinned)
    memory = staticmethod(_memory)
    is_local_array = staticmethod(_is_local_array)
    is_unfilled = staticmethod(is_unfilled)
    plan = staticmethod(_plan)
    check_library_storage = staticmethod(_check_library_storage)
    contract_checks = staticmethod(_contract_checks)
    contract_error = staticmethod(_contract_error)
    same_indices = staticmethod(_same_indices)
    combiner = staticmethod(_combiner)
    host_callable = staticmethod(_host_callable)
    rethrown = staticmethod(_rethrown)
    block_state = staticmethod(_block_state)
    rendezvous = staticmethod(_rendezvous)
    leave = staticmethod(_leave)
    note_carried_scan = staticmethod(note_carried_scan)
    carried_scan_error = staticmethod(carried_scan_error)
    lookback_order_error = staticmethod(lookback_order_error)
    warp_lanes_error = staticmethod(warp_lanes_error)
    store_lanes_error = staticmethod(store_lanes_error)
    tile_step_error = staticmethod(tile_step_error)
    different_arguments = staticmethod(different_arguments)
    tile = staticmethod(Tile)
    array_key = staticmethod(array_key)


_ENGINE: SimEngine = _Engine()


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
        if spec.simulator is None:
            raise NotImplementedError(f"{name}: the {spec.family} family has no simulation")
        return spec.simulator(_ENGINE, name, bound)

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
