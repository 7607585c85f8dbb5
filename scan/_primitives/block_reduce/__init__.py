# SPDX-License-Identifier: Apache-2.0
"""Block reduce (``cub::BlockReduce``): ``reduce`` and ``sum``.

Every thread of a block passes its item (a scalar) or its items (a local
array, blocked arrangement: thread ``t`` holds tile items ``t * n`` to
``t * n + n - 1``); the call returns the reduction of the block's tile to every thread (one
barrier more than CUB's, whose result is defined in thread 0 only: that is
``broadcast=False``). ``valid=`` reduces only the tile's first ``valid``
items (a partial tile): CUB's ``Reduce(partial, op, num_valid)`` over the
threads holding them, after each thread reduced its own valid items.
``dtype=`` accumulates in another dtype than the items' (as ``numpy.sum``'s):
each item is converted to it first.

The family's spec: calls, plan, checks, operand ABI, renderer and simulator
semantics, all in this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs
import numpy as np

import statefn

from ..._codegen import (
    CallbackDecl,
    complex_decl,
    cub_plus_dtype,
    operator_functor,
    render_unit,
    value_decl,
)
from ..._errors import PlanError, ScanTypeError
from ..._plan import (
    ArrayFact,
    Block,
    BlockPlan,
    ScalarFact,
    TupleFact,
    as_array,
    check_index,
    check_operator,
    check_value_dtype,
    digest,
    items_per_thread_of,
    plan_fields,
    provider_symbol,
    temp_mode,
)
from ..._spec import (
    THREAD_ZERO_ONLY,
    AbiOperand,
    BlockInputs,
    EntryPoint,
    Param,
    Primitive,
    c_parameters,
)
from ..._vocab import VALUE_DTYPES, TempMode, c_type, is_complex, is_half
from ..block_scan import COMMON
from ._stubs import DECLARATIONS as STUB_DECLARATIONS
from ._stubs import FUNCTIONS as STUBS

__all__ = ["ALGORITHMS", "CALLS", "OPERANDS", "SPEC", "ReducePlan", "render_reduce"]

#: ``algorithm=`` of ``reduce``/``sum``, and CUB's ``BlockReduceAlgorithm`` for each.
#: ``raking_commutative_only`` needs a commutative operator (CUB's condition).
ALGORITHMS: Mapping[str, str] = MappingProxyType(
    {
        "raking": "BLOCK_REDUCE_RAKING",
        "raking_commutative_only": "BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY",
        "warp_reductions": "BLOCK_REDUCE_WARP_REDUCTIONS",
    }
)
#: CUB's default algorithm.
DEFAULT_ALGORITHM = "warp_reductions"

_REQUIRED = inspect.Parameter.empty
_OPTIONS = (
    Param("valid", "index", None),
    Param("broadcast", "literal", True),
    Param("dtype", "literal", None),
    Param("algorithm", "literal", None),
    *COMMON,
)
CALLS = (
    EntryPoint(
        "reduce",
        "reduce",
        (
            Param("items", "operand", keyword_only=False),
            Param("op", "callable", _REQUIRED, keyword_only=False, callback="scan_op"),
            *_OPTIONS,
        ),
    ),
    EntryPoint(
        "sum", "reduce", (Param("items", "operand", keyword_only=False), *_OPTIONS), sum=True
    ),
)


@attrs.frozen
class ReducePlan(BlockPlan):
    """Everything a block reduce's generated code depends on.

    Attributes
    ----------
    function : {"reduce", "sum"}
        The public entry point that was called (for messages).
    value_dtype : numpy.dtype
        The dtype the reduction accumulates in and returns: the items' dtype,
        or ``dtype=``'s.
    block : tuple of int
    items_per_thread : int
        Items each thread contributes (1 for a scalar).
    scalar : bool
        Whether each thread passes one scalar.
    reduce_op : statefn.ScanOperator
    has_valid : bool
        Whether ``valid=`` bounds the reduced items (a runtime count).
    broadcast : bool
        Whether every thread receives the result (else thread 0 only).
    algorithm : str
        One of :data:`ALGORITHMS`.
    temp_storage : {"implicit", "caller"}
    auto_sync : bool
    items_dtype : numpy.dtype or None
        The items' dtype when ``dtype=`` names another one to accumulate in
        (each item is converted to :attr:`value_dtype` first); None otherwise.
    """

    function: str
    value_dtype: np.dtype
    block: Block
    items_per_thread: int
    scalar: bool
    reduce_op: statefn.ScanOperator
    has_valid: bool
    broadcast: bool
    algorithm: str
    temp_storage: TempMode
    auto_sync: bool
    items_dtype: np.dtype | None = None
    key: str = attrs.field(init=False, eq=False, repr=False)

    @key.default
    def _key(self) -> str:
        return digest("reduce", plan_fields(self))  # without function: reduce and sum share one

    @property
    def result_dtype(self) -> np.dtype | None:
        """The dtype of the call's result when it is not its items' (``dtype=``), else None."""
        return self.value_dtype if self.items_dtype is not None else None

    @property
    def symbol(self) -> str:
        """The ``extern "C"`` entry point of the provider generated for this plan."""
        return provider_symbol("reduce", self.key)

    @property
    def returns_value(self) -> bool:
        """A reduce returns its result."""
        return True


def _literal_bool(function: str, name: str, value: object, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool | np.bool_):
        raise PlanError(f"{function}: {name}= must be a literal True or False (got {value!r})")
    return bool(value)


def _accumulator(f: str, dtype: object, items: np.dtype) -> np.dtype | None:
    """``dtype=``'s dtype, when it is not the items' own (None: accumulate in the items')."""
    if dtype is None:
        return None
    try:
        acc = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError:
        acc = None
    if acc is None or acc.names is not None or acc not in VALUE_DTYPES:
        allowed = ", ".join(d.name for d in VALUE_DTYPES)
        raise ScanTypeError(
            f"{f}: dtype= must be a numeric dtype to accumulate in, one of {allowed} (got "
            f"{dtype!r}); e.g. dtype=np.int64 to sum small integers without wrapping"
        )
    if items.names is not None:
        raise ScanTypeError(
            f"{f}: dtype= converts each item to the dtype to accumulate in, but items are "
            f"records ({statefn.dtype_name(items)}); drop dtype= and make the record's fields "
            "as wide as the reduction needs"
        )
    if acc != items and not np.can_cast(items, acc, "safe"):
        wide = np.promote_types(items, acc)
        raise ScanTypeError(
            f"{f}: dtype={acc.name} cannot hold every {statefn.dtype_name(items)} item (the "
            f"conversion loses {'the imaginary part' if items.kind == 'c' else 'values'}); "
            f"dtype= widens: pass one that holds them all, e.g. dtype=np.{wide.name}"
        )
    return None if acc == items else acc


def plan_reduce(
    *,
    function: str,
    items: Any,
    op: object,
    valid: Any,
    broadcast: object,
    algorithm: object,
    temp_storage: ArrayFact | None,
    block: Block,
    items_per_thread: int | None = None,
    auto_sync: bool = True,
    dtype: object = None,
) -> ReducePlan:
    """Check one ``reduce``/``sum`` call and build its plan."""
    f = function
    if items is None:
        raise ScanTypeError(f"{f}: items is required")
    if isinstance(items, TupleFact):
        raise ScanTypeError(
            f"{f}: items is a tuple; reduce a record (an item of a record array, such as "
            "items[0]) or a local array of records, with an op= that returns tuples"
        )
    if isinstance(items, ArrayFact) and items.ndim != 1:
        raise ScanTypeError(f"{f}: items must be a scalar or a 1-D local array")
    items_dtype = check_value_dtype(f, "items", items.dtype)
    accumulator = _accumulator(f, dtype, items_dtype)
    value_dtype = items_dtype if accumulator is None else accumulator
    ipt = items_per_thread_of(f, items, items_per_thread)
    if algorithm is None:
        algorithm = DEFAULT_ALGORITHM
    if algorithm not in ALGORITHMS:
        raise PlanError(
            f"{f}: algorithm must be one of {', '.join(map(repr, ALGORITHMS))} (got {algorithm!r})"
        )
    reduce_op = statefn.normalize(op, role="scan_op")
    if reduce_op.is_builtin and value_dtype.names is not None:
        sums = "sum" if reduce_op.is_sum else f"op={reduce_op.builtin!r}"
        raise ScanTypeError(
            f"{f}: items are records ({statefn.dtype_name(value_dtype)}), and {sums} is not "
            "defined on records; use block.reduce(items, op) with an op=<function of (a, b)> "
            "returning a tuple of the fields, e.g. lambda a, b: (a[0] + b[0], max(a[1], b[1]))"
        )
    check_operator(f, "op", reduce_op, value_dtype, "items")
    check_index(f, "valid", valid)
    return ReducePlan(
        function=f,
        value_dtype=value_dtype,
        block=block,
        items_per_thread=ipt,
        scalar=isinstance(items, ScalarFact),
        reduce_op=reduce_op,
        has_valid=valid is not None,
        broadcast=_literal_bool(f, "broadcast", broadcast, True),
        algorithm=str(algorithm),
        temp_storage=temp_mode(f, temp_storage),
        auto_sync=auto_sync,
        items_dtype=None if accumulator is None else items_dtype,
    )


def _plan_call(entry: EntryPoint, facts: Mapping[str, Any], block: Block) -> ReducePlan:
    temp = as_array(entry.key, "temp_storage", facts["temp_storage"])
    return plan_reduce(
        function=entry.key,
        items=facts["items"],
        op="+" if entry.sum else facts["op"],
        valid=facts["valid"],
        broadcast=facts["broadcast"],
        algorithm=facts["algorithm"],
        temp_storage=temp,
        block=block,
        items_per_thread=facts["items_per_thread"],
        auto_sync=facts["auto_sync"],
        dtype=facts["dtype"],
    )


#: The provider's operands: temp storage (caller-owned mode), this thread's
#: items (an array's in the items' dtype, a scalar converted to the value type),
#: how many of the tile's items are valid (-1: all) and the result.
OPERANDS = (
    AbiOperand("temp", "array", param="temp_storage", when="caller_temp"),
    AbiOperand("in", "input", param="items"),
    AbiOperand("valid", "count", param="valid", absent=-1),
    AbiOperand("out", "output"),
)


# ---------------------------------------------------------------------------
# the provider


def _uses_sum(plan: ReducePlan) -> bool:
    """Whether CUB's ``Sum`` (its own ``plus``) serves the call."""
    op = plan.reduce_op
    return op.is_builtin and str(op.builtin) == "+" and cub_plus_dtype(plan.value_dtype)


def _functor(plan: ReducePlan, callback: CallbackDecl | None) -> str:
    if _uses_sum(plan):
        return ""
    return operator_functor("reduce_op_t", plan.reduce_op, callback)


def _reduce(plan: ReducePlan, operand: str, valid: str | None = None) -> str:
    """The CUB call reducing `operand` (an item or the items array)."""
    args = [operand]
    if not _uses_sum(plan):
        args.append("reduce_op_t{}")
    if valid is not None:
        args.append(valid)
    method = "Sum" if _uses_sum(plan) else "Reduce"
    return f"block_reduce_t(temp_storage).{method}({', '.join(args)})"


def _body(plan: ReducePlan) -> str:
    n = plan.items_per_thread
    full = f"result = {_reduce(plan, 'input')};"
    if not plan.has_valid:
        lines = [full]
    else:
        bx, by, bz = plan.block
        combine = "partial + input[i]" if _uses_sum(plan) else "reduce_op_t{}(partial, input[i])"
        lines = [
            f"if (valid >= {plan.tile_items}) {{",
            "  " + full,
            "} else {",
            "  // each thread reduces its valid items; CUB reduces the threads holding any",
            "  // (valid must be at least 1: an empty tile's result is undefined, as in CUB)",
            f"  const int first = cub::RowMajorTid({bx}, {by}, {bz}) * {n};",
            "  const int count = static_cast<int>(valid);",
            "  value_t partial = input[0];",
            "  #pragma unroll",
            f"  for (int i = 1; i < {n}; ++i) {{",
            f"    if (first + i < count) partial = {combine};",
            "  }",
            f"  result = {_reduce(plan, 'partial', f'(count + {n - 1}) / {n}')};",
            "}",
        ]
    if plan.broadcast:
        bx, by, bz = plan.block
        lines += [
            "// thread 0 holds the result; every thread receives it through a slot of",
            "// the provider's own (not part of the temp storage a caller sizes)",
            "__shared__ value_t broadcast_slot;",
            f"if (cub::RowMajorTid({bx}, {by}, {bz}) == 0) broadcast_slot = result;",
            "__syncthreads();",
            "result = broadcast_slot;",
        ]
    if plan.auto_sync:
        lines.append("__syncthreads(); // temp storage may be reused after this barrier")
    return "\n".join("  " + line for line in lines)


def render_reduce(
    plan: ReducePlan,
    *,
    reduce_callback: CallbackDecl | None = None,
    symbol: str | None = None,
    storage: str | None = None,
) -> str:
    """C++ source of a block reduce's provider.

    `reduce_callback` is the lowered user operator (when ``plan.reduce_op`` is
    not built in); `symbol` and `storage` as in
    :func:`scan._primitives.block_scan._unit.scan_unit`.
    """
    n = plan.items_per_thread
    bx, by, bz = plan.block
    types = (
        f"using block_reduce_t = cub::BlockReduce<value_t, {bx}, "
        f"cub::{ALGORITHMS[plan.algorithm]}, {by}, {bz}>;\n"
        "using temp_storage_t = typename block_reduce_t::TempStorage;\n"
        + _functor(plan, reduce_callback)
    )
    value = value_decl(plan.value_dtype)
    if plan.items_dtype is not None and not plan.scalar:
        # dtype=: each item converted to the accumulator first, as numpy.sum(dtype=) does
        item = c_type(plan.items_dtype)
        if is_complex(plan.items_dtype):
            value = complex_decl(plan.items_dtype) + "\n" + value
        load = (
            f"  const {item} (&items)[{n}] = *static_cast<const {item} (*)[{n}]>(in);\n"
            f"  value_t input[{n}];\n"
            "  #pragma unroll\n"
            f"  for (int i = 0; i < {n}; ++i) input[i] = "
            f"{widen(plan.items_dtype, plan.value_dtype, 'items[i]')};\n"
        )
    else:
        load = f"  value_t (&input)[{n}] = *static_cast<value_t (*)[{n}]>(in);\n"
    body = load + "  value_t& result = *static_cast<value_t*>(out);\n" + _body(plan)
    return render_unit(
        plan,
        header="block_reduce.cuh",
        callbacks=[] if reduce_callback is None else [reduce_callback],
        value=value,
        value_dtypes=() if plan.items_dtype is None else (plan.items_dtype,),
        types=types,
        symbol=symbol,
        storage=storage,
        params=c_parameters(OPERANDS),
        comment=(
            f"Reduces the block's tile ({n} items a thread) with the items at `in`, its "
            "first `valid` items when the plan has valid=. The result is written to `out` in "
            "thread 0" + (" and every other thread." if plan.broadcast else " (CUB's contract).")
        ),
        body=body,
    )


def widen(source: np.dtype[Any], target: np.dtype[Any], x: str) -> str:
    """C++ converting `x` (a `source` value) to ``value_t`` (`target`), exactly.

    ``dtype=`` takes only safe casts (NumPy's rule), so every conversion
    widens. A half-precision value goes through ``float`` (``__half`` and
    ``__nv_bfloat16`` convert to other types through it); a complex value
    converts its parts, a real one becomes the real part.
    """
    if is_half(source):
        x = f"static_cast<float>({x})"
    if is_complex(target):
        part = "float" if target.itemsize == 8 else "double"
        if is_complex(source):
            return f"value_t{{static_cast<{part}>({x}.re), static_cast<{part}>({x}.im)}}"
        return f"value_t{{static_cast<{part}>({x}), {part}(0)}}"
    return f"static_cast<value_t>({x})"


def _render(
    plan: ReducePlan, callbacks: Sequence[CallbackDecl], symbol: str | None, storage: str | None
) -> str:
    return render_reduce(
        plan, reduce_callback=callbacks[0] if callbacks else None, symbol=symbol, storage=storage
    )


def _callbacks(plan: ReducePlan) -> list[Any]:
    return [] if plan.reduce_op.is_builtin else [plan.reduce_op]


def _shares_storage(plan: ReducePlan) -> bool:
    return plan.temp_storage == "implicit" and plan.auto_sync


def _describe(plan: ReducePlan) -> str:
    return plan.function + (" broadcast" if plan.broadcast else "")


def _layout_operator(a: Any, b: Any) -> Any:
    """The operator of record layout queries (declared, never compiled)."""
    return a


def _layout_plan(
    primitive: str, dtype: np.dtype[Any], block: Block, items_per_thread: int, algorithm: str | None
) -> ReducePlan:
    record = np.dtype(dtype).names is not None
    return plan_reduce(
        function=f"temp_storage({primitive!r})",
        items=ArrayFact(dtype=dtype, ndim=1, length=items_per_thread),
        op=_layout_operator if record else "+",
        valid=None,
        broadcast=False,  # the broadcast slot is the call's own, not part of the temp storage
        algorithm=algorithm,
        temp_storage=ArrayFact(dtype=np.uint8, ndim=1),
        block=block,
    )


# ---------------------------------------------------------------------------
# the simulator's semantics


def simulate(block: BlockInputs) -> list[Any]:
    """Each thread's result: the tile's reduction, in every thread (thread 0 only without
    ``broadcast``).

    The valid items are combined in tile order (thread by thread, each
    thread's items in order), exact for integers and for every associative
    operator; CUB combines them in a tree whose shape depends on the
    algorithm, so floating-point sums may round differently. With
    ``broadcast=False`` the other threads receive
    :data:`~scan._spec.THREAD_ZERO_ONLY` (on the GPU: CUB's partial results,
    which may look like a result but are not), which the simulator gives them
    as a value that cannot pass for one.
    """
    plan: ReducePlan = block.plan
    combine: Callable[[Any, Any], Any] = block.combiner(plan.reduce_op)
    threads = plan.threads
    n = plan.items_per_thread
    count = plan.tile_items
    if plan.has_valid:
        valid = block.index(0, "valid")
        if valid < 1:
            raise ValueError(
                f"{plan.function}: valid={valid}; a reduce needs at least one valid item "
                "(CUB's result is undefined for an empty tile): skip the call for empty tiles"
            )
        count = min(count, valid)
    partials: list[Any] = []
    for rank in range(threads):
        items = block.items(rank, "items", count)
        own = items[0]
        for i in range(1, n):
            if rank * n + i < count:
                own = combine(own, items[i])
        partials.append(own)
    total = partials[0]
    for rank in range(1, min(threads, -(-count // n))):
        total = combine(total, partials[rank])
    if plan.broadcast:
        return [total] * threads
    return [total] + [THREAD_ZERO_ONLY] * (threads - 1)


_PARAMETERS = """
    valid : int, optional
        Reduce only the tile's first ``valid`` items (a partial tile: thread
        ``t`` holds items ``t * n`` to ``t * n + n - 1``); at least 1. A runtime
        integer: the same value in every thread. Default: every item.
    broadcast : bool
        Literal. True (default): every thread receives the result (one block
        barrier more than CUB). False: the result is defined in thread 0
        only, as CUB returns it, for the last cycles; the other threads
        receive an unspecified value (CUB's partial results), which the
        simulator makes NaN for floats and refuses where it is used or stored
        otherwise.
    dtype : numpy dtype, optional
        Literal. The dtype to accumulate in and return, as ``numpy.sum``'s
        ``dtype=``: each item is converted to it first
        (``block.sum(items, dtype=np.int64)`` sums int8 items without wrapping
        at 127). Default: the items' dtype (CUB's behaviour, which wraps
        small integer sums).
    algorithm : {"warp_reductions", "raking", "raking_commutative_only"}, optional
        CUB's ``BLOCK_REDUCE_*`` algorithm (default ``"warp_reductions"``, as
        CUB's); ``"raking_commutative_only"`` needs a commutative operator.
    temp_storage : shared uint8 array, optional
        Caller-owned temp storage (``temp_storage("reduce", ...)``);
        library-owned static shared memory by default.
    threads : int or tuple, optional
        Literal block shape; defaults to the launch's.
    items_per_thread : int, optional
        Only needed when ``items`` is not a local array of literal length.
    auto_sync : bool
        Insert the block barrier CUB requires before temp storage is reused.

    Returns
    -------
    scalar or record
        The reduction of the tile, in every thread (in thread 0 only with
        ``broadcast=False``), of ``dtype`` when given.
"""

#: The docstrings of the family's functions in :mod:`scan.block`.
DOCS: Mapping[str, str] = {
    "reduce": """Block-wide reduction with any operator (``cub::BlockReduce``).

    Every thread of the block calls it. ``block.reduce(x, "max")``,
    ``block.reduce(items, op)``.

    Parameters
    ----------
    items : scalar or local array
        This thread's item, or its items (the array length is the number of
        items per thread, in blocked arrangement).
    op : str, operator or function
        ``"+" "*" "min" "max" "&" "|" "^"``, their ``operator``/NumPy
        spellings, or a binary ``@cuda.jit(device=True)`` function (records:
        one returning a tuple of the fields). Associative; commutative too
        for ``algorithm="raking_commutative_only"``.
"""
    + _PARAMETERS,
    "sum": """Block-wide sum (``cub::BlockReduce::Sum``). Parameters as in :func:`reduce`.

    Parameters
    ----------
    items : scalar or local array
        Numbers (records have no ``+``: use :func:`reduce` with an operator).
"""
    + _PARAMETERS,
}


SPEC = Primitive(
    family="reduce",
    calls=CALLS,
    plan_type=ReducePlan,
    plan=_plan_call,
    operands=OPERANDS,
    render=_render,
    callbacks=_callbacks,
    shares_storage=_shares_storage,
    describe=_describe,
    layout_plan=_layout_plan,
    docs=DOCS,
    layout_names=("reduce",),
    stubs=STUBS,
    stub_literals={"_ReduceAlgorithmCodes": tuple(ALGORITHMS)},
    stub_declarations=STUB_DECLARATIONS,
    returns="items",
    simulate=simulate,
)
