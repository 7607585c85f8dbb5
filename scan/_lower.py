# SPDX-License-Identifier: Apache-2.0
"""Lowering: emit the call to a provider and attach its LTO-IR to the kernel.

A call site becomes one call of the provider's ``extern "C"`` entry point with
every operand passed by pointer (array data pointers as they are, scalars
through a stack slot). The provider's and its callbacks' LTO-IR are attached to
the kernel's code library as :class:`numba.cuda.LTOIR` objects, memoised so
that a provider or callback used several times in one kernel links once.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from llvmlite import ir
from numba import cuda
from numba.cuda import cgutils, types
from numba.cuda.core import targetconfig

import statefn
from statefn import _abi

from . import _linkcache
from ._cache import Artifact, get_or_build
from ._codegen import CallbackDecl, provider_symbol, render_scan, render_tile_io
from ._compile import Provider, compile_provider
from ._errors import PlanError
from ._keys import compile_key
from ._plan import ScanPlan, TileIOPlan

__all__ = ["current_cc", "emit_call", "link_scan", "link_tile_io", "lowered_callback"]

_I8P = ir.IntType(8).as_pointer()
_lock = threading.Lock()
_objects: dict[tuple[str, tuple[int, int]], Any] = {}


def current_cc() -> tuple[int, int]:
    """The compute capability the kernel being compiled targets."""
    flags = targetconfig.ConfigStack.top_or_none()
    cc = None if flags is None else getattr(flags, "compute_capability", None)
    if not cc:
        raise PlanError(
            "scan: the target compute capability is unknown while compiling this kernel; "
            "compile through a launch on a GPU or pass cc= to cuda.compile/compile_all"
        )
    return (int(cc[0]), int(cc[1]))


def _ltoir_object(symbol: str, cc: tuple[int, int], data: bytes) -> Any:
    # numba keeps linking files in a set: the same object twice links once.
    with _lock:
        obj = _objects.get((symbol, cc))
        if obj is None:
            obj = cuda.LTOIR(data, name=f"{symbol}.ltoir")
            _objects[(symbol, cc)] = obj
        return obj


def lowered_callback(
    descriptor: statefn.StatefulFunction[Any, Any]
    | statefn.StatelessFunction[Any]
    | statefn.ScanOperator,
    value_dtype: np.dtype,
    cc: tuple[int, int],
) -> tuple[CallbackDecl, bytes]:
    """A callback's declaration and LTO-IR, through the persistent cache."""
    import numba_cuda

    state = descriptor.state_dtype.str if isinstance(descriptor, statefn.StatefulFunction) else ""
    key = compile_key(
        "callback",
        {
            "descriptor": descriptor.key,
            "value_dtype": value_dtype.str,
            "state_dtype": state,
            "numba_cuda": str(getattr(numba_cuda, "__version__", "unknown")),
        },
        cc,
    )

    def build() -> Artifact:
        lowered = _abi.lower(descriptor, value_dtype, cc=cc)
        return Artifact(
            payload=lowered.ltoir, meta={"symbol": lowered.symbol, "c_decl": lowered.c_decl}
        )

    art = get_or_build("callback", key, build)
    symbol, decl = art.meta["symbol"], art.meta["c_decl"]
    assert isinstance(symbol, str)
    assert isinstance(decl, str)
    return CallbackDecl(symbol=symbol, c_decl=decl), art.payload


def link_scan(plan: ScanPlan, cc: tuple[int, int]) -> tuple[Provider, list[Any]]:
    """Compile (or fetch) a scan provider; return it and the objects to link."""
    callbacks: list[tuple[CallbackDecl, bytes]] = []
    scan_cb = prefix_cb = None
    if not plan.scan_op.is_builtin:
        scan_cb, blob = lowered_callback(plan.scan_op, plan.value_dtype, cc)
        callbacks.append((scan_cb, blob))
    if plan.prefix_op is not None:
        prefix_cb, blob = lowered_callback(plan.prefix_op, plan.value_dtype, cc)
        callbacks.append((prefix_cb, blob))
    source = render_scan(plan, scan_callback=scan_cb, prefix_callback=prefix_cb)
    symbol = provider_symbol("scan", plan.key)
    provider = compile_provider(symbol, source, cc=cc, callbacks=[b for _, b in callbacks])
    objects = [_ltoir_object(symbol, cc, provider.ltoir)]
    objects += [_ltoir_object(decl.symbol, cc, blob) for decl, blob in callbacks]
    return provider, objects


def link_tile_io(plan: TileIOPlan, cc: tuple[int, int]) -> tuple[Provider, list[Any]]:
    """Compile (or fetch) a load/store provider; return it and the objects to link."""
    symbol = provider_symbol(plan.direction, plan.key)
    provider = compile_provider(symbol, render_tile_io(plan), cc=cc)
    return provider, [_ltoir_object(symbol, cc, provider.ltoir)]


# ---------------------------------------------------------------------------
# IR helpers


def null() -> ir.Constant:
    """A null ``i8*`` for operands a provider does not use."""
    return ir.Constant(_I8P, None)


def data_pointer(context: Any, builder: ir.IRBuilder, ty: types.Array, value: Any) -> ir.Value:
    """The data pointer of an array value, as ``i8*``."""
    ary = context.make_array(ty)(context, builder, value)
    return builder.bitcast(ary.data, _I8P)


def array_length(context: Any, builder: ir.IRBuilder, ty: types.Array, value: Any) -> ir.Value:
    """``len(array)`` of a 1-D array value, as ``intp``."""
    ary = context.make_array(ty)(context, builder, value)
    return cgutils.unpack_tuple(builder, ary.shape, 1)[0]


def element_pointer(
    context: Any, builder: ir.IRBuilder, ty: types.Array, value: Any, index: ir.Value
) -> ir.Value:
    """``&array[index]`` (no bounds check) as ``i8*``."""
    ary = context.make_array(ty)(context, builder, value)
    return builder.bitcast(builder.gep(ary.data, [index]), _I8P)


def scalar_slot(
    context: Any, builder: ir.IRBuilder, value: Any, from_ty: Any, to_ty: Any
) -> ir.Value:
    """A stack slot holding ``value`` converted to ``to_ty``, as ``i8*``."""
    converted = context.cast(builder, value, from_ty, to_ty)
    slot = cgutils.alloca_once(builder, context.get_value_type(to_ty))
    builder.store(converted, slot)
    return builder.bitcast(slot, _I8P)


def empty_slot(context: Any, builder: ir.IRBuilder, ty: Any) -> tuple[ir.Value, ir.Value]:
    """An uninitialised stack slot of ``ty``: (typed pointer, ``i8*``)."""
    slot = cgutils.alloca_once(builder, context.get_value_type(ty))
    return slot, builder.bitcast(slot, _I8P)


def emit_call(
    context: Any,
    builder: ir.IRBuilder,
    symbol: str,
    operands: Sequence[ir.Value],
    objects: Sequence[Any],
    *,
    extra_types: Mapping[int, ir.Type] | None = None,
) -> None:
    """Declare ``int symbol(i8*, ...)``, call it, and attach the link objects."""
    argtys = [(extra_types or {}).get(i, _I8P) for i in range(len(operands))]
    fnty = ir.FunctionType(ir.IntType(32), argtys)
    fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
    builder.call(fn, list(operands))
    library = context.active_code_library
    for obj in objects:
        library.add_linking_file(obj)
    _linkcache.attach(library)
