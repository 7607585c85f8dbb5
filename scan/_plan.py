# SPDX-License-Identifier: Apache-2.0
"""Plans: the immutable specialisation of one block-primitive call, what every family shares.

A plan is built from plain facts about a call (dtypes, static lengths, literal
options, the block shape) and holds everything the generated C++ depends on.
This module holds what every family's planner uses: the facts, the plan key
(:func:`digest`, :func:`plan_fields`), :class:`BlockPlan`, the block shape and
the checks of operands that several families take. Each family's own plan
class and planner live in its folder under :mod:`scan._primitives` (block
scans: ``block_scan/_plan.py``; tile I/O: ``tile_io/_plan.py``); this module
names none of them. Every rejection the library makes lives in the planners,
so the compiled path and the simulator refuse exactly the same calls with
exactly the same words. This module imports neither numba nor any CUDA package.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias

import attrs
import numpy as np

import statefn

from ._errors import PlanError, ScanTypeError
from ._lookback import Lookback
from ._vocab import (
    BITWISE_OPERATORS,
    VALUE_DTYPES,
    WARP_ALGORITHMS,
    TempMode,
    is_bfloat16,
    is_complex,
    is_half,
    is_value_dtype,
)

__all__ = [
    "ArrayFact",
    "Block",
    "BlockPlan",
    "Memory",
    "Operand",
    "ScalarFact",
    "TupleFact",
    "ZipFact",
    "as_array",
    "as_scalar",
    "check_index",
    "check_launch_bounds",
    "check_operand_range",
    "check_operator",
    "check_record_operand",
    "check_same_record",
    "check_unknown_keywords",
    "check_value_dtype",
    "check_warp_algorithm",
    "digest",
    "items_per_thread_of",
    "plan_fields",
    "provider_symbol",
    "resolve_block",
    "size_class",
    "spelled",
    "temp_mode",
    "tile_size",
]

_PLAN_SCHEMA_VERSION = 1

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
    """Refuse an operand (``initial_value=``, ``oob_default=``) that cannot be a value.

    A scalar or a tuple (a record's fields in order), checked against the values.
    """
    if isinstance(fact, TupleFact):
        _check_tuple(function, what, fact, value_dtype)
        return
    check_value_dtype(function, what, fact.dtype)
    check_same_record(function, what, fact.dtype, value_dtype)
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


def check_same_record(function: str, what: str, dtype: np.dtype, value_dtype: np.dtype) -> None:
    """Refuse an operand whose dtype differs from the record value dtype."""
    if (dtype.names is not None or value_dtype.names is not None) and (
        statefn.dtype_key(dtype) != statefn.dtype_key(value_dtype)
    ):
        raise ScanTypeError(
            f"{function}: {what} has dtype {statefn.dtype_name(dtype)} but values have "
            f"{statefn.dtype_name(value_dtype)}; a record operand must have exactly the "
            "values' record dtype"
        )


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


def check_warp_algorithm(function: str, algorithm: str, block: Block) -> None:
    """Refuse an algorithm of whole warps (:data:`scan._vocab.WARP_ALGORITHMS`) on other blocks."""
    threads = block[0] * block[1] * block[2]
    if algorithm in WARP_ALGORITHMS and threads % 32 != 0:
        raise PlanError(
            f"{function}: algorithm={algorithm!r} needs a block size that is a multiple of 32 "
            f"(got {threads} threads from block {block}); CUB would silently fall back to another "
            "algorithm, so choose one explicitly (e.g. 'raking' or 'transpose')"
        )


def size_class(dtype: np.dtype[Any]) -> int:
    """Item size in bytes, the dtype fact the default algorithms depend on (records: their size)."""
    return int(np.dtype(dtype).itemsize)


# ---------------------------------------------------------------------------
# keywords


#: Retired keywords (CUB's names) that no call takes, each with what replaces it.
_OLD_KEYWORDS = {
    "block_prefix_callback_op": "prefix_op= (and prefix_state= for stateful callbacks)",
}


def check_unknown_keywords(
    function: str,
    keywords: Mapping[str, object],
    allowed: set[str],
    hint: Callable[[str, str], str] | None = None,
) -> None:
    """Refuse unknown or retired keyword arguments with a pointer to the right one.

    ``hint(function, name)`` is the call's family's
    :attr:`~scan._spec.Primitive.keyword_hint`: why the call takes no `name`
    that other calls take (" (...)"), or "".
    """
    for name in keywords:
        if name in _OLD_KEYWORDS:
            raise PlanError(
                f"{function}: the keyword {name}= is not supported; use {_OLD_KEYWORDS[name]}"
            )
        if name not in allowed:
            why = "" if hint is None else hint(function, name)
            raise PlanError(
                f"{function}: unexpected keyword argument {name}={why}; accepted keywords are "
                f"{', '.join(sorted(allowed))}"
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
