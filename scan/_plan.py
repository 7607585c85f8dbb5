# SPDX-License-Identifier: Apache-2.0
"""Plans: the immutable specialisation of one block-primitive call.

A plan is built from plain facts about a call (dtypes, static lengths, literal
options, the block shape) and holds everything the generated C++ depends on.
Every rejection the library makes lives here, so the compiled path and the
simulator refuse exactly the same calls with exactly the same words. This
module imports neither numba nor any CUDA package.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs
import numpy as np

import statefn

from ._errors import PlanError, ScanTypeError
from ._lookback import Lookback, is_deterministic, is_status_dtype, status_matches
from ._vocab import (
    BITWISE_OPERATORS,
    IO_ALGORITHMS,
    MODES,
    NO_SHARED_MEMORY_IO,
    SCAN_ALGORITHMS,
    VALUE_DTYPES,
    WARP_ALGORITHMS,
    Mode,
    TempMode,
    is_bfloat16,
    is_complex,
    is_half,
    is_value_dtype,
    widens,
)

__all__ = [
    "DEFAULT_REVERSE_SCAN",
    "REVERSE_EXCHANGE_LIMIT",
    "ArrayFact",
    "Block",
    "BlockPlan",
    "Memory",
    "Operand",
    "PrefixOp",
    "ScalarFact",
    "ScanLikePlan",
    "ScanPlan",
    "TileIOPlan",
    "TupleFact",
    "ZipFact",
    "as_array",
    "as_scalar",
    "check_index",
    "check_launch_bounds",
    "check_operand_range",
    "check_operator",
    "check_record_operand",
    "check_reverse_exchange",
    "check_status_dtype",
    "check_tile_operands",
    "check_unknown_keywords",
    "check_value_dtype",
    "check_zipped_operands",
    "default_io",
    "default_io_algorithm",
    "digest",
    "items_per_thread_of",
    "plan_fields",
    "plan_scan",
    "plan_tile_io",
    "provider_symbol",
    "resolve_block",
    "scan_key_field",
    "spelled",
    "temp_mode",
    "tile_size",
]

_PLAN_SCHEMA_VERSION = 1

PrefixOp: TypeAlias = "statefn.StatefulFunction[Any, Any] | statefn.StatelessFunction[Any]"
Block: TypeAlias = tuple[int, int, int]
#: Where an array operand lives.
Memory: TypeAlias = Literal["local", "shared", "global"]


@attrs.frozen
class ScalarFact:
    """A scalar operand: its dtype, and its value when the kernel writes it as a constant.

    The value (a Python number, or None) is only checked against the range of
    half-precision values (:func:`check_record_operand`); it takes no part in
    equality.
    """

    dtype: np.dtype = attrs.field(converter=np.dtype)
    value: object = attrs.field(default=None, eq=False)


@attrs.frozen
class ArrayFact:
    """An array operand as the typer sees it.

    Attributes
    ----------
    dtype : numpy.dtype
        Element type.
    ndim : int
        Number of dimensions.
    length : int or None
        The static length when the array is a ``cuda.local.array`` (or
        ``cuda.shared.array``) of literal shape, else None.
    contiguous : bool
        Whether the layout is C-contiguous.
    memory : {"local", "shared", "global"} or None
        Where the array lives, when the front end can tell (a
        ``cuda.local.array``, a ``cuda.shared.array``, a kernel argument),
        else None. Only ``prefix_state`` is checked against it.
    """

    dtype: np.dtype = attrs.field(converter=np.dtype)
    ndim: int = 1
    length: int | None = None
    contiguous: bool = True
    memory: Memory | None = None


def _dtypes(items: Any) -> tuple[np.dtype, ...]:
    return tuple(np.dtype(t) for t in items)


@attrs.frozen
class TupleFact:
    """A tuple of numbers written in the kernel, e.g. ``initial_value=(1.0, 0.0)``.

    It stands for a record value, its items converted to the record's
    fields in order; only ``initial_value=`` and ``oob_default=`` of calls on
    record values take one.
    """

    items: tuple[np.dtype, ...] = attrs.field(converter=_dtypes)

    @property
    def dtype(self) -> np.dtype:
        """The items as a record of fields ``f0, f1, ...`` (for messages)."""
        return np.dtype([(f"f{i}", t) for i, t in enumerate(self.items)])


def _arrays(items: Iterable[ArrayFact]) -> tuple[ArrayFact, ...]:
    return tuple(items)


@attrs.frozen
class ZipFact:
    """A tuple of arrays written in the kernel: zipped tile I/O's one array per record field.

    Only ``src`` of ``block.load`` and ``dst`` of ``block.store`` take one.
    """

    arrays: tuple[ArrayFact, ...] = attrs.field(converter=_arrays)

    @property
    def dtype(self) -> np.dtype:
        """The arrays' dtypes as a record of fields ``f0, f1, ...`` (for messages)."""
        return np.dtype([(f"f{i}", a.dtype) for i, a in enumerate(self.arrays)])


Operand: TypeAlias = ScalarFact | ArrayFact | TupleFact | ZipFact


def provider_symbol(kind: str, key: str) -> str:
    """The entry-point symbol of a provider: unique per plan key."""
    return f"statefn_scan_{kind}_{key[:24]}"


def _canonical(value: object) -> object:
    if isinstance(value, np.dtype):
        return statefn.dtype_key(value)
    if isinstance(value, statefn.StatefulFunction | statefn.StatelessFunction):
        return {"descriptor": type(value).__name__, "key": value.key}
    if isinstance(value, statefn.ScanOperator):
        return {"scan_op": value.key}
    if isinstance(value, Lookback):
        return {"prefix": value.key}
    if isinstance(value, tuple):
        return [_canonical(v) for v in value]
    return value


def digest(kind: str, fields: Mapping[str, object]) -> str:
    doc = {
        "schema": _PLAN_SCHEMA_VERSION,
        "kind": kind,
        "fields": {k: _canonical(v) for k, v in sorted(fields.items())},
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class BlockPlan:
    """What every family's plan derives from its block shape, item count and storage mode."""

    __slots__ = ()
    block: Block
    items_per_thread: int
    temp_storage: TempMode

    @property
    def threads(self) -> int:
        """Threads per block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def tile_items(self) -> int:
        """Items one call covers for the whole block."""
        return self.threads * self.items_per_thread

    @property
    def caller_temp(self) -> bool:
        """Whether the caller passes the temp storage."""
        return self.temp_storage == "caller"


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


@attrs.frozen
class TileIOPlan(BlockPlan):
    """Everything a tile load or store's generated code depends on.

    Attributes
    ----------
    direction : {"load", "store"}
    value_dtype : numpy.dtype
    block : tuple of int
    items_per_thread : int
    algorithm : str
        One of :data:`IO_ALGORITHMS`.
    has_oob_default : bool
        Loads only: out-of-range items receive a default value.
    temp_storage : {"implicit", "caller"}
    auto_sync : bool
    unaligned : {None, "warp_transpose"}
        ``vectorize`` only: how a tile whose address is not 16-byte aligned
        moves. None: direct accesses, as CUB's ``BLOCK_*_VECTORIZE`` does;
        ``"warp_transpose"``: CUB's warp-striped accesses and exchange (the
        default tile I/O where :data:`DEFAULT_IO` names
        :data:`VECTORIZE_ELSE_WARP_TRANSPOSE`). Not a user-facing name.
    fields : tuple of str or None
        Zipped tile I/O: the record fields (of ``value_dtype``) moved, one
        array each, in the order of the arrays passed (a load: every field, in
        field order). None: one array of ``value_dtype`` items.
    array_dtypes : tuple of numpy.dtype or None
        The dtype of each array moved (one, or one per field of
        :attr:`fields`) where some array's differs from its items': a
        float16 or bfloat16 array of float32 or float64 items, which a load
        widens exactly and a store rounds to nearest, ties to even
        (:data:`scan._vocab.WIDENING`). None: every array has its items' dtype.
    """

    direction: Literal["load", "store"]
    value_dtype: np.dtype
    block: Block
    items_per_thread: int
    algorithm: str
    has_oob_default: bool
    temp_storage: TempMode
    auto_sync: bool
    unaligned: Literal["warp_transpose"] | None = None
    fields: tuple[str, ...] | None = None
    array_dtypes: tuple[np.dtype, ...] | None = None
    key: str = attrs.field(init=False, eq=False, repr=False)

    @key.default
    def _key(self) -> str:
        return digest("tile_io", plan_fields(self))

    @property
    def zipped(self) -> bool:
        """Whether the items are records moved field by field, one array per field."""
        return self.fields is not None

    @property
    def array_dtype(self) -> np.dtype:
        """The dtype of the (one) array moved: :attr:`value_dtype` unless it converts."""
        return self.array_dtypes[0] if self.array_dtypes is not None else self.value_dtype

    def field_plans(self) -> tuple[TileIOPlan, ...]:
        """Zipped tile I/O: the plan of each field's array, in :attr:`fields` order.

        Each moves the field's items as a numeric tile I/O call would, with
        this plan's algorithm and block (converting where the field's array
        has another dtype than the field).
        """
        assert self.value_dtype.fields is not None
        assert self.fields is not None
        plans = []
        for i, name in enumerate(self.fields):
            field = self.value_dtype.fields[name][0]
            array = field if self.array_dtypes is None else self.array_dtypes[i]
            converts = None if array == field else (array,)
            plans.append(attrs.evolve(self, value_dtype=field, fields=None, array_dtypes=converts))
        return tuple(plans)

    @property
    def uses_shared_memory(self) -> bool:
        """Whether some path of the call moves items through its ``TempStorage``."""
        return self.algorithm not in NO_SHARED_MEMORY_IO or self.unaligned is not None

    @property
    def symbol(self) -> str:
        """The ``extern "C"`` entry point of the provider generated for this plan."""
        return provider_symbol(self.direction, self.key)

    @property
    def returns_value(self) -> bool:
        """Tile I/O returns nothing."""
        return False


def plan_fields(plan: Any) -> dict[str, Any]:
    """What identifies `plan`: its key's parts, which its generated unit also lists.

    Every field set at construction but a scan's ``function`` (the entry
    points share a provider), a tile plan's ``unaligned``, ``fields`` and
    ``array_dtypes`` and a reduce's ``items_dtype`` only when set and a scan's
    ``reverse``, ``lookback`` and ``deterministic`` only when true, so that
    plans without them keep the keys and text they had before they existed.
    """
    fields = {f.name: getattr(plan, f.name) for f in attrs.fields(type(plan)) if f.init}
    fields.pop("function", None)
    for optional in ("unaligned", "fields", "array_dtypes", "items_dtype"):
        if fields.get(optional, False) is None:
            del fields[optional]
    for flag in ("reverse", "lookback", "deterministic"):
        if fields.get(flag, True) is False:
            del fields[flag]
    return fields


# ---------------------------------------------------------------------------
# shared checks


def _normalize_threads(function: str, threads: object) -> Block:
    dims: tuple[object, ...]
    if isinstance(threads, int | np.integer) and not isinstance(threads, bool):
        dims = (int(threads),)
    elif isinstance(threads, tuple) and 1 <= len(threads) <= 3:
        dims = threads
    else:
        raise PlanError(
            f"{function}: threads= must be a literal int or a 2- or 3-tuple of literal ints "
            f"(got {threads!r}); write e.g. threads=128 or threads=(8, 16)"
        )
    out: list[int] = []
    for d in dims:
        if not isinstance(d, int | np.integer) or isinstance(d, bool) or int(d) < 1:
            raise PlanError(
                f"{function}: every block dimension must be a positive literal int "
                f"(got threads={threads!r})"
            )
        out.append(int(d))
    while len(out) < 3:
        out.append(1)
    return (out[0], out[1], out[2])


def _first(bounds: object) -> object:
    if isinstance(bounds, tuple | list) and bounds:
        return bounds[0]
    return None


def check_launch_bounds(function: str, block: Block | None, launch_bounds: object) -> None:
    """Refuse a launch with more threads than the kernel's own ``launch_bounds=`` allow.

    Raises
    ------
    PlanError
        When the block has more threads than the bound's first value.
    """
    if block is None or launch_bounds is None:
        return
    first = launch_bounds if isinstance(launch_bounds, int) else _first(launch_bounds)
    threads = block[0] * block[1] * block[2]
    if isinstance(first, int) and threads > first:
        raise PlanError(
            f"{function}: the kernel declares launch_bounds={launch_bounds!r} (at most {first} "
            f"threads a block) but is launched with block shape {tuple(block)}, {threads} "
            f"threads; launch at most {first} threads, or raise or drop launch_bounds= (the "
            "library declares the launch's block size itself)"
        )


def resolve_block(function: str, threads: object, launch_block: Block | None) -> Block:
    """The block shape of a call, from ``threads=`` and/or the launch.

    Raises
    ------
    PlanError
        With neither, or when both are known and differ.
    """
    explicit = None if threads is None else _normalize_threads(function, threads)
    launch = None if launch_block is None else _normalize_threads(function, tuple(launch_block))
    if explicit is not None and launch is not None and explicit != launch:
        raise PlanError(
            f"{function}: the kernel was launched with block shape {launch} but the call "
            f"says threads={explicit}; make them agree (or drop threads= to use the launch's)"
        )
    block = explicit or launch
    if block is None:
        raise PlanError(
            f"{function}: the block shape is unknown; launch the kernel with a block shape "
            "(kernel[grid, block](...)) or pass a literal threads= (int or 2/3-tuple); "
            "scan.compile takes the launch's block shape as block="
        )
    if block[0] * block[1] * block[2] > 1024:
        raise PlanError(
            f"{function}: a block of {block} has {block[0] * block[1] * block[2]} threads; "
            "CUDA allows at most 1024"
        )
    return block


def check_value_dtype(function: str, what: str, dtype: np.dtype) -> np.dtype:
    """The canonical value dtype: a numeric scalar, or a record of numeric fields."""
    if dtype.names is not None:
        try:
            return statefn.as_value_dtype(dtype, what=f"{function}: {what} has dtype")
        except statefn.StateDtypeError as exc:
            raise ScanTypeError(str(exc)) from None
    if not is_value_dtype(dtype):
        allowed = ", ".join([*(d.name for d in VALUE_DTYPES), "bfloat16"])
        raise ScanTypeError(
            f"{function}: {what} has dtype {dtype}, which block scans do not support; "
            f"use one of {allowed}"
        )
    return dtype


def check_operator(
    f: str, what: str, op: statefn.ScanOperator, value_dtype: np.dtype, values: str
) -> None:
    """Refuse a built-in operator `op` (passed as `what`) that `values` of `value_dtype` lack.

    Bitwise operators need integers, ``min`` and ``max`` an order (complex
    numbers have none).
    """
    if not op.is_builtin:
        return
    name = f"{what}={op.builtin!r}"
    if op.builtin in BITWISE_OPERATORS and value_dtype.kind not in "iu":
        raise ScanTypeError(
            f"{f}: {name} is a bitwise operator but {values} are {value_dtype}; "
            "use an integer dtype or another operator"
        )
    if op.builtin in ("min", "max") and is_complex(value_dtype):
        raise ScanTypeError(
            f"{f}: {name} compares, but {values} are {value_dtype}, and complex numbers have "
            "no order; scan their magnitudes (abs) as float values, or pass "
            f"{what}=<function of (a, b)> that picks one by a rule of yours"
        )


def spelled(dtype: np.dtype) -> str:
    """How a kernel spells a numeric dtype: ``np.float32``, or ``ml_dtypes.bfloat16``."""
    return "ml_dtypes.bfloat16" if is_bfloat16(dtype) else f"np.{dtype.name}"


def _check_tuple(function: str, what: str, fact: TupleFact, value_dtype: np.dtype) -> None:
    """A tuple given for a record operand: one number per field."""
    if value_dtype.names is None:
        raise ScanTypeError(
            f"{function}: {what} is a tuple but values are {value_dtype}; pass a number"
        )
    fields = statefn.record_fields(value_dtype)
    if len(fact.items) != len(fields) or any(t.kind not in "iuf" for t in fact.items):
        got = ", ".join(t.name for t in fact.items)
        raise ScanTypeError(
            f"{function}: {what} is a tuple of ({got}) but values are "
            f"{statefn.dtype_name(value_dtype)}; pass a record of that dtype or a tuple of "
            f"{len(fields)} numbers, one per field in order"
        )


def check_record_operand(function: str, what: str, fact: Operand, value_dtype: np.dtype) -> None:
    """Refuse an operand (``initial_value=``, ``oob_default=``) that cannot be a value."""
    _record_operand(function, what, fact, value_dtype)


def _record_operand(function: str, what: str, fact: Operand, value_dtype: np.dtype) -> None:
    """Check a scalar operand (``initial_value=``, ``oob_default=``) against the values."""
    if isinstance(fact, TupleFact):
        _check_tuple(function, what, fact, value_dtype)
        return
    check_value_dtype(function, what, fact.dtype)
    _same_record(function, what, fact.dtype, value_dtype)
    if is_complex(fact.dtype) and value_dtype.names is None and not is_complex(value_dtype):
        raise ScanTypeError(
            f"{function}: {what} has dtype {fact.dtype} but the values are {value_dtype}: "
            "converting it would drop its imaginary part; pass a real number (its .real), "
            "or use complex values"
        )
    if isinstance(fact, ScalarFact) and fact.value is not None:
        check_operand_range(function, what, fact.value, fact.dtype, value_dtype)


def check_operand_range(
    function: str, what: str, value: object, dtype: np.dtype, value_dtype: np.dtype
) -> None:
    """Refuse a finite number (of `dtype`) that half-precision values cannot hold.

    A float16 or bfloat16 operand outside the dtype's finite range would
    silently become infinite; infinities and NaN themselves are kept.

    Raises
    ------
    ScanTypeError
        With the dtype's largest finite value and the fix.
    """
    if not is_half(value_dtype) or isinstance(value, bool | complex):
        return
    if not isinstance(value, int | float | np.integer | np.floating):
        return
    number = float(value)
    largest = 65504.0 if value_dtype == np.dtype(np.float16) else 3.3895313892515355e38
    # the values that round to the largest finite one (half an ulp above it rounds up)
    limit = 65520.0 if value_dtype == np.dtype(np.float16) else 3.3961775292304019e38
    if np.isfinite(number) and abs(number) >= limit:
        raise ScanTypeError(
            f"{function}: {what} is {value!r} ({dtype}), outside the range of {value_dtype} "
            f"values (largest finite value {largest:g}): it would become inf; pass a number "
            f"within +-{largest:g} (or inf, -inf), or use float32 items (block.load widens "
            f"{value_dtype} arrays into them exactly)"
        )


def _same_record(function: str, what: str, dtype: np.dtype, value_dtype: np.dtype) -> None:
    """Refuse an operand whose dtype differs from the record value dtype."""
    if (dtype.names is not None or value_dtype.names is not None) and (
        statefn.dtype_key(dtype) != statefn.dtype_key(value_dtype)
    ):
        raise ScanTypeError(
            f"{function}: {what} has dtype {statefn.dtype_name(dtype)} but values have "
            f"{statefn.dtype_name(value_dtype)}; a record operand must have exactly the "
            "values' record dtype"
        )


def _local_array_hint(dtype: np.dtype) -> str:
    if dtype.names is not None:
        return f"cuda.local.array(1, {statefn.dtype_name(dtype)} dtype)"
    return f"cuda.local.array(1, {spelled(dtype)})"


def tile_size(items_per_thread: object, threads: object, launch_block: Block | None) -> int:
    """``block.tile_size``: the block's threads times the items per thread.

    `items_per_thread` is the length of the items array when it is a
    ``cuda.local.array`` of literal length (or a literal int), else None;
    the block shape comes from ``threads=`` and/or the launch as for every
    call (:func:`resolve_block`).

    Raises
    ------
    PlanError
        When the items per thread or the block shape is not known.
    """
    if not isinstance(items_per_thread, int | np.integer) or isinstance(items_per_thread, bool):
        raise PlanError(
            "tile_size: cannot tell how many items each thread holds: items is not a "
            "cuda.local.array of literal length in this kernel, nor a literal int; pass the "
            "items array of the tile's block.load, or the items per thread: block.tile_size(8)"
        )
    if items_per_thread < 1:
        raise PlanError(f"tile_size: items per thread must be at least 1 (got {items_per_thread})")
    block = resolve_block("tile_size", threads, launch_block)
    return block[0] * block[1] * block[2] * int(items_per_thread)


def items_per_thread_of(function: str, values: Operand, items_per_thread: int | None) -> int:
    if isinstance(values, ZipFact):
        raise ScanTypeError(
            f"{function}: values is a tuple of arrays; only scan.block.load and "
            "scan.block.store take one (zipped tile I/O): load the fields into a local array "
            "of records and pass that"
        )
    if isinstance(values, TupleFact):
        raise ScanTypeError(
            f"{function}: values is a tuple; scan a record (an item of a record array, such "
            "as items[0]) or a local array of records, with a scan_op= that returns tuples"
        )
    if isinstance(values, ScalarFact):
        if items_per_thread not in (None, 1):
            raise PlanError(
                f"{function}: items_per_thread={items_per_thread} was given for a scalar value; "
                "pass a local array of that length instead"
            )
        return 1
    if values.ndim != 1:
        raise ScanTypeError(
            f"{function}: values must be a scalar or a 1-D local array (got a {values.ndim}-D "
            "array)"
        )
    if (
        values.length is not None
        and items_per_thread is not None
        and values.length != items_per_thread
    ):
        raise PlanError(
            f"{function}: items_per_thread={items_per_thread} but the values array has "
            f"length {values.length}; drop items_per_thread= or make them agree"
        )
    n = values.length if values.length is not None else items_per_thread
    if n is None:
        raise PlanError(
            f"{function}: cannot tell how many items each thread holds: values is not a "
            "cuda.local.array of literal length in this kernel; pass items_per_thread=<literal>"
        )
    if n < 1:
        raise PlanError(f"{function}: items per thread must be at least 1 (got {n})")
    return n


def temp_mode(function: str, temp_storage: ArrayFact | None) -> TempMode:
    if temp_storage is None:
        return "implicit"
    if temp_storage.dtype != np.dtype(np.uint8) or temp_storage.ndim != 1:
        raise ScanTypeError(
            f"{function}: temp_storage must be a 1-D uint8 shared array (got {temp_storage.ndim}-D "
            f"{temp_storage.dtype}); allocate it with cuda.shared.array(size, np.uint8, "
            "alignment=...) using scan.block.temp_storage(...)"
        )
    return "caller"


def _check_warp(function: str, algorithm: str, block: Block) -> None:
    threads = block[0] * block[1] * block[2]
    if algorithm in WARP_ALGORITHMS and threads % 32 != 0:
        raise PlanError(
            f"{function}: algorithm={algorithm!r} needs a block size that is a multiple of 32 "
            f"(got {threads} threads from block {block}); CUB would silently fall back to another "
            "algorithm, so choose one explicitly (e.g. 'raking' or 'transpose')"
        )


# ---------------------------------------------------------------------------
# scans


_OLD_KEYWORDS = {
    "block_prefix_callback_op": "prefix_op= (and prefix_state= for stateful callbacks)",
}


#: The block scans' options that warp scans do not take.
_BLOCK_ONLY = ("algorithm", "temp_storage", "auto_sync", "reverse", "block_aggregate", "tile")


def check_unknown_keywords(
    function: str, keywords: Mapping[str, object], allowed: set[str]
) -> None:
    """Refuse unknown or retired keyword arguments with a pointer to the right one."""
    for name in keywords:
        if name in _OLD_KEYWORDS:
            raise PlanError(
                f"{function}: the keyword {name}= is not supported; use {_OLD_KEYWORDS[name]}"
            )
        if name not in allowed:
            why = ""
            if name == "block_aggregate" and function.startswith("warp."):
                why = " (a warp scan writes its warp's aggregate to warp_aggregate=)"
            elif name == "field" and function.startswith("warp."):
                why = (
                    " (zipped tile I/O is scan.block.load's and scan.block.store's; a warp "
                    "store writes whole items)"
                )
            elif name == "field" and function.endswith("load"):
                why = (
                    " (field= picks the fields a store writes; a load from a tuple of arrays "
                    "fills every field of the record items)"
                )
            elif name in _BLOCK_ONLY and function.startswith("warp."):
                why = (
                    f" ({name}= is an option of scan.block's scans; warp scans shuffle within "
                    "each logical warp: no algorithm, temp storage, barrier, reverse or tile)"
                )
            raise PlanError(
                f"{function}: unexpected keyword argument {name}={why}; accepted keywords are "
                f"{', '.join(sorted(allowed))}"
            )


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
        _record_operand(f, "initial_value", initial_value, value_dtype)
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
    _check_warp(f, algorithm, block)
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


# ---------------------------------------------------------------------------
# tile I/O


def default_io(
    block: Block, items_per_thread: int, dtype: np.dtype[Any], *, converting: bool = False
) -> tuple[str, Literal["warp_transpose"] | None]:
    """The load/store algorithm used when none is named, and its :attr:`TileIOPlan.unaligned`.

    See :data:`DEFAULT_IO`. `dtype` is what the accesses move: the array's
    items where a load or store converts them (`converting`: a float16 or
    bfloat16 array, wider items), where whole 16-byte words of a thread's
    items take ``vectorize`` (:data:`DEFAULT_CONVERTING_IO`).
    """
    threads = block[0] * block[1] * block[2]
    if threads % 32:
        return "transpose", None
    if converting and (items_per_thread * _size_class(dtype)) % 16 == 0:
        name = DEFAULT_CONVERTING_IO
    else:
        name = DEFAULT_IO.get((threads, items_per_thread, _size_class(dtype)), "warp_transpose")
    if name == VECTORIZE_ELSE_WARP_TRANSPOSE:
        return "vectorize", "warp_transpose"
    return name, None


def default_io_algorithm(
    block: Block, items_per_thread: int, dtype: np.dtype[Any], *, converting: bool = False
) -> str:
    """The load/store algorithm used when none is named (see :data:`DEFAULT_IO`).

    ``vectorize`` also where it falls back to ``warp_transpose`` on tiles that
    are not 16-byte aligned (:func:`default_io`).
    """
    return default_io(block, items_per_thread, dtype, converting=converting)[0]


def default_scan_algorithm(
    block: Block, items_per_thread: int, dtype: np.dtype[Any], *, reverse: bool = False
) -> str:
    """The scan algorithm used when none is named (:data:`DEFAULT_SCAN`, and
    :data:`DEFAULT_REVERSE_SCAN` first for reverse scans)."""
    threads = block[0] * block[1] * block[2]
    if threads % 32:
        return "raking"
    key = (threads, items_per_thread, _size_class(dtype))
    if reverse and key in DEFAULT_REVERSE_SCAN:
        return DEFAULT_REVERSE_SCAN[key]
    return DEFAULT_SCAN.get(key, "raking")


def _size_class(dtype: np.dtype[Any]) -> int:
    """Item size in bytes, the dtype fact the defaults depend on (records: their size)."""
    return int(np.dtype(dtype).itemsize)


#: A :data:`DEFAULT_IO` entry: ``vectorize`` where a tile is 16-byte aligned and
#: ``warp_transpose`` where it is not (a plan with ``unaligned="warp_transpose"``).
VECTORIZE_ELSE_WARP_TRANSPOSE = "vectorize_else_warp_transpose"

#: Tile I/O algorithm when none is named, by (threads, items per thread, item
#: bytes); anything else gets ``warp_transpose`` (``transpose`` when the block
#: is not whole warps). From the fastest configuration of a tile-loop row scan
#: with a stateful prefix callback, measured on an H200 against every CUB C++
#: configuration (docs/performance.md, "Defaults"). Vector loads win at 128 x 4
#: and 256 x 4 with 4-byte items. At 128 x 4 CUB's own fallback (direct
#: accesses on tiles that are not 16-byte aligned) costs little; at 256 x 4 it
#: made ``vectorize`` 1.8-5.3% slower than ``warp_transpose`` on unaligned rows,
#: while on aligned rows ``warp_transpose`` was 0.9-1.9% behind, so there the
#: unaligned tiles take ``warp_transpose``. At 8 and 16 items ``warp_transpose``
#: is within 2% of vector loads on aligned rows, and direct accesses would cost
#: 2.8-4.3 times on unaligned ones.
DEFAULT_IO: dict[tuple[int, int, int], str] = {
    (128, 4, 4): "vectorize",
    (256, 4, 4): VECTORIZE_ELSE_WARP_TRANSPOSE,
}

#: Tile I/O algorithm when none is named for a converting load or store (a
#: float16 or bfloat16 array, float32 or float64 items) whose thread's array
#: items are whole 16-byte words (8 or 16 half-precision items): the words
#: moved whole on aligned tiles, ``warp_transpose`` on others. Measured on an
#: H200 in bench/bf16_rowscan.py (docs/results/h200_2026-12-06_bf16_rowscan.md):
#: 0.548-0.664 ms against 0.687-0.851 ms for ``warp_transpose`` at 128 x 8,
#: 256 x 8, 256 x 16 and 512 x 8 on 8192 x 65536; 0.516-0.693 against 0.680-0.794
#: at 262144 x 2048 but at 512 x 8 (1.175-1.183 against 1.192-1.222).
DEFAULT_CONVERTING_IO = VECTORIZE_ELSE_WARP_TRANSPOSE

#: Scan algorithm when none is named, by (threads, items per thread, item
#: bytes); anything else gets ``raking``. Measured as :data:`DEFAULT_IO`:
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


def _items_array(f: str, items: Operand) -> ArrayFact:
    if not isinstance(items, ArrayFact):
        raise ScanTypeError(
            f"{f}: items must be a 1-D local array (got a scalar); allocate "
            "cuda.local.array(items_per_thread, dtype)"
        )
    return items


def _check_row(f: str, name: str, array: ArrayFact) -> None:
    """A tile's array: 1-D and C-contiguous (`name` says which, in messages)."""
    if array.ndim != 1:
        raise ScanTypeError(
            f"{f}: {name} must be a 1-D array (got {array.ndim}-D); index a row first, "
            f"e.g. {name.split()[0]}[row]"
        )
    if not array.contiguous:
        raise ScanTypeError(
            f"{f}: {name} must be C-contiguous (got a strided view); pass a contiguous row"
        )


def _conversion_error(f: str, what: str, array: np.dtype, items: np.dtype) -> ScanTypeError:
    """The refusal of a load or store between `array` (named `what`) and `items` of another dtype.

    A load widens float16 and bfloat16 arrays into float32 or float64 items,
    and a store rounds such items back; nothing else converts.
    """
    load = f.endswith("load")
    if not (is_half(array) or is_half(items)):
        return ScanTypeError(
            f"{f}: items have dtype {items} but {what} has {array}; use the same dtype for both"
        )
    if load:
        rule = (
            "a load converts only float16 and bfloat16 arrays into float32 or float64 items "
            "(widening them exactly)"
        )
    else:
        rule = (
            "a store converts only float32 or float64 items into float16 and bfloat16 arrays "
            "(rounding to nearest, ties to even)"
        )
    fix = "float32 items" if is_half(array) else f"items of {what}'s dtype {array}"
    return ScanTypeError(
        f"{f}: {what} has dtype {statefn.dtype_name(array)} but items have dtype "
        f"{statefn.dtype_name(items)}; {rule}: use {fix}, or convert the data outside the kernel"
    )


def check_tile_operands(
    f: str, array: ArrayFact, items: Operand, items_per_thread: int | None
) -> tuple[np.dtype, int]:
    """The value dtype (the items') and items per thread of a load or store.

    `f` ends with the call's direction. The array has the items' dtype, or
    is a float16 or bfloat16 array of float32 or float64 items
    (:func:`scan._vocab.widens`).
    """
    name = "src" if f.endswith("load") else "dst"
    items = _items_array(f, items)
    ipt = items_per_thread_of(f, items, items_per_thread)
    _check_row(f, name, array)
    if widens(array.dtype, items.dtype):
        return check_value_dtype(f, "items", items.dtype), ipt
    value_dtype = check_value_dtype(f, name, array.dtype)
    _same_record(f, "items", items.dtype, value_dtype)
    if items.dtype != array.dtype:
        raise _conversion_error(f, name, array.dtype, items.dtype)
    return value_dtype, ipt


def _field_names(f: str, field: object, names: tuple[str, ...]) -> tuple[str, ...]:
    """``field=`` of a store: one field name or a tuple of them, each a field of the items."""
    chosen = (field,) if isinstance(field, str) else field
    if not isinstance(chosen, tuple) or not chosen or not all(isinstance(n, str) for n in chosen):
        raise PlanError(
            f"{f}: field= must be a field name or a tuple of field names written in the "
            f"kernel (got {field!r}); e.g. field='b' or field=('a', 'b')"
        )
    for i, name in enumerate(chosen):
        if name not in names:
            raise ScanTypeError(
                f"{f}: items have no field {name!r}; their fields are {', '.join(map(repr, names))}"
            )
        if name in chosen[:i]:
            raise PlanError(f"{f}: field= names {name!r} twice; name each field once")
    return tuple(chosen)


def check_zipped_operands(
    f: str, arrays: ArrayFact | ZipFact, items: Operand, items_per_thread: int | None, field: object
) -> tuple[np.dtype, int, tuple[str, ...]]:
    """Zipped tile I/O: the record dtype, items per thread and fields of a load or store.

    `arrays` is a tuple of arrays, or one array when ``field=`` names one
    field. Each array has its field's dtype, or is a float16 or bfloat16
    array of a float32 or float64 field (:func:`scan._vocab.widens`).
    """
    load = f.endswith("load")
    name = "src" if load else "dst"
    items = _items_array(f, items)
    ipt = items_per_thread_of(f, items, items_per_thread)
    if items.dtype.names is None:
        if field is not None:
            raise ScanTypeError(
                f"{f}: field= picks fields of record items, but items have dtype {items.dtype}; "
                "drop field= (numeric items are stored whole)"
            )
        raise ScanTypeError(
            f"{f}: {name} is a tuple of arrays (zipped tile I/O) but items have dtype "
            f"{items.dtype}; items must be a local array of a record dtype with one field per "
            "array, e.g. cuda.local.array(n, np.dtype([('a', np.float32), ('b', np.float32)], "
            "align=True))"
        )
    record = check_value_dtype(f, "items", items.dtype)
    names = tuple(record.names or ())
    chosen = names if field is None else _field_names(f, field, names)
    given = arrays.arrays if isinstance(arrays, ZipFact) else (arrays,)
    if len(given) != len(chosen):
        which = "field= names" if field is not None else "the items' record dtype has"
        raise ScanTypeError(
            f"{f}: {name} holds {len(given)} array(s) but {which} {len(chosen)} field(s) "
            f"({', '.join(chosen)}); pass a tuple of one 1-D array per field, in that order"
        )
    for array, field_name in zip(given, chosen, strict=True):
        _check_row(f, f"{name} array of field {field_name!r}", array)
        want = record.fields[field_name][0]  # type: ignore[index]
        if array.dtype != want and (is_half(array.dtype) or is_half(want)):
            if not widens(array.dtype, want):
                raise _conversion_error(
                    f, f"the {name} array of field {field_name!r}", array.dtype, want
                )
        elif array.dtype != want:
            raise ScanTypeError(
                f"{f}: the {name} array of field {field_name!r} has dtype {array.dtype} but "
                f"the field is {want}; pass an array of the field's dtype (convert it with "
                f".astype({spelled(want)}) outside the kernel)"
            )
    return record, ipt, chosen


def plan_tile_io(
    *,
    function: Literal["load", "store"],
    array: ArrayFact | ZipFact,
    items: Operand,
    algorithm: str | None,
    oob_default: ScalarFact | TupleFact | None,
    temp_storage: ArrayFact | None,
    block: Block,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
    field: object = None,
) -> TileIOPlan:
    """Check one ``load``/``store`` call and build its plan.

    A tuple of arrays (or ``field=`` on a store) is zipped tile I/O: record
    items, one array per field (:func:`check_zipped_operands`).
    """
    f = function
    fields = None
    array_dtypes: tuple[np.dtype, ...] | None
    if isinstance(array, ZipFact) or field is not None:
        value_dtype, ipt, fields = check_zipped_operands(f, array, items, items_per_thread, field)
        if temp_storage is not None:
            raise PlanError(
                f"{f}: zipped tile I/O (a tuple of arrays, or field=) owns its temp storage; "
                "drop temp_storage="
            )
        array_dtypes = tuple(
            a.dtype for a in (array.arrays if isinstance(array, ZipFact) else (array,))
        )
        wanted = tuple(value_dtype.fields[n][0] for n in fields)  # type: ignore[index]
        if array_dtypes == wanted:
            array_dtypes = None
        # the default algorithm follows what each array moves: its widest items
        sized = max(array_dtypes or wanted, key=lambda d: d.itemsize)
    else:
        value_dtype, ipt = check_tile_operands(f, array, items, items_per_thread)
        array_dtypes = (array.dtype,) if widens(array.dtype, value_dtype) else None
        # vector accesses are of the array's items: a half-precision array's when it converts
        sized = value_dtype if array_dtypes is None else array.dtype
    unaligned = None
    if algorithm is None:
        # zipped I/O keeps the table: its fields' words are not moved whole
        converting = fields is None and array_dtypes is not None
        algorithm, unaligned = default_io(block, ipt, sized, converting=converting)
    if algorithm not in IO_ALGORITHMS:
        raise PlanError(
            f"{f}: algorithm must be one of {', '.join(map(repr, IO_ALGORITHMS))} "
            f"(got {algorithm!r})"
        )
    if oob_default is not None and function == "store":
        raise PlanError(f"{f}: oob_default= only applies to load")
    if oob_default is not None:
        _record_operand(f, "oob_default", oob_default, value_dtype)
    _check_warp(f, algorithm, block)
    return TileIOPlan(
        direction=function,
        value_dtype=value_dtype,
        block=block,
        items_per_thread=ipt,
        algorithm=algorithm,
        has_oob_default=oob_default is not None,
        temp_storage=temp_mode(f, temp_storage),
        auto_sync=auto_sync,
        unaligned=unaligned,
        fields=fields,
        array_dtypes=array_dtypes,
    )


# ---------------------------------------------------------------------------
# facts of the roles every family shares


def _describe(fact: Operand) -> str:
    if isinstance(fact, ArrayFact):
        return f"a {fact.ndim}-D {fact.dtype} array"
    return str(fact.dtype)


def as_array(function: str, name: str, fact: Operand | None) -> ArrayFact | None:
    """`fact` when it is an array (or None); a scalar or a tuple of arrays is refused."""
    if isinstance(fact, ZipFact):
        raise ScanTypeError(
            f"{function}: {name} is a tuple of arrays; only scan.block.load and "
            "scan.block.store take one (zipped tile I/O, src= and dst=); pass one array"
        )
    if fact is not None and not isinstance(fact, ArrayFact):
        raise ScanTypeError(
            f"{function}: {name} must be an array (got a scalar of type {fact.dtype})"
        )
    return fact


def as_scalar(function: str, name: str, fact: Operand | None) -> ScalarFact | TupleFact | None:
    """`fact` when it is a scalar or a tuple (or None); an array is refused."""
    if isinstance(fact, ArrayFact | ZipFact):
        raise ScanTypeError(f"{function}: {name} must be a scalar")
    return fact


def check_index(function: str, name: str, fact: Operand | None) -> None:
    """Refuse an index argument that is not a runtime integer."""
    if fact is not None and (isinstance(fact, ArrayFact) or fact.dtype.kind not in "iu"):
        raise ScanTypeError(f"{function}: {name} must be an integer (got {_describe(fact)})")
