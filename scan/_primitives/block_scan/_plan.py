# SPDX-License-Identifier: Apache-2.0
"""Block scans' planner: :class:`ScanPlan` and :func:`plan_scan`, with every refusal of a scan.

Also what the warp scans share with the block scans (:class:`ScanLikePlan`,
whose plans are keyed by :func:`scan_key_field`; :mod:`..warp_scan` plans
its values, operator and prefix callback through :func:`plan_scan`), the
default algorithms (:data:`DEFAULT_SCAN`, :data:`DEFAULT_REVERSE_SCAN`), the
checks of a look-back scan's tile status and of a stateful prefix callback's
state. Built on :mod:`scan._plan`; imports neither numba nor any CUDA package.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeAlias

import attrs
import numpy as np

import statefn

from ..._errors import PlanError, ScanTypeError
from ..._lookback import Lookback, is_deterministic, is_status_dtype, status_matches
from ..._plan import (
    ArrayFact,
    Block,
    BlockPlan,
    Operand,
    ScalarFact,
    TupleFact,
    check_operator,
    check_record_operand,
    check_value_dtype,
    check_warp_algorithm,
    digest,
    items_per_thread_of,
    plan_fields,
    provider_symbol,
    size_class,
    spelled,
    temp_mode,
)
from ..._vocab import MODES, SCAN_ALGORITHMS, Mode, TempMode, is_bfloat16, is_complex, is_half

__all__ = [
    "DEFAULT_REVERSE_SCAN",
    "DEFAULT_SCAN",
    "REVERSE_EXCHANGE_LIMIT",
    "PrefixOp",
    "ScanLikePlan",
    "ScanPlan",
    "check_reverse_exchange",
    "check_status_dtype",
    "default_scan_algorithm",
    "plan_scan",
    "scan_key_field",
]

#: A prefix callback, as statefn normalises it.
PrefixOp: TypeAlias = "statefn.StatefulFunction[Any, Any] | statefn.StatelessFunction[Any]"


def _kind_key(plan: ScanLikePlan) -> str:
    return digest(plan.KIND, plan_fields(plan))


def scan_key_field() -> Any:
    """The ``key`` field of a :class:`ScanLikePlan`: the digest of its kind and fields."""
    return attrs.field(
        init=False, eq=False, repr=False, default=attrs.Factory(_kind_key, takes_self=True)
    )


class ScanLikePlan(BlockPlan):
    """What the scan families' plans (block and warp scans) derive from their fields."""

    __slots__ = ()
    #: the plan kind: part of the key and of the provider's symbol
    KIND: ClassVar[str]
    key: str
    scalar: bool
    scan_op: statefn.ScanOperator
    prefix_op: PrefixOp | None

    @property
    def symbol(self) -> str:
        """The ``extern "C"`` entry point of the provider generated for this plan."""
        return provider_symbol(self.KIND, self.key)

    @property
    def returns_value(self) -> bool:
        """Whether the call returns its result (a scalar scan) instead of writing ``out``."""
        return self.scalar

    @property
    def stateful(self) -> bool:
        """Whether the prefix callback carries state."""
        return isinstance(self.prefix_op, statefn.StatefulFunction)

    @property
    def state_dtype(self) -> np.dtype | None:
        """The prefix state's dtype, for stateful callbacks."""
        if isinstance(self.prefix_op, statefn.StatefulFunction):
            return self.prefix_op.state_dtype
        return None


@attrs.frozen
class ScanPlan(ScanLikePlan):
    """Everything a block scan's generated code depends on.

    Attributes
    ----------
    function : str
        The public entry point that was called (for messages).
    value_dtype : numpy.dtype
        The scanned type.
    block : tuple of int
        Block dimensions (x, y, z); linear thread rank is row-major.
    items_per_thread : int
        Items each thread contributes (1 for scalars).
    scalar : bool
        True when values are a scalar and the result is returned.
    mode : {"inclusive", "exclusive"}
    scan_op : statefn.ScanOperator
    has_initial_value : bool
    prefix_op : statefn.StatefulFunction or statefn.StatelessFunction or None
    has_block_aggregate : bool
        Whether the block aggregate is written to a caller array.
    algorithm : {"raking", "raking_memoize", "warp_scans"}
    temp_storage : {"implicit", "caller"}
    auto_sync : bool
        Whether a block barrier follows the call.
    reverse : bool
        Whether the tile is scanned from its end: each item's result combines
        it with the items after it, and the prefix callback carries the
        suffix of the tiles to the right.
    lookback : bool
        Whether the prefix comes from the earlier tiles of a tile status
        (``prefix_op=scan.lookback``; ``prefix_op`` is then None): CUB's
        decoupled look-back across blocks. The initial value, if any, seeds
        tile 0 only. With ``reverse``, tile 0 is the sequence's last and the
        earlier tiles lie to the right: the prefix is their suffix.
    deterministic : bool
        With ``lookback``: the status is a deterministic one
        (``scan.tile_status(..., deterministic=True)``), so each tile's prefix
        combines the earlier tiles' aggregates from tile 0 on, in order,
        whichever of them the look-back finds published as prefixes.
    """

    function: str
    value_dtype: np.dtype
    block: Block
    items_per_thread: int
    scalar: bool
    mode: Mode
    scan_op: statefn.ScanOperator
    has_initial_value: bool
    prefix_op: PrefixOp | None
    has_block_aggregate: bool
    algorithm: str
    temp_storage: TempMode
    auto_sync: bool
    reverse: bool = False
    lookback: bool = False
    deterministic: bool = False
    key: str = scan_key_field()
    KIND: ClassVar[str] = "scan"


# ---------------------------------------------------------------------------
# default algorithms


#: Scan algorithm when none is named, by (threads, items per thread, item
#: bytes); anything else gets ``raking``. Measured as tile I/O's ``DEFAULT_IO``:
#: ``warp_scans`` is 10% faster at 512 x 8, 0.2-0.6% at 128 x 8, and at 16
#: items a thread it is as fast as ``raking`` on long rows and faster on rows
#: shorter than one tile.
DEFAULT_SCAN: dict[tuple[int, int, int], str] = {
    (128, 8, 4): "warp_scans",
    (512, 8, 4): "warp_scans",
    (256, 16, 4): "warp_scans",
    (512, 16, 4): "warp_scans",
    (256, 4, 8): "warp_scans",
}

#: Where a reverse scan's default differs from a forward scan's (same keys as
#: :data:`DEFAULT_SCAN`). Measured on an H200 with int32 suffix sums over
#: 8192 x 65536 (docs/performance.md, "Reverse scans"): at 256 x 4 ``raking``
#: took 1.314 ms and ``warp_scans`` 1.092 (CUB C++'s fastest kernel 1.076); at
#: 128 x 8, 256 x 8 and 512 x 4 the forward defaults were as fast or faster.
DEFAULT_REVERSE_SCAN: dict[tuple[int, int, int], str] = {
    (256, 4, 4): "warp_scans",
}


def default_scan_algorithm(
    block: Block, items_per_thread: int, dtype: np.dtype[Any], *, reverse: bool = False
) -> str:
    """The scan algorithm used when none is named (:data:`DEFAULT_SCAN`, and
    :data:`DEFAULT_REVERSE_SCAN` first for reverse scans)."""
    threads = block[0] * block[1] * block[2]
    if threads % 32:
        return "raking"
    key = (threads, items_per_thread, size_class(dtype))
    if reverse and key in DEFAULT_REVERSE_SCAN:
        return DEFAULT_REVERSE_SCAN[key]
    return DEFAULT_SCAN.get(key, "raking")


# ---------------------------------------------------------------------------
# planning


def plan_scan(
    *,
    function: str,
    values: Operand,
    out: Operand | None,
    mode: str,
    scan_op: object,
    initial_value: ScalarFact | TupleFact | None,
    prefix_op: object,
    prefix_state: ArrayFact | None,
    block_aggregate: ArrayFact | None,
    algorithm: str | None,
    temp_storage: ArrayFact | None,
    block: Block,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
    reverse: object = False,
    tile: ScalarFact | None = None,
) -> ScanPlan:
    """Check one scan call and build its plan.

    Parameters are plain facts about the call; see :class:`ScanPlan`.

    Raises
    ------
    PlanError, ScanTypeError, statefn.StatefnError
        For every call the library refuses, before any code is generated.
    """
    f = function
    if mode not in MODES:
        raise PlanError(f"{f}: mode must be 'inclusive' or 'exclusive' (got {mode!r})")
    if algorithm is not None and algorithm not in SCAN_ALGORITHMS:
        raise PlanError(
            f"{f}: algorithm must be one of {', '.join(map(repr, SCAN_ALGORITHMS))} "
            f"(got {algorithm!r})"
        )
    value_dtype = check_value_dtype(f, "values", values.dtype)
    ipt = items_per_thread_of(f, values, items_per_thread)
    if algorithm is None:
        algorithm = default_scan_algorithm(block, ipt, value_dtype, reverse=reverse is True)
    scalar = isinstance(values, ScalarFact)

    if scalar and out is not None:
        raise PlanError(
            f"{f}: out= was given with a scalar value; a scalar scan returns its result "
            "(x = block.inclusive_sum(x)), only array payloads write out="
        )
    if out is not None:
        if not isinstance(out, ArrayFact) or out.ndim != 1:
            raise ScanTypeError(f"{f}: out must be a 1-D local array like values")
        if out.dtype != value_dtype:
            raise ScanTypeError(
                f"{f}: out has dtype {out.dtype} but values have {value_dtype}; "
                "use arrays of the same dtype"
            )
        if out.length is not None and out.length != ipt:
            raise PlanError(
                f"{f}: out has length {out.length} but values hold {ipt} items per thread; "
                "use arrays of the same length"
            )

    op = statefn.normalize(scan_op, role="scan_op")
    if op.is_builtin and value_dtype.names is not None:
        sums = "sums" if op.is_sum else f"scan_op={op.builtin!r}"
        raise ScanTypeError(
            f"{f}: values are records ({statefn.dtype_name(value_dtype)}), and {sums} are "
            "not defined on records; use inclusive_scan/exclusive_scan with "
            "scan_op=<function of (a, b)> returning a tuple of the fields, e.g. "
            "lambda a, b: (a[0] * b[0], b[0] * a[1] + b[1])"
        )
    check_operator(f, "scan_op", op, value_dtype, "values")

    lookback = isinstance(prefix_op, Lookback)
    ordered = False
    if lookback:
        _check_lookback(f, value_dtype, prefix_state, block_aggregate, temp_storage, block)
        ordered = prefix_state is not None and is_deterministic(prefix_state.dtype)
        prefix_op = prefix_state = None
    elif tile is not None:
        raise PlanError(
            f"{f}: tile= was given without prefix_op=scan.lookback; tile= numbers the tiles of "
            "a cross-block scan's status: drop it, or pass prefix_op=scan.lookback with "
            "prefix_state=scan.tile_status(...)"
        )
    elif prefix_state is not None and is_status_dtype(prefix_state.dtype):
        raise PlanError(
            f"{f}: prefix_state= is a tile status (scan.tile_status), which only "
            "prefix_op=scan.lookback reads; pass prefix_op=scan.lookback"
        )
    if tile is not None and not (isinstance(tile, ScalarFact) and tile.dtype.kind in "iu"):
        raise ScanTypeError(
            f"{f}: tile= must be an integer, the tile's index in the status (got "
            f"{_fact_name(tile)}); e.g. tile=cuda.blockIdx.x"
        )
    prefix: PrefixOp | None = None
    if prefix_op is not None:
        prefix = statefn.normalize(prefix_op, role="prefix")
    if prefix is not None and initial_value is not None:
        raise PlanError(
            f"{f}: prefix_op= and initial_value= cannot be combined: the prefix callback's "
            "return value seeds the scan (CUB has no overload taking both); drop initial_value= "
            "or fold it into the callback's initial state"
        )
    if prefix is not None and block_aggregate is not None:
        raise PlanError(
            f"{f}: prefix_op= and block_aggregate= cannot be combined: CUB passes the block "
            "aggregate to the callback instead; read it there (block_aggregate argument)"
        )
    if isinstance(prefix, statefn.StatefulFunction):
        if prefix_state is None:
            raise PlanError(
                f"{f}: prefix_op={prefix.name or prefix.op.__name__!s} is stateful but "
                f"prefix_state= is missing; pass a {_local_array_hint(prefix.state_dtype)} "
                "initialised equally in every thread"
            )
        _check_state(f, prefix, prefix_state)
        _check_state_holds_values(f, prefix, value_dtype)
    elif prefix_state is not None:
        what = "no prefix_op=" if prefix is None else "a stateless prefix_op="
        raise PlanError(
            f"{f}: prefix_state= was given with {what}; prefix_state is only for stateful "
            "callbacks declared with @statefn.stateful(dtype)"
        )

    if initial_value is not None:
        check_record_operand(f, "initial_value", initial_value, value_dtype)
    if mode == "exclusive" and not op.is_sum and initial_value is None and lookback:
        raise PlanError(
            f"{f}: an exclusive scan with scan_op={op.builtin or op.name or '<function>'!r} and "
            "prefix_op=scan.lookback needs initial_value=: tile 0 has no earlier tile, so its "
            "first output would be undefined (only sums have an identity CUB can use); the "
            "initial value seeds tile 0, and through it every later tile"
        )
    if mode == "exclusive" and not op.is_sum and initial_value is None and prefix is None:
        raise PlanError(
            f"{f}: an exclusive scan with scan_op={op.builtin or op.name or '<function>'!r} needs "
            "initial_value= or prefix_op=: thread 0's first output would be undefined "
            "(only sums have an identity CUB can use)"
        )
    if block_aggregate is not None and (
        block_aggregate.dtype != value_dtype or block_aggregate.ndim != 1
    ):
        raise ScanTypeError(
            f"{f}: block_aggregate must be a 1-D array of the values' dtype {value_dtype} "
            f"(got {block_aggregate.ndim}-D {block_aggregate.dtype})"
        )
    check_warp_algorithm(f, algorithm, block)
    if reverse is None:
        reverse = False
    if not isinstance(reverse, bool | np.bool_):
        raise PlanError(f"{f}: reverse= must be a literal True or False (got {reverse!r})")
    if reverse:
        check_reverse_exchange(f, block, value_dtype)
    return ScanPlan(
        function=f,
        value_dtype=value_dtype,
        block=block,
        items_per_thread=ipt,
        scalar=scalar,
        mode=mode,  # type: ignore[arg-type]
        scan_op=op,
        has_initial_value=initial_value is not None,
        prefix_op=prefix,
        has_block_aggregate=block_aggregate is not None,
        algorithm=algorithm,
        temp_storage=temp_mode(f, temp_storage),
        auto_sync=auto_sync,
        reverse=bool(reverse),
        lookback=lookback,
        deterministic=lookback and ordered,
    )


def _check_lookback(
    f: str,
    value_dtype: np.dtype,
    status: ArrayFact | None,
    block_aggregate: ArrayFact | None,
    temp_storage: ArrayFact | None,
    block: Block,
) -> None:
    """Refuse what a look-back scan (``prefix_op=scan.lookback``) cannot take."""
    check_status_dtype(f, "values", value_dtype, "prefix_op=scan.lookback")
    make = f"scan.tile_status(tiles, np.{value_dtype.name})"
    if value_dtype.names is not None:
        make = "scan.tile_status(tiles, <the values' record dtype>)"
    if status is None:
        raise PlanError(
            f"{f}: prefix_op=scan.lookback needs prefix_state=, the tile status the blocks "
            f"share: make it with status = {make} on the host, pass it to the kernel, and "
            "give prefix_state=status (or status[row] for one row of a 2-D status)"
        )
    if not isinstance(status, ArrayFact) or not is_status_dtype(status.dtype):
        raise ScanTypeError(
            f"{f}: prefix_op=scan.lookback reads its prefix from a tile status, but "
            f"prefix_state= is {_fact_name(status)}; pass the status made by {make} "
            "(or status[row] for one row of a 2-D status)"
        )
    if not status_matches(status.dtype, value_dtype):
        raise ScanTypeError(
            f"{f}: prefix_state= is a tile status made for values of another dtype than "
            f"this scan's ({statefn.dtype_name(value_dtype)}); the status's layout depends on "
            f"the values: make it with {make}"
        )
    if status.ndim != 1:
        raise ScanTypeError(
            f"{f}: prefix_state= is a {status.ndim}-D tile status (one row per sequence); "
            "pass the row this scan belongs to, prefix_state=status[row], with tile= its tile "
            "within the row (e.g. tile=cuda.blockIdx.x)"
        )
    if not status.contiguous:
        raise ScanTypeError(
            f"{f}: prefix_state= must be a whole row of a tile status (got a strided view); "
            "pass the status, or status[row] of a 2-D one"
        )
    if block_aggregate is not None:
        raise PlanError(
            f"{f}: prefix_op=scan.lookback and block_aggregate= cannot be combined: the "
            "look-back publishes the tile's aggregate to the status for later tiles instead"
        )
    if temp_storage is not None:
        raise PlanError(
            f"{f}: prefix_op=scan.lookback uses library-owned temp storage (the scan's and the "
            "look-back's); drop temp_storage="
        )
    if block[0] % 32 != 0:
        raise PlanError(
            f"{f}: prefix_op=scan.lookback needs the block's x dimension to be a multiple of 32 "
            f"(got block {block}): CUB's look-back runs on the first warp, lane = threadIdx.x"
        )


def check_status_dtype(f: str, name: str, dtype: np.dtype, what: str) -> np.dtype:
    """The value dtype of a cross-block scan's tile status.

    Integers, float32, float64 and records of them; half-precision and
    complex values are refused. `name` names the dtype's argument, `what`
    the call that needs a status.
    """
    value_dtype = check_value_dtype(f, name, dtype)
    if is_half(value_dtype) or is_complex(value_dtype):
        raise ScanTypeError(
            f"{f}: {what} does not take values of dtype {value_dtype} (a tile status holds the "
            "integer, float32 and float64 values and records of them); scan float32 items "
            "(block.load widens half-precision arrays into them exactly), or carry a complex "
            "prefix with a record of its two parts"
        )
    return value_dtype


def _fact_name(fact: object) -> str:
    if isinstance(fact, ArrayFact):
        return f"a {fact.ndim}-D array of {statefn.dtype_name(fact.dtype)}"
    if isinstance(fact, ScalarFact):
        return f"a scalar of {fact.dtype}"
    return repr(fact)


#: The most shared memory a reverse scan's exchange may add (bytes).
REVERSE_EXCHANGE_LIMIT = 32 * 1024


def check_reverse_exchange(f: str, block: Block, value_dtype: np.dtype) -> None:
    """Refuse a reverse scan whose exchange (one value a thread, each way) is too large."""
    threads = block[0] * block[1] * block[2]
    nbytes = 2 * threads * value_dtype.itemsize
    if nbytes > REVERSE_EXCHANGE_LIMIT:
        raise PlanError(
            f"{f}: reverse=True exchanges one value a thread each way through shared memory "
            f"(2 x {threads} threads x {value_dtype.itemsize} bytes = {nbytes} bytes), more "
            f"than the {REVERSE_EXCHANGE_LIMIT} bytes it may use; use fewer threads"
        )


# ---------------------------------------------------------------------------
# a stateful prefix callback's state


def _check_state(f: str, prefix: statefn.StatefulFunction[Any, Any], state: ArrayFact) -> None:
    want = prefix.state_dtype
    if want.names is not None or state.dtype.names is not None:
        _check_record_state(f, want, state)
    elif state.dtype.fields is not None or not (
        state.dtype.kind in "iufc" or is_bfloat16(state.dtype)
    ):
        raise ScanTypeError(
            f"{f}: prefix_state has dtype {state.dtype}, which is not a numeric dtype; "
            f"the callback declares state dtype {want}: allocate "
            f"cuda.local.array(1, {spelled(want)})"
        )
    if state.dtype != want:
        raise ScanTypeError(
            f"{f}: prefix_state has dtype {state.dtype} but the callback declares state dtype "
            f"{want}; allocate cuda.local.array(1, {spelled(want)}) (dtypes must match exactly)"
        )
    if state.ndim != 1:
        raise ScanTypeError(
            f"{f}: prefix_state must be a 1-D array of length 1 (got {state.ndim}-D)"
        )
    if state.length is not None and state.length != 1:
        raise PlanError(
            f"{f}: prefix_state must hold exactly one item per thread (got length "
            f"{state.length}); allocate {_local_array_hint(want)}"
        )
    if state.memory in _SHARED_MEMORY:
        raise ScanTypeError(
            f"{f}: prefix_state is {_SHARED_MEMORY[state.memory]}, one cell that every thread "
            "of the block sees, but the state is per thread: each calling lane of the "
            "callback updates its own copy (up to 32 lanes would update this one cell); "
            f"allocate {_local_array_hint(want)} and initialise it in every thread"
        )


def _check_record_state(f: str, want: np.dtype, state: ArrayFact) -> None:
    """:func:`_check_state`'s type checks where the state or the declaration is a record."""
    hint = _local_array_hint(want)
    if statefn.dtype_key(state.dtype) != statefn.dtype_key(want):
        raise ScanTypeError(
            f"{f}: prefix_state has dtype {statefn.dtype_name(state.dtype)} but the callback "
            f"declares state dtype {statefn.dtype_name(want)}; allocate {hint} with the "
            "declared dtype (records must match field by field)"
        )


def _check_state_holds_values(
    f: str, prefix: statefn.StatefulFunction[Any, Any], value_dtype: np.dtype
) -> None:
    """Refuse a state dtype that cannot hold every aggregate of the values exactly.

    Numeric state and values, or records with the same field names (field by
    field); a record state beside other values may carry anything, so it is
    left alone. The state's C type is what the callback's code computes in: a
    narrower one would silently truncate the prefix it carries.
    """
    want = prefix.state_dtype
    name = prefix.name or prefix.op.__name__
    fix = f"@statefn.stateful({spelled(value_dtype)})"
    if want.names is None and value_dtype.names is None:
        why = _lossy_state(want, value_dtype)
        if why is not None and _state_only_counts(prefix, value_dtype):
            return
        where = f"state dtype {want}, which cannot hold the aggregate of {value_dtype} values"
    elif want.names is not None and value_dtype.names is not None:
        if set(want.names) != set(value_dtype.names):
            return
        fields = {r.name: r.dtype for r in statefn.record_fields(want)}
        lossy = [
            (r.name, fields[r.name], r.dtype, why)
            for r in statefn.record_fields(value_dtype)
            if (why := _lossy_state(fields[r.name], r.dtype)) is not None
        ]
        if not lossy:
            return
        field, state_type, value_type, why = lossy[0]
        where = (
            f"state dtype {statefn.dtype_name(want)}, whose field {field} ({state_type}) cannot "
            f"hold the field {field} ({value_type}) of the values' aggregate"
        )
        fix = "@statefn.stateful(<the values' record dtype>)"
    else:
        return
    if why is not None:
        raise ScanTypeError(
            f"{f}: prefix_op={name} declares {where}: {why}; declare the callback with a "
            f"state dtype that holds the values, e.g. {fix}, or cast the values to the "
            "state's dtype before the scan"
        )


def _probe_aggregates(value: np.dtype) -> list[Any]:
    """Aggregates that a state of too narrow a type cannot hold: fractions, signs, magnitudes."""
    if value.kind == "c":
        part = np.dtype(f"f{value.itemsize // 2}").type
        reals = _probe_aggregates(np.dtype(part))
        # each real probe as an imaginary part too: a real state drops it
        return [value.type(complex(r, r)) for r in reals]
    if value.name in _FLOATS:
        digits, exponent = _FLOATS[value.name]
        # a fraction, the value's last significant bit, and a magnitude
        largest = 2.0**exponent * (2 - 2.0 ** (1 - digits))
        probes = [1 / 3, 1 + 2.0 ** (1 - digits), -largest / 2]
        return [np.asarray(p).astype(value)[()] for p in probes]
    info = np.iinfo(value)
    # small, and with every bit of the type set (no float of fewer digits holds them)
    probes = [3, info.max // 3, info.max]
    if value.kind == "i":
        probes += [-1, info.min // 3, info.min]
    return [value.type(v) for v in probes]


def _state_only_counts(prefix: statefn.StatefulFunction[Any, Any], value: np.dtype) -> bool:
    """Whether the callback's state does not carry the aggregate, so its dtype need not hold it.

    A state may count calls or tiles (an int32 counter beside float values)
    rather than carry the running aggregate. The callback runs on the host,
    as in the simulator, with probe aggregates the declared state could not
    hold: once with a state array of its declared dtype and once with one of
    Python numbers, which loses nothing. The same state after every probe
    means the aggregate never reached the state. A callback that cannot run
    on the host (it calls device functions) is taken to carry it.
    """
    import warnings

    for aggregate in _probe_aggregates(value):
        declared = np.zeros(1, prefix.state_dtype)
        exact = np.zeros(1, object)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                prefix(declared, aggregate)
                prefix(exact, aggregate)
            # as Python numbers, which compare ints and floats exactly
            got, want = (getattr(x, "item", lambda x=x: x)() for x in (declared[0], exact[0]))
            same = bool(got == want)
        except Exception:  # not runnable on the host: the dtype rule stands
            return False
        if not same:
            return False
    return True


def _lossy_state(state: np.dtype, value: np.dtype) -> str | None:
    """Why a numeric `state` cannot hold every `value` exactly, or None when it can.

    Floats hold floats of no more significant digits and no larger exponents
    than their own (float16 and bfloat16 hold neither of each other), and
    integers while they fit the significand (float32: 2**24, float64:
    2**53). A complex state holds what its parts hold, a real one no complex
    values. Integers hold integers of the same signedness no wider than
    themselves, and unsigned ones narrower than themselves; an unsigned state
    holds no signed values.
    """
    if value.kind == "c" and state.kind != "c":
        return f"a real state drops the imaginary part of {value} aggregates"
    if state.kind == "c":
        # a complex state holds what its real and imaginary parts (floats) hold
        part = np.dtype(f"f{state.itemsize // 2}")
        if value.kind == "c":
            wide_enough = state.itemsize >= value.itemsize
            return None if wide_enough else f"{state} is narrower than {value}"
        why = _lossy_state(part, value)
        return None if why is None else f"{state}'s parts are {part}, and {why}"
    if state.name in _FLOATS:
        digits, exponent = _FLOATS[state.name]
        if value.name in _FLOATS:
            value_digits, value_exponent = _FLOATS[value.name]
            if digits >= value_digits and exponent >= value_exponent:
                return None
            if digits < value_digits:
                return f"{state} is narrower than {value}"
            return f"{state} cannot hold {value} values of 2**{exponent + 1} and more"
        bits = value.itemsize * 8 - (value.kind == "i")
        if bits <= digits:
            return None
        return (
            f"{state} holds integers exactly only up to 2**{digits}, and {value} values "
            f"reach 2**{bits}"
        )
    if value.name in _FLOATS:
        return f"an integer state drops the fraction of a {value} aggregate"
    if state.kind == "u" and value.kind == "i":
        return f"an unsigned state cannot hold negative {value} aggregates"
    state_bits = state.itemsize * 8 - (state.kind == "i")
    value_bits = value.itemsize * 8 - (value.kind == "i")
    if state_bits >= value_bits:
        return None
    if state.kind == value.kind:
        return f"{state} is narrower than {value}"
    return f"{state} cannot hold {value} values of 2**{state_bits} and more"


#: The real floats' significant digits and largest exponent, by name.
_FLOATS = {"float16": (11, 15), "bfloat16": (8, 127), "float32": (24, 127), "float64": (53, 1023)}

_SHARED_MEMORY = {
    "shared": "a cuda.shared.array",
    "global": "a global-memory array (a kernel argument)",
}


def _local_array_hint(dtype: np.dtype) -> str:
    if dtype.names is not None:
        return f"cuda.local.array(1, {statefn.dtype_name(dtype)} dtype)"
    return f"cuda.local.array(1, {spelled(dtype)})"
