# SPDX-License-Identifier: Apache-2.0
"""Numba registration: typing and lowering of :mod:`scan.block` in CUDA kernels.

Importing this module (``import scan`` does) registers:

* a typeof for statefn descriptors, so kernels can name them as globals;
* a before-inference IR rewrite that records the literal lengths of the local
  arrays passed to block primitives (items per thread is a C++ template
  parameter, and numba's array types carry no shape);
* typing templates that turn a call's types and literals into a plan (every
  rejection happens there, before C++ exists) and lowerings that call the
  compiled provider.

Typing templates and lowering are used instead of ``@overload`` because
overload implementations compile through a dispatcher that asks the current
device for its compute capability, which fails on machines without a GPU;
these paths compile with an explicit ``cc``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
from llvmlite import ir as llir
from numba.cuda import launchconfig, types
from numba.cuda.core import ir
from numba.cuda.core.rewrites import Rewrite, register_rewrite
from numba.cuda.cudadecl import registry as typing_registry
from numba.cuda.cudaimpl import registry as lowering_registry
from numba.cuda.extending import core_models, register_model, typeof_impl
from numba.cuda.np.numpy_support import as_dtype
from numba.cuda.typing.templates import AbstractTemplate, signature

import statefn

from . import block
from ._errors import PlanError, ScanTypeError
from ._lower import (
    array_length,
    current_cc,
    data_pointer,
    element_pointer,
    emit_call,
    empty_slot,
    link_scan,
    link_tile_io,
    null,
    scalar_slot,
)
from ._plan import (
    ArrayFact,
    Operand,
    ScalarFact,
    ScanPlan,
    TileIOPlan,
    check_unknown_keywords,
    plan_scan,
    plan_tile_io,
    resolve_block,
)

__all__ = ["DescriptorType"]

_LENGTHS_KW = "_scan_static_lengths"
_SCANS = ("scan", "inclusive_sum", "exclusive_sum", "inclusive_scan", "exclusive_scan")
_IO = ("load", "store")
_FUNCTIONS: dict[str, Callable[..., Any]] = {name: getattr(block, name) for name in _SCANS + _IO}
_BY_OBJECT = {id(fn): name for name, fn in _FUNCTIONS.items()}
# the array operands whose literal lengths the rewrite records
_ARRAY_OPERANDS = ("values", "out", "prefix_state", "block_aggregate", "items")


def _public_signature(name: str) -> inspect.Signature:
    return inspect.signature(_FUNCTIONS[name])


def _fold_signature(name: str) -> inspect.Signature:
    # numba folds keyword-only parameters incorrectly; an all-positional copy
    # with the hidden lengths parameter is used for lowering only.
    # Required keyword-only parameters get a placeholder default there: the
    # public signature has already enforced that they were passed.
    params = [
        p.replace(
            kind=inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None if p.default is inspect.Parameter.empty and i > 0 else p.default,
        )
        for i, p in enumerate(_public_signature(name).parameters.values())
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    params.append(
        inspect.Parameter(_LENGTHS_KW, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
    )
    return inspect.Signature(params)


_PUBLIC_SIGS = {name: _public_signature(name) for name in _FUNCTIONS}
_FOLD_SIGS = {name: _fold_signature(name) for name in _FUNCTIONS}


# ---------------------------------------------------------------------------
# descriptors as kernel globals


class DescriptorType(types.Dummy):  # type: ignore[misc]
    """Numba type of a statefn descriptor named in a kernel (a compile-time constant)."""

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        super().__init__(name=f"statefn.{type(descriptor).__name__}({descriptor.key[:16]})")

    @property
    def key(self) -> Any:
        return (type(self.descriptor).__name__, self.descriptor.key)


for _cls in (statefn.StatefulFunction, statefn.StatelessFunction, statefn.ScanOperator):
    typeof_impl.register(_cls)(lambda val, c: DescriptorType(val))
register_model(DescriptorType)(core_models.OpaqueModel)


# ---------------------------------------------------------------------------
# the rewrite recording local-array lengths


def _resolve(func_ir: Any, var: Any, depth: int = 0) -> Any:
    """The Python object a variable denotes (globals and attribute chains)."""
    if depth > 8 or not isinstance(var, ir.var_types):
        raise LookupError
    defn = func_ir.get_definition(var)
    if isinstance(defn, ir.global_types + ir.freevar_types):
        return defn.value
    if isinstance(defn, ir.expr_types) and defn.op == "getattr":
        return getattr(_resolve(func_ir, defn.value, depth + 1), defn.attr)
    raise LookupError


def _const(func_ir: Any, var: Any) -> Any:
    defn = func_ir.get_definition(var)
    if isinstance(defn, ir.const_types + ir.global_types + ir.freevar_types):
        return defn.value
    raise LookupError


def _static_length(func_ir: Any, var: Any) -> int | None:
    from numba import cuda

    try:
        defn = func_ir.get_definition(var)
        if not (isinstance(defn, ir.expr_types) and defn.op == "call"):
            return None
        fn = _resolve(func_ir, defn.func)
        if fn not in (cuda.local.array, cuda.shared.array):
            return None
        shape_var = defn.args[0] if defn.args else dict(defn.kws).get("shape")
        shape = _const(func_ir, shape_var)
    except (LookupError, KeyError, AttributeError, IndexError):
        return None
    if isinstance(shape, tuple) and len(shape) == 1:
        shape = shape[0]
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        return int(shape)
    return None


@register_rewrite("before-inference")
class RecordStaticLengths(Rewrite):  # type: ignore[misc]
    """Add a hidden literal keyword with the operands' local-array lengths."""

    def __init__(self, state: Any) -> None:
        super().__init__(state)
        self._pending: list[tuple[Any, str, str]] = []
        self._block: Any = None

    def match(self, func_ir: Any, block_: Any, typemap: Any, calltypes: Any) -> bool:
        self._pending = []
        for stmt in block_.body:
            if not (isinstance(stmt, ir.assign_types) and isinstance(stmt.value, ir.expr_types)):
                continue
            expr = stmt.value
            if expr.op != "call" or any(k == _LENGTHS_KW for k, _ in expr.kws):
                continue
            try:
                name = _BY_OBJECT.get(id(_resolve(func_ir, expr.func)))
            except (LookupError, AttributeError):
                continue
            if name is None:
                continue
            try:
                bound = _PUBLIC_SIGS[name].bind_partial(*expr.args, **dict(expr.kws))
            except TypeError:
                continue  # typing reports the binding error with the right words
            lengths = []
            for operand in _ARRAY_OPERANDS:
                var = bound.arguments.get(operand)
                n = None if var is None else _static_length(func_ir, var)
                if n is not None:
                    lengths.append(f"{operand}={n}")
            self._pending.append((stmt, name, ";".join(lengths)))
        if self._pending:
            self._block = block_
            return True
        return False

    def apply(self) -> Any:
        new_block = self._block.copy()
        new_block.clear()
        targets = {id(stmt): text for stmt, _, text in self._pending}
        for stmt in self._block.body:
            text = targets.get(id(stmt))
            if text is not None:
                var = ir.Var(
                    self._block.scope,
                    self._block.scope.redefine("$scan_lengths", stmt.loc).name,
                    stmt.loc,
                )
                new_block.append(ir.Assign(ir.Const(text, stmt.loc), var, stmt.loc))
                stmt.value.kws = [*stmt.value.kws, (_LENGTHS_KW, var)]
            new_block.append(stmt)
        return new_block


# ---------------------------------------------------------------------------
# typing


_OMITTED = object()
_EXAMPLES = {
    "threads": "128",
    "items_per_thread": "4",
    "algorithm": "'raking'",
    "mode": "'inclusive'",
    "auto_sync": "False",
}


def _literal(function: str, name: str, ty: Any) -> Any:
    """The Python value of a literal argument (None when omitted or None)."""
    if ty is _OMITTED or isinstance(ty, types.NoneType | types.Omitted):
        return getattr(ty, "value", None)
    if isinstance(ty, types.Literal):
        return ty.literal_value
    if isinstance(ty, types.BaseTuple):
        return tuple(_literal(function, name, t) for t in ty.types)
    raise PlanError(
        f"{function}: {name}= must be a literal constant written in the kernel (got a runtime "
        f"value of type {ty}); write it out, e.g. {name}={_EXAMPLES.get(name, '...')}"
    )


def _callable_of(ty: Any) -> Any:
    """The Python object a callable-valued argument denotes."""
    if ty is _OMITTED or isinstance(ty, types.NoneType | types.Omitted):
        return None
    if isinstance(ty, DescriptorType):
        return ty.descriptor
    if isinstance(ty, types.Dispatcher):
        return ty.dispatcher
    if isinstance(ty, types.Literal):
        return ty.literal_value
    if isinstance(ty, types.Function):
        return ty.typing_key
    raise ScanTypeError(
        f"got an operand of type {ty} where a callback or operator was expected; pass a "
        "statefn descriptor, a @cuda.jit(device=True) function or an operator string such as '+'"
    )


def _np_dtype(ty: Any) -> np.dtype:
    dtype: np.dtype = np.dtype(as_dtype(types.unliteral(ty)))
    return dtype


def _operand(function: str, name: str, ty: Any, lengths: Mapping[str, int]) -> Operand | None:
    if ty is _OMITTED or isinstance(ty, types.NoneType | types.Omitted):
        return None
    if isinstance(ty, types.Array):
        return ArrayFact(
            dtype=_np_dtype(ty.dtype),
            ndim=ty.ndim,
            length=lengths.get(name),
            contiguous=ty.layout == "C",
        )
    if isinstance(ty, types.Number | types.Boolean):
        if isinstance(types.unliteral(ty), types.Boolean):
            raise ScanTypeError(f"{function}: {name} is a boolean; use an integer dtype")
        return ScalarFact(_np_dtype(ty))
    raise ScanTypeError(f"{function}: {name} must be a number or an array (got {ty})")


def _array(function: str, name: str, ty: Any, lengths: Mapping[str, int]) -> ArrayFact | None:
    fact = _operand(function, name, ty, lengths)
    if fact is not None and not isinstance(fact, ArrayFact):
        raise ScanTypeError(f"{function}: {name} must be an array (got a scalar of type {ty})")
    return fact


def _parse_lengths(text: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    if isinstance(text, str) and text:
        for item in text.split(";"):
            key, _, value = item.partition("=")
            out[key] = int(value)
    return out


def _launch_block() -> tuple[int, int, int] | None:
    cfg = launchconfig.current_launch_config()
    if cfg is None:
        return None
    # the plan bakes the block shape into the code: recompile for other launches
    cfg.dispatcher.mark_launch_config_sensitive()
    bx, by, bz = cfg.blockdim
    return (int(bx), int(by), int(bz))


def _bind(name: str, args: tuple[Any, ...], kws: Mapping[str, Any]) -> dict[str, Any]:
    visible = {k: v for k, v in kws.items() if k != _LENGTHS_KW}
    allowed = {
        p.name
        for p in _PUBLIC_SIGS[name].parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    }
    check_unknown_keywords(name, visible, allowed)
    try:
        bound = _PUBLIC_SIGS[name].bind(*args, **visible)
    except TypeError as exc:
        raise ScanTypeError(f"{name}: {exc}; see help(scan.block.{name})") from None
    values = dict(bound.arguments)
    values[_LENGTHS_KW] = kws.get(_LENGTHS_KW)
    return values


def _get(bound: Mapping[str, Any], key: str) -> Any:
    return bound.get(key, _OMITTED)


def plan_from_types(name: str, bound: Mapping[str, Any]) -> ScanPlan | TileIOPlan:
    """Build the plan of a call from its bound numba types."""
    lengths = _parse_lengths(_literal(name, _LENGTHS_KW, _get(bound, _LENGTHS_KW)))
    threads = _literal(name, "threads", _get(bound, "threads"))
    blk = resolve_block(name, threads, _launch_block())
    ipt = _literal(name, "items_per_thread", _get(bound, "items_per_thread"))
    auto_sync = _literal(name, "auto_sync", _get(bound, "auto_sync"))
    auto_sync = True if auto_sync is None else bool(auto_sync)
    if name in _IO:
        direction: Literal["load", "store"] = "load" if name == "load" else "store"
        array_name = "src" if name == "load" else "dst"
        array = _array(name, array_name, bound[array_name], lengths)
        if array is None:
            raise ScanTypeError(f"{name}: {array_name} must be an array")
        items = _operand(name, "items", bound["items"], lengths)
        if items is None:
            raise ScanTypeError(f"{name}: items must be a local array")
        oob = _operand(name, "oob_default", _get(bound, "oob_default"), lengths)
        if isinstance(oob, ArrayFact):
            raise ScanTypeError(f"{name}: oob_default must be a scalar")
        valid = _get(bound, "valid_items")
        if valid is not _OMITTED and not isinstance(
            valid, types.Integer | types.NoneType | types.Omitted
        ):
            raise ScanTypeError(f"{name}: valid_items must be an integer (got {valid})")
        offset = bound["offset"]
        if not isinstance(offset, types.Integer):
            raise ScanTypeError(f"{name}: offset must be an integer (got {offset})")
        return plan_tile_io(
            function=direction,
            array=array,
            items=items,
            algorithm=_literal(name, "algorithm", _get(bound, "algorithm")),
            oob_default=oob,
            temp_storage=_array(name, "temp_storage", _get(bound, "temp_storage"), lengths),
            block=blk,
            items_per_thread=ipt,
            auto_sync=auto_sync,
        )
    values = _operand(name, "values", bound["values"], lengths)
    if values is None:
        raise ScanTypeError(f"{name}: values is required")
    mode = {"inclusive_sum": "inclusive", "inclusive_scan": "inclusive"}.get(name)
    mode = mode or ("exclusive" if name != "scan" else _literal(name, "mode", bound["mode"]))
    scan_op = "+" if name.endswith("_sum") else _callable_of(_get(bound, "scan_op"))
    init = _operand(name, "initial_value", _get(bound, "initial_value"), lengths)
    if isinstance(init, ArrayFact):
        raise ScanTypeError(f"{name}: initial_value must be a scalar")
    algorithm = _literal(name, "algorithm", _get(bound, "algorithm")) or "raking"
    return plan_scan(
        function=name,
        values=values,
        out=_operand(name, "out", _get(bound, "out"), lengths),
        mode=mode,
        scan_op="+" if scan_op is None else scan_op,
        initial_value=init,
        prefix_op=_callable_of(_get(bound, "prefix_op")),
        prefix_state=_array(name, "prefix_state", _get(bound, "prefix_state"), lengths),
        block_aggregate=_array(name, "block_aggregate", _get(bound, "block_aggregate"), lengths),
        algorithm=algorithm,
        temp_storage=_array(name, "temp_storage", _get(bound, "temp_storage"), lengths),
        block=blk,
        items_per_thread=ipt,
        auto_sync=auto_sync,
    )


def _make_template(name: str) -> type[AbstractTemplate]:
    def generic(self: Any, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        bound = _bind(name, args, kws)
        plan = plan_from_types(name, bound)
        ret = types.none
        if isinstance(plan, ScanPlan) and plan.scalar:
            ret = types.unliteral(bound["values"])
        fold = _FOLD_SIGS[name]
        argtys = [
            bound[p.name]
            if p.name in bound and bound[p.name] is not None
            else types.Omitted(p.default)
            for p in fold.parameters.values()
        ]
        return signature(ret, *argtys).replace(pysig=fold)

    return type(
        f"_Template_{name}",
        (AbstractTemplate,),
        {"key": _FUNCTIONS[name], "prefer_literal": True, "generic": generic},
    )


for _name in _FUNCTIONS:
    typing_registry.register_global(_FUNCTIONS[_name])(_make_template(_name))


# ---------------------------------------------------------------------------
# lowering


def _lower_scan(name: str, context: Any, builder: Any, sig: Any, args: Any) -> Any:
    fold = _FOLD_SIGS[name]
    bound = dict(zip(fold.parameters, sig.args, strict=True))
    vals = dict(zip(fold.parameters, args, strict=True))
    plan = plan_from_types(name, bound)
    assert isinstance(plan, ScanPlan)
    cc = current_cc()
    provider, objects = link_scan(plan, cc)
    value_ty = types.unliteral(bound["values"]) if plan.scalar else bound["values"].dtype

    def ptr(key: str) -> Any:
        ty = bound[key]
        if isinstance(ty, types.NoneType | types.Omitted):
            return null()
        return data_pointer(context, builder, ty, vals[key])

    result_slot = None
    if plan.scalar:
        in_ptr = scalar_slot(context, builder, vals["values"], bound["values"], value_ty)
        result_slot, out_ptr = empty_slot(context, builder, value_ty)
    else:
        in_ptr = ptr("values")
        out_ptr = in_ptr if isinstance(bound["out"], types.NoneType | types.Omitted) else ptr("out")
    init_ty = bound.get("initial_value", types.none)
    if plan.has_initial_value:
        init_ptr = scalar_slot(context, builder, vals["initial_value"], init_ty, value_ty)
    else:
        init_ptr = null()
    state_ptr = ptr("prefix_state") if plan.stateful else null()
    agg_ptr = ptr("block_aggregate") if plan.has_block_aggregate else null()
    temp_ptr = ptr("temp_storage") if plan.temp_storage == "caller" else null()
    emit_call(
        context,
        builder,
        provider.symbol,
        [temp_ptr, in_ptr, out_ptr, init_ptr, state_ptr, agg_ptr],
        objects,
    )
    if result_slot is not None:
        return builder.load(result_slot)
    return context.get_dummy_value()


def _lower_io(name: str, context: Any, builder: Any, sig: Any, args: Any) -> Any:
    fold = _FOLD_SIGS[name]
    bound = dict(zip(fold.parameters, sig.args, strict=True))
    vals = dict(zip(fold.parameters, args, strict=True))
    plan = plan_from_types(name, bound)
    assert isinstance(plan, TileIOPlan)
    cc = current_cc()
    provider, objects = link_tile_io(plan, cc)
    array_name = "src" if name == "load" else "dst"
    array_ty = bound[array_name]
    intp = types.intp
    offset = context.cast(builder, vals["offset"], bound["offset"], intp)
    length = array_length(context, builder, array_ty, vals[array_name])
    valid = builder.sub(length, offset)
    valid_ty = bound.get("valid_items")
    if isinstance(valid_ty, types.Integer):
        requested = context.cast(builder, vals["valid_items"], valid_ty, intp)
        smaller = builder.icmp_signed("<", requested, valid)
        valid = builder.select(smaller, requested, valid)
    base = element_pointer(context, builder, array_ty, vals[array_name], offset)
    items_ptr = data_pointer(context, builder, bound["items"], vals["items"])
    value_ty = array_ty.dtype
    oob_ptr = null()
    if plan.has_oob_default:
        oob_ptr = scalar_slot(context, builder, vals["oob_default"], bound["oob_default"], value_ty)
    temp_ty = bound.get("temp_storage")
    temp_ptr = null()
    if plan.temp_storage == "caller":
        temp_ptr = data_pointer(context, builder, temp_ty, vals["temp_storage"])
    emit_call(
        context,
        builder,
        provider.symbol,
        [temp_ptr, base, valid, oob_ptr, items_ptr],
        objects,
        extra_types={2: llir.IntType(64)},
    )
    return context.get_dummy_value()


def _register_lowering(name: str) -> None:
    impl = _lower_io if name in _IO else _lower_scan

    def lower(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return impl(name, context, builder, sig, args)

    lowering_registry.lower(_FUNCTIONS[name], types.VarArg(types.Any))(lower)


for _name in _FUNCTIONS:
    _register_lowering(_name)
