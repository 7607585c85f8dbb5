# SPDX-License-Identifier: Apache-2.0
"""What a primitive family declares: its calls, its operand ABI, and the hooks the layers use.

A primitive family (block scans, tile I/O, block reduce, ...) is one module
under :mod:`scan._primitives` that builds one :class:`Primitive`. It holds:

* its entry points (:class:`EntryPoint`: parameters in order, defaults,
  keyword-only flags and the *role* of each, which says what a front end
  must tell the planner about the argument);
* its planner (plain facts to an immutable plan, every rejection before any
  code exists), and its plan type;
* its operand ABI (:class:`AbiOperand`): one ordered table from which the
  C++ entry point's parameter list (:func:`c_parameters`) and both front
  ends' call emitters are made, so the three cannot disagree;
* its renderer, the callbacks its code calls, whether its library-owned temp
  storage may be overlaid with its kernel's other calls, a one-line summary
  for the log, and the plan a ``temp_storage(...)`` layout query compiles;
* its simulator semantics (a block-wide function of every thread's inputs),
  when the simulator runs it generically.

The build layer, :func:`scan._calls.plan_call`, the front ends and the
simulator look a call or a plan up in the registry (:mod:`scan._primitives`)
instead of testing plan types. This module imports neither Numba nor the
other layers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeAlias

import attrs

__all__ = [
    "THREAD_ZERO_ONLY",
    "AbiOperand",
    "BlockInputs",
    "EntryPoint",
    "OperandKind",
    "Param",
    "Primitive",
    "Role",
    "SimEngine",
    "c_parameters",
]

Role: TypeAlias = Literal["operand", "array", "index", "literal", "callable"]


class _ThreadZeroOnly:
    """A result a call defines in thread 0 only (the other threads get no usable value)."""

    def __repr__(self) -> str:
        return "THREAD_ZERO_ONLY"


#: What a family's simulator semantics give a thread whose result CUB leaves
#: unspecified (a reduce's other threads with ``broadcast=False``); the
#: simulator hands it over as a value that cannot pass for a result.
THREAD_ZERO_ONLY: Any = _ThreadZeroOnly()


@attrs.frozen
class Param:
    """One parameter of an entry point.

    ``callback`` is, for a ``callable`` parameter, the role statefn
    normalises its argument for (``"prefix"`` or ``"scan_op"``).
    """

    name: str
    role: Role
    default: Any = inspect.Parameter.empty
    keyword_only: bool = True
    callback: Literal["prefix", "scan_op"] | None = None

    def __attrs_post_init__(self) -> None:
        if (self.role == "callable") != (self.callback is not None):
            raise ValueError(f"{self.name}: a callable parameter, and only one, names its callback")


@attrs.frozen
class EntryPoint:
    """One public function of a kernel-side module (:mod:`scan.block`): its parameters and plan.

    Attributes
    ----------
    name : str
        The function's name in its module.
    kind : str
        What the call does within its family, in the family's own word (a
        scan, a tile load or store, a reduction: ``scan``, ``load``,
        ``store``, ``reduce``).
    params : tuple of Param
        In signature order.
    mode : {"inclusive", "exclusive"} or None
        Fixed by the name, or None where an argument decides (``scan``'s
        ``mode=``) or the family has none.
    sum : bool
        Whether the operator is fixed to ``+``.
    module : str
        The module of :mod:`scan` the function belongs to. Modules may
        share function names: the registry, the planners' messages, the
        front ends and the simulator know a call by its :attr:`key`.
    """

    name: str
    kind: str
    params: tuple[Param, ...]
    mode: Literal["inclusive", "exclusive"] | None = None
    sum: bool = False
    module: Literal["block", "warp"] = "block"
    signature: inspect.Signature = attrs.field(init=False, eq=False, repr=False)

    @signature.default
    def _signature(self) -> inspect.Signature:
        kinds = {
            True: inspect.Parameter.KEYWORD_ONLY,
            False: inspect.Parameter.POSITIONAL_OR_KEYWORD,
        }
        return inspect.Signature(
            [
                inspect.Parameter(p.name, kinds[p.keyword_only], default=p.default)
                for p in self.params
            ]
        )

    @property
    def key(self) -> str:
        """The call's name in the registry and in messages: ``inclusive_sum`` for
        :mod:`scan.block`'s functions, ``<module>.<name>`` for other modules'."""
        return self.name if self.module == "block" else f"{self.module}.{self.name}"

    @property
    def qualified_name(self) -> str:
        """``scan.<module>.<name>``."""
        return f"scan.{self.module}.{self.name}"

    @property
    def names(self) -> frozenset[str]:
        """Every parameter name (the accepted keywords)."""
        return frozenset(p.name for p in self.params)

    @property
    def callbacks(self) -> dict[str, Literal["prefix", "scan_op"]]:
        """The callable parameters, each with the role its argument is normalised for."""
        return {p.name: p.callback for p in self.params if p.callback is not None}


#: How a front end makes one operand of the provider's entry point from a call.
#:
#: ============  =============================================================
#: kind          operand
#: ============  =============================================================
#: ``array``     the data pointer of array parameter ``param``
#: ``value``     a stack slot holding ``param`` converted to the plan's value
#:               type (a record: the record itself, or a tuple stored field by
#:               field)
#: ``input``     the values a call reads: an array parameter's data pointer,
#:               or a scalar's stack slot (as ``value``)
#: ``output``    where the results go: when the plan returns a value, a fresh
#:               slot of the value type that the call returns afterwards; else
#:               the data pointer of ``param``, or of ``alias`` when ``param``
#:               was not passed
#: ``tile``      ``&array[offset]`` for array parameter ``param`` and index
#:               parameter ``offset``; for a plan whose ``zipped`` is true
#:               (``param`` a tuple of arrays, or one), a stack slot holding
#:               each array's ``&array[offset]``, in order
#: ``tile_valid``  (``long long``) the items from there to the array's end
#:               (the shortest array's, for a tuple of arrays), at most
#:               ``count`` (an index parameter) when passed, and 0 for an
#:               ``offset`` before the array
#: ``count``     (``long long``) index parameter ``param``, or ``absent`` when
#:               not passed
#: ``nbytes``    (``long long``) the size in bytes of array parameter
#:               ``param`` (its items times its itemsize)
#: ============  =============================================================
#:
#: An operand with ``when`` set is null (0 for integers) unless that boolean
#: plan attribute is true.
OperandKind: TypeAlias = Literal[
    "array", "value", "input", "output", "tile", "tile_valid", "count", "nbytes"
]
#: The kinds passed by value as a 64-bit integer; every other kind is a pointer.
INTEGER_KINDS = frozenset({"tile_valid", "count", "nbytes"})


@attrs.frozen
class AbiOperand:
    """One operand of a provider's ``extern "C"`` entry point, in the table's order.

    Attributes
    ----------
    name : str
        The C++ parameter's name.
    kind : OperandKind
        How a front end makes it (see :data:`OperandKind`).
    param : str, tuple of str, or None
        The call's parameter it comes from; a tuple names alternatives, of
        which each call has one (``src`` of ``load``, ``dst`` of ``store``).
    when : str or None
        A boolean attribute of the plan; the operand is null when it is false.
    alias : str or None
        ``output``: the parameter written when ``param`` was not passed.
    offset, count : str or None
        ``tile``/``tile_valid``: the index parameters (start, and at most how many).
    absent : int
        ``count``: the value passed when the parameter was not.
    const : bool
        Whether the provider only reads through the pointer.
    """

    name: str
    kind: OperandKind
    param: str | tuple[str, ...] | None = None
    when: str | None = None
    alias: str | None = None
    offset: str | None = None
    count: str | None = None
    absent: int = 0
    const: bool = False

    @property
    def integer(self) -> bool:
        """Whether the operand is a 64-bit integer (else a pointer)."""
        return self.kind in INTEGER_KINDS

    @property
    def c_parameter(self) -> str:
        """The C++ parameter declaration."""
        if self.integer:
            return f"long long {self.name}"
        return f"{'const ' if self.const else ''}void* {self.name}"

    def present(self, plan: object) -> bool:
        """Whether the operand is passed (not null) for `plan`."""
        return self.when is None or bool(getattr(plan, self.when))

    def param_of(self, entry: EntryPoint) -> str:
        """The parameter of `entry` this operand comes from."""
        names = (self.param,) if isinstance(self.param, str) else (self.param or ())
        for name in names:
            if name in entry.names:
                return name
        raise KeyError(f"{entry.key} has none of the parameters {names} (operand {self.name})")


def c_parameters(operands: Sequence[AbiOperand]) -> str:
    """The entry point's C++ parameter list, in the table's order."""
    return ", ".join(op.c_parameter for op in operands)


class BlockInputs(Protocol):
    """What the simulator hands a family's block-wide semantics: every thread's call."""

    @property
    def plan(self) -> Any:
        """The call's plan (every thread's is equal)."""

    def items(self, rank: int, name: str, count: int, unset: str | None = None) -> Any:
        """Thread `rank`'s array (or scalar, as an array of one) argument `name`, as values.

        `count` is how many of the block's tile items the result takes in
        (blocked arrangement); the simulator refuses items among them that no
        load filled, with the message `unset` (after the call's name) when
        given.
        """

    def index(self, rank: int, name: str) -> int:
        """Thread `rank`'s integer argument `name`."""

    def combiner(self, op: Any) -> Callable[[Any, Any], Any]:
        """``op(a, b)`` on two values, with the generated code's semantics."""


class SimEngine(Protocol):
    """The simulator engine's services to a family's own simulation (:attr:`Primitive.simulator`).

    The engine (``scan._numba_cuda._sim``) models numba's simulated threads and
    blocks, the kernel's memory and the state contract; a family's simulation
    reaches them only through these, so it imports neither Numba nor the front
    end. ``thread`` is the calling simulated thread (:meth:`current_thread`).
    """

    #: How often (seconds) a thread waiting for others checks whether the simulator aborted.
    poll_s: float

    def current_thread(self, function: str) -> Any:
        """The simulated thread running the caller; refuses host calls."""

    def launch_block(self, thread: Any) -> tuple[int, int, int]:
        """The launch's block shape."""

    def rank(self, thread: Any) -> int:
        """The thread's linear index in its block."""

    def block_index(self, thread: Any) -> tuple[tuple[int, int, int], int]:
        """The thread's block index, and its linear index in the grid (x fastest)."""

    def barrier(self, thread: Any) -> None:
        """The block barrier (``cuda.syncthreads()``)."""

    def check_abort(self, thread: Any) -> None:
        """Stop the thread when another thread of its block raised."""

    def wait(self, thread: Any, record: Any, ready: Callable[[], bool]) -> None:
        """Wait on `record`'s condition until `ready`, giving up if the simulator aborts."""

    def missing_threads(self, thread: Any, ranks: Sequence[int]) -> list[str]:
        """Of the threads `ranks` of the caller's block, those that cannot arrive, and why."""

    def clear_branch(self) -> None:
        """Forget the branch the calling thread took on an unfilled item."""

    def passed(self, value: Any) -> bool:
        """Whether an optional argument was given (neither left out nor None)."""

    def unwrap(self, value: Any) -> Any:
        """The NumPy array behind a simulated device array (else `value`)."""

    def pinned(self, thread: Any, value: Any) -> Any:
        """A callback descriptor pinned once per block (else `value`)."""

    def memory(self, value: Any) -> Any:
        """Where an array lives (``"local"``, ``"shared"``, ``"global"``), or None."""

    def is_local_array(self, value: Any) -> bool:
        """Whether `value` is a simulated ``cuda.local.array`` (it keeps tile records)."""

    def is_unfilled(self, value: Any) -> bool:
        """Whether a value was read from (or computed from) an item no load filled."""

    def plan(
        self,
        function: str,
        options: Mapping[str, Any],
        launch: tuple[int, int, int],
        memory: Mapping[str, Any] | None = None,
    ) -> Any:
        """The plan of a call (memoised), its callbacks checked as the compiler would.

        `memory`: where the array arguments it names live (:meth:`memory`), for
        the plan's facts.
        """

    def check_library_storage(self, plan: Any) -> None:
        """Refuse library-owned temp storage a compiled kernel could not declare."""

    def contract_checks(self) -> bool:
        """Whether the state-contract checks are on."""

    def contract_error(self, message: str) -> Exception:
        """A state-contract error naming the kernel's line."""

    def same_indices(self, function: str, indices: list[Mapping[str, Any]], group: str) -> None:
        """Refuse index arguments that differ between the threads of `group`."""

    def combiner(self, op: Any, dtype: Any) -> Callable[[Any, Any], Any]:
        """``op(a, b)`` on two values of `dtype`, with the generated code's semantics."""

    def host_callable(self, obj: Any, descriptor: Any) -> Callable[..., Any]:
        """What to call on the host for a callback."""

    def rethrown(self, error: BaseException) -> BaseException:
        """`error`, raised by another thread of the block, for this thread to raise."""

    def block_state(self, thread: Any, threads: int) -> Any:
        """The block's records: ``lock``, and ``records(key, factory)`` for a family's own."""

    def rendezvous(
        self,
        thread: Any,
        plan: Any,
        cls: type[Any],
        deposit: Callable[[Any], None],
        compute: Callable[[Any], None],
    ) -> tuple[Any, int, Any]:
        """Meet the block's threads at their next call: (block state, call number, record)."""

    def leave(self, thread: Any, plan: Any, block: Any, seq: int, record: Any) -> None:
        """The thread is done with the call (the trailing barrier, if the plan syncs)."""

    def note_carried_scan(self, thread: Any) -> None:
        """Record that the thread made a scan carried from tile to tile."""

    # the tile-loop checks of the front end (scan._numba_cuda._tile_order, ._strides):
    # each returns the message of a refused tile order, or None

    def carried_scan_error(self, plan: Any, values: Any, state: Any) -> str | None:
        """A carried scan's tile that cannot follow the last one scanned on `state`."""

    def lookback_order_error(
        self, plan: Any, offsets: dict[int, Any], tile: int, source: Any
    ) -> str | None:
        """A look-back tile whose items do not follow the earlier tiles' (`offsets`)."""

    def warp_lanes_error(self, plan: Any, values: Any) -> str | None:
        """A warp scan of items loaded for other lanes."""

    def store_lanes_error(self, plan: Any, items: Any) -> str | None:
        """A warp store of items scanned with other lanes."""

    def tile_step_error(
        self, thread: Any, plan: Any, array: Any, start: int, valid: int
    ) -> str | None:
        """A block load or store whose offset does not step by whole tiles."""

    def different_arguments(
        self, function: str, name: str, group: str, first: tuple[int, Any], other: tuple[int, Any]
    ) -> str:
        """The message of an argument that differs between the threads of `group`."""

    def tile(
        self,
        array: tuple[int, int],
        offset: int,
        full: bool,
        size: int,
        family: str,
        lanes: int = 0,
    ) -> Any:
        """Where a load's items came from (recorded on its items array as ``tile_source``)."""

    def array_key(self, array: Any) -> tuple[int, int]:
        """The identity of the memory `array` views (for :meth:`tile`)."""


@attrs.frozen
class Primitive:
    """One primitive family: everything the layers need to plan, build, lower and simulate it.

    Attributes
    ----------
    family : str
        The plan kind (part of each plan's key) and the registry's name.
    calls : tuple of EntryPoint
        The public functions of the family, in :mod:`scan.block`'s order.
    plan_type : type
        The family's plan class.
    plan : callable
        ``plan(entry, facts, block) -> plan``: checks one call (facts by
        parameter name, see :mod:`scan._calls`) and builds its plan.
    operands : tuple of AbiOperand
        The provider's operand ABI, in order.
    render : callable
        ``render(plan, callbacks, symbol, storage) -> str``: the provider's
        C++ (``callbacks`` are the :class:`~scan._codegen.CallbackDecl` of
        ``callbacks(plan)``, in order).
    callbacks : callable
        ``callbacks(plan) -> list``: the user callables the provider calls.
    shares_storage : callable
        ``shares_storage(plan) -> bool``: whether the provider may overlay
        its library-owned temp storage with its kernel's other calls (it owns
        library storage and ends with a barrier after its last use of it).
    describe : callable
        ``describe(plan) -> str``: what the call does, in a few words (log).
    layout_plan : callable or None
        ``layout_plan(primitive, dtype, block, items_per_thread, algorithm) ->
        plan`` for ``temp_storage(primitive, ...)`` queries (a plan with
        caller-owned temp storage).
    docs : mapping of str to str
        The docstring of each call's function in :mod:`scan.block`.
    layout_names : tuple of str
        The ``primitive=`` names of :func:`scan.block.temp_storage` it answers.
    returns : str or None
        The parameter whose (element) type the call returns when the plan's
        ``returns_value`` is true.
    stubs : tuple
        The overload tables of the family's functions in ``block.pyi``
        (:class:`scan._primitives._stubs_common.StubFunction`).
    stub_literals : mapping of str to tuple of str
        ``Literal`` aliases of ``block.pyi`` generated from the spec's data
        (e.g. its algorithms).
    stub_declarations : str
        The family's other aliases in ``block.pyi``.
    simulate : callable or None
        ``simulate(block) -> list``: the block-wide semantics, each thread's
        result by rank, given every thread's inputs (:class:`BlockInputs`);
        None where the family gives :attr:`simulator` instead.
    keyword_hint : callable or None
        ``keyword_hint(key, name) -> str``: why call `key` of the family
        takes no keyword `name` (one that other calls take), as `` (...)``
        appended to the refusal, or ``""``
        (:func:`scan._plan.check_unknown_keywords`).
    simulator : callable or None
        ``simulator(engine, function, bound) -> result``: runs one call for
        the calling simulated thread (``bound``: the arguments by parameter
        name), through the engine's services (:class:`SimEngine`); for the
        families whose semantics :attr:`simulate` does not give.
    moves_tiles : bool
        Whether each call moves one tile between an array and an items
        array, from the index parameter ``offset`` into (or out of) the
        parameter ``items``: the tile-loop checks (:mod:`scan._numba_loops`)
        follow such a call's offset to its loop and its items to the scans.
    storage_floor : callable or None
        ``storage_floor(plan) -> (bytes, what) or None``: the least static
        shared memory the call's library-owned temp storage takes in a
        compiled kernel, and what it is, for the simulator's refusal of a
        kernel over the limit; None where the generic bound (a raking
        layout, a reverse scan's exchange buffers:
        ``scan._numba_cuda._tile_order.library_storage_floor``) holds.
    """

    family: str
    calls: tuple[EntryPoint, ...]
    plan_type: type
    plan: Callable[[EntryPoint, Mapping[str, Any], tuple[int, int, int]], Any]
    operands: tuple[AbiOperand, ...] = attrs.field()
    render: Callable[[Any, Sequence[Any], str | None, str | None], str]
    callbacks: Callable[[Any], list[Any]]
    shares_storage: Callable[[Any], bool]
    describe: Callable[[Any], str]
    docs: Mapping[str, str] = attrs.field(factory=dict)
    layout_plan: Callable[[str, Any, tuple[int, int, int], int, str | None], Any] | None = None
    layout_names: tuple[str, ...] = ()
    returns: str | None = None
    stubs: tuple[Any, ...] = ()
    stub_literals: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    stub_declarations: str = ""
    simulate: Callable[[BlockInputs], list[Any]] | None = None
    keyword_hint: Callable[[str, str], str] | None = None
    simulator: Callable[[SimEngine, str, Mapping[str, Any]], Any] | None = None
    moves_tiles: bool = False
    storage_floor: Callable[[Any], tuple[int, str] | None] | None = None

    @operands.validator
    def _check_operands(self, _: Any, operands: tuple[AbiOperand, ...]) -> None:
        names = [op.name for op in operands]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.family}: operand names repeat: {names}")
        params = {p.name for entry in self.calls for p in entry.params}
        for op in operands:
            alternatives = op.param if isinstance(op.param, tuple) else (op.param,)
            for ref in (*alternatives, op.alias, op.offset, op.count):
                if ref is not None and ref not in params:
                    raise ValueError(
                        f"{self.family}: operand {op.name} names {ref!r}, which no call has"
                    )
