# SPDX-License-Identifier: Apache-2.0
"""Tile I/O's planner: :class:`TileIOPlan` and :func:`plan_tile_io`, every refusal of a tile move.

Also the default algorithms (:data:`DEFAULT_IO`, :data:`DEFAULT_CONVERTING_IO`)
and the checks of a tile's arrays and items that warp I/O shares
(:func:`check_tile_operands`). Built on :mod:`scan._plan`; imports neither
numba nor any CUDA package.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
import numpy as np

import statefn

from ..._errors import PlanError, ScanTypeError
from ..._plan import (
    ArrayFact,
    Block,
    BlockPlan,
    Operand,
    ScalarFact,
    TupleFact,
    ZipFact,
    check_record_operand,
    check_same_record,
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
from ..._vocab import IO_ALGORITHMS, NO_SHARED_MEMORY_IO, TempMode, is_half, widens

__all__ = [
    "DEFAULT_CONVERTING_IO",
    "DEFAULT_IO",
    "VECTORIZE_ELSE_WARP_TRANSPOSE",
    "TileIOPlan",
    "check_tile_operands",
    "check_zipped_operands",
    "default_io",
    "default_io_algorithm",
    "plan_tile_io",
]


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


# ---------------------------------------------------------------------------
# default algorithms


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
    if converting and (items_per_thread * size_class(dtype)) % 16 == 0:
        name = DEFAULT_CONVERTING_IO
    else:
        name = DEFAULT_IO.get((threads, items_per_thread, size_class(dtype)), "warp_transpose")
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


# ---------------------------------------------------------------------------
# planning


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
    check_same_record(f, "items", items.dtype, value_dtype)
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
        # a converting call moves whole 16-byte words where a thread's items are whole
        # words; zipped, every field's array must be (each field moves as its own call)
        converting = array_dtypes is not None and all(
            (ipt * d.itemsize) % 16 == 0 for d in array_dtypes
        )
        algorithm, unaligned = default_io(block, ipt, sized, converting=converting)
    if algorithm not in IO_ALGORITHMS:
        raise PlanError(
            f"{f}: algorithm must be one of {', '.join(map(repr, IO_ALGORITHMS))} "
            f"(got {algorithm!r})"
        )
    if oob_default is not None and function == "store":
        raise PlanError(f"{f}: oob_default= only applies to load")
    if oob_default is not None:
        check_record_operand(f, "oob_default", oob_default, value_dtype)
    check_warp_algorithm(f, algorithm, block)
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
