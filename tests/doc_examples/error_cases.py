# SPDX-License-Identifier: Apache-2.0
"""Triggers for every message docs/errors.md documents.

Each case is a function that makes the library raise; ``CASES`` maps the case
id used in the page (``<!-- error-case: ID -->``) to it. The tests compare the
page's text with what is really raised, so the page cannot drift from the code.
Host-side triggers call the planner directly (the same code the kernel typing
and the simulator run); the kernel triggers compile for ``cc=(9, 0)``.
"""

from __future__ import annotations

import functools
import linecache
import types
from collections.abc import Callable

import numpy as np
from helpers.kernels import typing_error
from helpers.plans import reduce_plan, scan_plan, warp_plan
from numba import cuda
from numba.cuda import types as nbtypes

import scan
import statefn
from scan import block
from scan._calls import bind
from scan._numba_cuda._callbacks import lower
from scan._plan import (
    ArrayFact,
    ScalarFact,
    TupleFact,
    ZipFact,
    as_array,
    check_launch_bounds,
    resolve_block,
)
from scan._primitives.tile_io._plan import plan_tile_io
from scan._primitives.warp_io import plan_warp_io

# The callbacks the cases use, defined in a module named ``kernels`` so that
# messages read as they would in a user's program (``kernels.running_total``).
_KERNELS_SOURCE = """
import numpy as np
import statefn

@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix

@statefn.stateless
def zero_prefix(block_aggregate):
    return block_aggregate * 0

def larger(a, b):
    return a if a > b else b

def first_only(state):
    return state[0]

def two_operands(state, block_aggregate):
    return block_aggregate

def star_args(*operands):
    return operands[0]

def star_kwargs(state, block_aggregate, **options):
    return block_aggregate

def needs_scale(state, block_aggregate, *, scale):
    return block_aggregate * scale

@statefn.stateful(np.int64)
def forgets_return(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate

@statefn.stateful(np.int64)
def returns_state(state, block_aggregate):
    state[0] += block_aggregate
    return state

@statefn.stateful(np.dtype([("total", np.int64), ("tiles", np.int32)], align=True))
def returns_record(state, block_aggregate):
    return state[0]

@statefn.stateful(np.float16)
def half_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix

@statefn.stateful(np.complex64)
def rotation(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return prefix

class Limits:
    cap = 100

LIMITS = Limits()

@statefn.stateful(np.int64)
def capped_by_object(state, block_aggregate):
    prefix = state[0]
    state[0] = min(prefix + block_aggregate, LIMITS.cap)
    return prefix
"""
kernels = types.ModuleType("kernels")
exec(compile(_KERNELS_SOURCE, "kernels.py", "exec"), kernels.__dict__)
# messages quote a callback's def line, as from a file on disk
linecache.cache["kernels.py"] = (len(_KERNELS_SOURCE), None, _KERNELS_SOURCE.splitlines(True), "")
running_total = kernels.running_total
zero_prefix = kernels.zero_prefix


I32 = ScalarFact(np.int32)
ITEMS = ArrayFact(np.int32, 1, 4)
STATE = ArrayFact(np.int64, 1, 1)
BLOCK = (128, 1, 1)
# int64 in the byte order this machine does not use
_FOREIGN_I8 = np.dtype(">i8" if np.little_endian else "<i8")


def _scan(**kw: object) -> None:
    scan_plan(**{"values": I32, **kw})


_STATUS = ArrayFact(scan.tile_status_dtype(np.int32), 1, memory="global")


def _lookback(**kw: object) -> None:
    scan_plan(**{"values": ITEMS, "prefix_op": scan.lookback, "prefix_state": _STATUS, **kw})


def _reduce(**kw: object) -> None:
    reduce_plan(**kw)


def _warp(**kw: object) -> None:
    warp_plan(**{"function": "warp.inclusive_sum", **kw})


_PAIR = np.dtype([("value", np.float32), ("pos", np.int32)])
_WIDE = np.dtype([("x", np.float64), ("y", np.float64), ("z", np.float64)])


def _keep(a: object, b: object) -> object:
    return a


_ZIP_PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
_F32_ROW = ArrayFact(np.float32, 1)


def _zip(**kw: object) -> None:
    _io(**{"array": ZipFact((_F32_ROW,) * 2), "items": ArrayFact(_ZIP_PAIR, 1, 4), **kw})


def _io(**kw: object) -> None:
    args: dict[str, object] = {
        "function": "load",
        "array": ArrayFact(np.int32, 1),
        "items": ITEMS,
        "algorithm": None,
        "oob_default": None,
        "temp_storage": None,
        "block": BLOCK,
    }
    args.update(kw)
    plan_tile_io(**args)  # type: ignore[arg-type]


CASES: dict[str, Callable[[], object]] = {
    # ---- combining options
    "prefix_with_initial_value": lambda: _scan(
        function="inclusive_scan",
        scan_op="max",
        initial_value=I32,
        prefix_op=running_total,
        prefix_state=STATE,
    ),
    "prefix_with_block_aggregate": lambda: _scan(
        prefix_op=zero_prefix, block_aggregate=ArrayFact(np.int32, 1, 1)
    ),
    "stateful_without_state": lambda: _scan(prefix_op=running_total),
    "state_without_prefix": lambda: _scan(prefix_state=STATE),
    "state_with_stateless": lambda: _scan(prefix_op=zero_prefix, prefix_state=STATE),
    "state_dtype_mismatch": lambda: _scan(
        prefix_op=running_total, prefix_state=ArrayFact(np.int32, 1, 1)
    ),
    "state_cannot_hold_values": lambda: _scan(
        values=ScalarFact(np.float32), prefix_op=running_total, prefix_state=STATE
    ),
    "half_state_cannot_hold_values": lambda: _scan(
        values=ScalarFact(np.float32),
        prefix_op=kernels.half_total,
        prefix_state=ArrayFact(np.float16, 1, 1),
    ),
    "state_not_numeric": lambda: _scan(
        prefix_op=running_total, prefix_state=ArrayFact(np.bool_, 1, 1)
    ),
    "state_not_1d": lambda: _scan(prefix_op=running_total, prefix_state=ArrayFact(np.int64, 2)),
    "state_length": lambda: _scan(prefix_op=running_total, prefix_state=ArrayFact(np.int64, 1, 2)),
    "state_shared": lambda: _scan(
        prefix_op=running_total, prefix_state=ArrayFact(np.int64, 1, 1, memory="shared")
    ),
    "state_global": lambda: _scan(
        prefix_op=running_total, prefix_state=ArrayFact(np.int64, 1, 1, memory="global")
    ),
    "exclusive_without_seed": lambda: _scan(
        function="exclusive_scan", mode="exclusive", scan_op="max"
    ),
    "old_keyword": lambda: block_keywords({"block_prefix_callback_op": running_total}),
    "unknown_keyword": lambda: block_keywords({"prefix": running_total}),
    # ---- operators and callbacks offered in the wrong role
    "stateful_as_scan_op": lambda: _scan(function="inclusive_scan", scan_op=running_total),
    "stateless_as_scan_op": lambda: _scan(function="inclusive_scan", scan_op=zero_prefix),
    "scan_op_as_prefix": lambda: _scan(prefix_op=statefn.scan_op(kernels.larger)),
    "operator_string_as_prefix": lambda: _scan(prefix_op="max"),
    "string_as_prefix": lambda: _scan(prefix_op="running_total"),
    "unknown_operator": lambda: _scan(function="inclusive_scan", scan_op="maximum_of"),
    "bitwise_on_floats": lambda: _scan(
        function="inclusive_scan", values=ScalarFact(np.float32), scan_op="^"
    ),
    "order_of_complex": lambda: _scan(
        function="inclusive_scan", values=ScalarFact(np.complex64), scan_op="max"
    ),
    "builtin_as_user_op": lambda: statefn.ScanOperator(op=min),
    "scan_operator_both": lambda: statefn.ScanOperator(builtin="+", op=kernels.larger),
    "scan_operator_neither": lambda: statefn.ScanOperator(),
    "name_not_str": lambda: statefn.stateless(kernels.first_only, name=3),  # type: ignore[call-overload]
    # ---- declaring callbacks: state dtypes
    "state_dtype_none": lambda: statefn.stateful(None),
    "state_dtype_not_a_dtype": lambda: statefn.stateful("int65"),
    "state_dtype_record": lambda: statefn.stateful(
        np.dtype([("flag", np.uint8), ("value", np.float32)])
    ),
    "state_dtype_bool": lambda: statefn.stateful(np.bool_),
    "state_dtype_byte_order": lambda: statefn.stateful(_FOREIGN_I8),
    # ---- declaring callbacks: arity and callables
    "arity_count": lambda: statefn.stateful(np.int64)(kernels.first_only),
    "arity_stateless_two": lambda: statefn.stateless(kernels.two_operands),
    "arity_varargs": lambda: statefn.stateful(np.int64)(kernels.star_args),
    "arity_varkw": lambda: statefn.stateful(np.int64)(kernels.star_kwargs),
    "arity_kwonly": lambda: statefn.stateful(np.int64)(kernels.needs_scale),
    "not_callable": lambda: statefn.stateful(np.int64)(3),  # type: ignore[arg-type]
    "not_compilable": lambda: statefn.stateful(np.int64)(functools.partial(kernels.larger, 1)),
    # the key is computed when a kernel naming the callback compiles (or launches)
    "unkeyable_global": lambda: kernels.capped_by_object.key,
    # ---- what callbacks return (compiled for cc 9.0; the simulator says the same)
    "result_none": lambda: lower(kernels.forgets_return, np.int32, cc=(9, 0)),
    "result_state_array": lambda: lower(kernels.returns_state, np.int32, cc=(9, 0)),
    "result_record": lambda: lower(kernels.returns_record, np.int32, cc=(9, 0)),
    "result_complex": lambda: lower(kernels.rotation, np.float32, cc=(9, 0)),
    # ---- block shape
    "no_block_shape": lambda: resolve_block("inclusive_sum", None, None),
    "launch_differs": lambda: resolve_block("inclusive_sum", 128, (64, 1, 1)),
    "launch_bounds_exceeded": lambda: check_launch_bounds("load", (512, 1, 1), 256),
    "threads_not_literal_shape": lambda: resolve_block("inclusive_sum", [128], None),
    "threads_not_positive": lambda: resolve_block("inclusive_sum", (0, 4), None),
    "too_many_threads": lambda: resolve_block("inclusive_sum", (64, 32), None),
    "warp_scans_not_multiple": lambda: _scan(algorithm="warp_scans", block=(48, 1, 1)),
    # ---- values, outputs and options
    "unknown_mode": lambda: _scan(function="scan", mode="prefix"),
    "unknown_algorithm": lambda: _scan(algorithm="raking_fast"),
    "value_dtype": lambda: _scan(values=ScalarFact(np.longdouble)),
    "values_2d": lambda: _scan(values=ArrayFact(np.int32, 2, None)),
    "ipt_unknown": lambda: _scan(values=ArrayFact(np.int32, 1, None)),
    "ipt_for_scalar": lambda: _scan(items_per_thread=4),
    "ipt_mismatch": lambda: _scan(values=ITEMS, items_per_thread=8),
    "ipt_zero": lambda: _scan(values=ArrayFact(np.int32, 1, None), items_per_thread=0),
    "out_with_scalar": lambda: _scan(out=ITEMS),
    "out_not_array": lambda: _scan(values=ITEMS, out=I32),
    "out_dtype": lambda: _scan(values=ITEMS, out=ArrayFact(np.int64, 1, 4)),
    "out_length": lambda: _scan(values=ITEMS, out=ArrayFact(np.int32, 1, 8)),
    "initial_value_dtype": lambda: _scan(
        function="exclusive_scan",
        mode="exclusive",
        scan_op="max",
        initial_value=ScalarFact(np.longdouble),
    ),
    "complex_operand_for_real_values": lambda: _scan(
        function="exclusive_scan",
        mode="exclusive",
        scan_op="max",
        initial_value=ScalarFact(np.complex128),
    ),
    "half_operand_out_of_range": lambda: _io(
        array=ArrayFact(np.float16, 1),
        items=ArrayFact(np.float16, 1, 4),
        oob_default=ScalarFact(np.float64, 1e6),
    ),
    "block_aggregate_dtype": lambda: _scan(block_aggregate=ArrayFact(np.int64, 1, 1)),
    "temp_storage_dtype": lambda: _scan(temp_storage=ArrayFact(np.int32, 1, 64)),
    # ---- tile I/O
    "io_array_2d": lambda: _io(array=ArrayFact(np.int32, 2)),
    "io_strided": lambda: _io(function="store", array=ArrayFact(np.int32, 1, contiguous=False)),
    "io_dtype_mismatch": lambda: _io(items=ArrayFact(np.float32, 1, 4)),
    "io_half_into_integers": lambda: _io(
        array=ArrayFact(np.float16, 1), items=ArrayFact(np.int32, 1, 4)
    ),
    "io_half_into_integer_array": lambda: _io(
        function="store", array=ArrayFact(np.int16, 1), items=ArrayFact(np.float16, 1, 4)
    ),
    "zip_half_into_integers": lambda: _zip(
        array=ZipFact((_F32_ROW, ArrayFact(np.float16, 1))),
        items=ArrayFact(np.dtype([("a", np.float32), ("b", np.int32)], align=True), 1, 4),
    ),
    "io_unknown_algorithm": lambda: _io(algorithm="blocked"),
    "io_oob_on_store": lambda: _io(function="store", oob_default=I32),
    "io_warp_not_multiple": lambda: _io(algorithm="warp_transpose", block=(48, 1, 1)),
    # ---- zipped tile I/O
    "zip_count": lambda: _zip(array=ZipFact((_F32_ROW,) * 3)),
    "zip_dtype": lambda: _zip(array=ZipFact((_F32_ROW, ArrayFact(np.float64, 1)))),
    "zip_numeric_items": lambda: _zip(items=ArrayFact(np.float32, 1, 4)),
    "zip_unknown_field": lambda: _zip(function="store", array=_F32_ROW, field="c"),
    "zip_field_twice": lambda: _zip(function="store", array=_F32_ROW, field=("b", "b")),
    "zip_field_not_a_name": lambda: _zip(function="store", array=_F32_ROW, field=1),
    "zip_field_numeric_items": lambda: _zip(
        function="store", array=_F32_ROW, items=ArrayFact(np.float32, 1, 4), field="b"
    ),
    "zip_temp_storage": lambda: _zip(temp_storage=ArrayFact(np.uint8, 1)),
    "zip_field_on_load": lambda: bind("load", (None, 0, None), {"field": "b"}),
    "zip_field_on_warp_store": lambda: bind("warp.store", (None, 0, None), {"field": "b"}),
    "zip_tuple_elsewhere": lambda: as_array("warp.load", "src", ZipFact((_F32_ROW,) * 2)),
    "zip_tuple_values": lambda: _scan(values=ZipFact((_F32_ROW,) * 2)),
    # ---- host-side calls
    "kernel_only": lambda: block.inclusive_sum(1),
    "temp_storage_primitive": lambda: block.temp_storage("sort", np.int32, 128, cc=(9, 0)),
    "reverse_not_literal": lambda: _scan(reverse=1),
    "reverse_exchange_too_large": lambda: _scan(
        function="inclusive_scan",
        values=ArrayFact(_WIDE, 1, 1),
        scan_op=_keep,
        block=(1024, 1, 1),
        reverse=True,
    ),
    # ---- cross-block scans
    "lookback_without_status": lambda: _lookback(prefix_state=None),
    "lookback_local_state": lambda: _lookback(prefix_state=STATE),
    "lookback_status_dtype": lambda: _lookback(
        prefix_state=ArrayFact(scan.tile_status_dtype(np.float32), 1)
    ),
    "lookback_2d_status": lambda: _lookback(
        prefix_state=ArrayFact(scan.tile_status_dtype(np.int32), 2)
    ),
    "lookback_strided_status": lambda: _lookback(
        prefix_state=ArrayFact(scan.tile_status_dtype(np.int32), 1, contiguous=False)
    ),
    "lookback_block_aggregate": lambda: _lookback(block_aggregate=ArrayFact(np.int32, 1, 1)),
    "lookback_temp_storage": lambda: _lookback(temp_storage=ArrayFact(np.uint8)),
    "lookback_block_x": lambda: _lookback(block=(16, 4, 1)),
    "lookback_exclusive_unseeded": lambda: _lookback(
        function="exclusive_scan", mode="exclusive", scan_op="max"
    ),
    "lookback_float_tile": lambda: _lookback(tile=ScalarFact(np.float32)),
    "tile_without_lookback": lambda: _scan(tile=I32),
    "status_without_lookback": lambda: _scan(prefix_state=_STATUS),
    "lookback_in_warp_scan": lambda: _warp(prefix_op=scan.lookback, prefix_state=_STATUS),
    "tile_status_tiles": lambda: scan.tile_status(2.5, np.int32),  # type: ignore[arg-type]
    "tile_status_dtype": lambda: scan.tile_status(4, np.complex64),
    "tile_status_deterministic": lambda: scan.tile_status(4, np.int32, deterministic="yes"),  # type: ignore[arg-type]
    "launch_shape_cross_block": lambda: block.launch_shape(2**20, np.int32, cross_block="yes"),  # type: ignore[arg-type]
    "lookback_half_values": lambda: _lookback(values=ArrayFact(np.float16, 1, 4)),
    # ---- warp scans
    "warp_lanes": lambda: _warp(lanes=12),
    "warp_block_not_multiple": lambda: _warp(block=(48, 1, 1)),
    "warp_exclusive_unseeded": lambda: _warp(
        function="warp.exclusive_scan", mode="exclusive", scan_op="max"
    ),
    "warp_aggregate_with_prefix": lambda: _warp(
        prefix_op=running_total, prefix_state=STATE, warp_aggregate=ArrayFact(np.int32, 1, 1)
    ),
    "warp_aggregate_dtype": lambda: _warp(warp_aggregate=ArrayFact(np.int64, 1, 1)),
    "warp_aggregate_2d": lambda: _warp(warp_aggregate=ArrayFact(np.int32, 2, None)),
    "warp_io_algorithm": lambda: plan_warp_io(
        function="load",
        array=ArrayFact(np.int32, 1),
        items=ITEMS,
        algorithm="transpose",
        oob_default=None,
        lanes=None,
        block=BLOCK,
    ),
    "warp_block_option": lambda: _warp_keywords({"algorithm": "raking"}),
    "warp_block_aggregate": lambda: _warp_keywords({"block_aggregate": None}),
    "reduce_records_sum": lambda: _reduce(function="sum", items=ArrayFact(_PAIR, 1, 4), op="+"),
    "reduce_bitwise_float": lambda: _reduce(op="|"),
    "reduce_algorithm": lambda: _reduce(algorithm="warp_scans"),
    "reduce_broadcast_not_literal": lambda: _reduce(broadcast=1),
    "reduce_valid_float": lambda: _reduce(valid=ScalarFact(np.float32)),
    "reduce_items_tuple": lambda: _reduce(items=TupleFact((np.float32, np.int32))),
    "reduce_items_2d": lambda: _reduce(items=ArrayFact(np.float32, 2, None)),
}


def block_keywords(keywords: dict[str, object]) -> None:
    """What the typing (and the simulator) do with the keywords of a call."""
    from scan._plan import check_unknown_keywords

    allowed = {
        "values",
        "out",
        "prefix_op",
        "prefix_state",
        "block_aggregate",
        "algorithm",
        "temp_storage",
        "threads",
        "items_per_thread",
        "auto_sync",
    }
    check_unknown_keywords("inclusive_sum", keywords, allowed)


def _warp_keywords(keywords: dict[str, object]) -> None:
    """What the typing (and the simulator) do with the keywords of a warp call."""
    from scan._calls import bind

    bind("warp.inclusive_sum", (), keywords)


def message(case: str) -> str:
    """``ExceptionType: message`` that *case* raises."""
    try:
        CASES[case]()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError(f"error case {case!r} raised nothing")


# ---------------------------------------------------------------------------
# messages only the kernel typing produces: compiled for cc=(9, 0), no GPU


def _runtime_threads(a, n):
    a[0] = block.inclusive_sum(a[0], threads=n)


def _array_as_operator(a, b):
    a[0] = block.inclusive_scan(a[0], scan_op=b, threads=32)


def _boolean_value(a):
    a[0] = block.inclusive_sum(a[0] > 0, threads=32)


def _tuple_value(a):
    a[0] = block.inclusive_sum((a[0], a[1]), threads=32)[0]


def _missing_values(a):
    a[0] = block.inclusive_sum(threads=32)


def _float_offset(a):
    items = cuda.local.array(4, np.int32)
    block.load(a, 0.5, items, threads=32)


def _scalar_items(a):
    block.load(a, 0, a[0], threads=32)


def _scalar_block_aggregate(a):
    a[0] = block.inclusive_sum(a[0], block_aggregate=a[1], threads=32)


def _array_oob_default(a):
    items = cuda.local.array(4, np.int32)
    block.load(a, 0, items, oob_default=a, threads=32)


def _float_valid_items(a):
    items = cuda.local.array(4, np.int32)
    block.load(a, 0, items, valid_items=2.5, threads=32)


def _array_initial_value(a):
    a[0] = block.exclusive_scan(a[0], scan_op="max", initial_value=a, threads=32)


_I32_ARRAY = nbtypes.int32[::1]

KERNEL_CASES: dict[str, tuple[Callable[..., None], tuple[object, ...]]] = {
    "runtime_literal": (_runtime_threads, (_I32_ARRAY, nbtypes.int64)),
    "array_as_operator": (_array_as_operator, (_I32_ARRAY, _I32_ARRAY)),
    "boolean_value": (_boolean_value, (_I32_ARRAY,)),
    "tuple_value": (_tuple_value, (_I32_ARRAY,)),
    "missing_values": (_missing_values, (_I32_ARRAY,)),
    "float_offset": (_float_offset, (_I32_ARRAY,)),
    "scalar_items": (_scalar_items, (_I32_ARRAY,)),
    "array_initial_value": (_array_initial_value, (_I32_ARRAY,)),
    "scalar_block_aggregate": (_scalar_block_aggregate, (_I32_ARRAY,)),
    "array_oob_default": (_array_oob_default, (_I32_ARRAY,)),
    "float_valid_items": (_float_valid_items, (_I32_ARRAY,)),
}


def kernel_message(case: str) -> str:
    """``ExceptionType: message`` that compiling *case*'s kernel for sm_90 raises."""
    pyfunc, argtypes = KERNEL_CASES[case]
    return typing_error(pyfunc, argtypes)
