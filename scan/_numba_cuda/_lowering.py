# SPDX-License-Identifier: Apache-2.0
"""Lowering of :mod:`scan.block` calls in numba-cuda kernels, and their link inputs.

A call site becomes one call of the provider's ``extern "C"`` entry point with
every operand passed by pointer (array data pointers as they are, scalars
through a stack slot). The plan is the one the typing made
(:func:`scan._numba_cuda._typing.typed_plan`); the build layer
(:func:`scan._build.build`) compiles or fetches the provider and the callbacks,
which Numba compiles here (:data:`CALLBACKS`). Their LTO-IR is attached to the
kernel's code library as :class:`numba.cuda.LTOIR` objects, memoised so that a
provider or callback used several times in one kernel links once, and the
library's linked cubin goes through the persistent cache
(:mod:`scan._numba_cuda._linkcache`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from llvmlite import ir
from numba import cuda
from numba.cuda import cgutils, types
from numba.cuda.core import targetconfig
from numba.cuda.cudadrv import nvvm
from numba.cuda.cudaimpl import registry as lowering_registry

import statefn

from .._build import Built, CallbackDescriptor, CompiledCallback, build
from .._calls import CALLS
from .._errors import PlanError
from .._numba_facts import LinkObjects
from .._operands import emit_operands
from .._primitives import for_plan
from .._toolchain import nvvm_version
from . import _linkcache
from ._callbacks import helpers_of, link_helpers, lower
from ._compat import inside_compile
from ._typing import FUNCTIONS, KERNEL_GROUPS, declared_threads, fold_signature, typed_plan

__all__ = ["CALLBACKS", "NumbaCallbacks", "current_cc"]

_I8P = ir.IntType(8).as_pointer()
# the kernels (LLVM functions) whose launch bounds a call has declared
_bounded: weakref.WeakSet[ir.Function] = weakref.WeakSet()
# the parameter names of each lowered call, in the typed signature's order
_PARAMS = {name: tuple(fold_signature(name).parameters) for name in FUNCTIONS}


class NumbaCallbacks:
    """Compiles user callbacks with numba-cuda (:func:`scan._numba_cuda._callbacks.lower`)."""

    @property
    def frontend(self) -> str:
        """``numba-cuda <version>``: part of the callbacks' cache keys."""
        import numba_cuda

        return f"numba-cuda {getattr(numba_cuda, '__version__', 'unknown')}"

    def __call__(
        self, descriptor: CallbackDescriptor, value_dtype: np.dtype[Any], cc: tuple[int, int]
    ) -> CompiledCallback:
        """Compile `descriptor` to the pointer ABI with Numba."""
        nvvm_version()  # a missing NVVM is a ToolchainError, not a callback's fault
        lowered = lower(descriptor, value_dtype, cc=cc)
        return CompiledCallback(
            symbol=lowered.symbol,
            c_decl=lowered.c_decl,
            ltoir=lowered.ltoir,
            helpers=helpers_of(lowered.symbol),
        )


#: The numba-cuda front end's callback compiler.
CALLBACKS = NumbaCallbacks()


def current_cc() -> tuple[int, int]:
    """The compute capability the kernel being compiled targets."""
    flags = targetconfig.ConfigStack.top_or_none()
    cc = None if flags is None else getattr(flags, "compute_capability", None)
    if not cc:
        raise PlanError(
            "scan: the target compute capability is unknown while compiling this kernel; "
            "compile through a launch on a GPU or pass cc= to scan.compile/cuda.compile_all"
        )
    return (int(cc[0]), int(cc[1]))


#: The link inputs, one numba.cuda.LTOIR each: numba keeps linking files in a
#: set, so the same object twice links once.
_LINK_OBJECTS = LinkObjects(lambda data, name: cuda.LTOIR(data, name=name))


def _built(context: Any, plan: Any) -> tuple[Built, tuple[int, int]]:
    _check_complete()
    cc = current_cc()
    together = KERNEL_GROUPS.group(plan, cc, context.active_code_library)
    return build(plan, cc, CALLBACKS, together=together), cc


# ---------------------------------------------------------------------------
# IR helpers


def _null() -> ir.Constant:
    """A null ``i8*`` for operands a provider does not use."""
    return ir.Constant(_I8P, None)


def _data_pointer(context: Any, builder: ir.IRBuilder, ty: types.Array, value: Any) -> ir.Value:
    """The data pointer of an array value, as ``i8*``."""
    ary = context.make_array(ty)(context, builder, value)
    return builder.bitcast(ary.data, _I8P)


def _array_length(context: Any, builder: ir.IRBuilder, ty: types.Array, value: Any) -> ir.Value:
    """``len(array)`` of a 1-D array value, as ``intp``."""
    ary = context.make_array(ty)(context, builder, value)
    return cgutils.unpack_tuple(builder, ary.shape, 1)[0]


def _element_pointer(
    context: Any, builder: ir.IRBuilder, ty: types.Array, value: Any, index: ir.Value
) -> ir.Value:
    """``&array[index]`` (no bounds check) as ``i8*``."""
    ary = context.make_array(ty)(context, builder, value)
    return builder.bitcast(builder.gep(ary.data, [index]), _I8P)


def _scalar_slot(
    context: Any, builder: ir.IRBuilder, value: Any, from_ty: Any, to_ty: Any
) -> ir.Value:
    """A stack slot holding ``value`` converted to ``to_ty``, as ``i8*``."""
    if to_ty == types.bfloat16 and from_ty != types.bfloat16:
        converted = _to_bfloat16(builder, context.cast(builder, value, from_ty, types.float64))
    else:
        converted = context.cast(builder, value, from_ty, to_ty)
    slot = cgutils.alloca_once(builder, context.get_value_type(to_ty))
    builder.store(converted, slot)
    return builder.bitcast(slot, _I8P)


def _to_bfloat16(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """A double rounded to the nearest bfloat16 (ties to even), as numba-cuda's ``i16``.

    numba-cuda converts to bfloat16 through C++ helper functions (link inputs
    of the kernel); this is the conversion in a few integer instructions:
    the double rounded to float32 to odd (exact where it fits, else the
    float32 toward zero with its last bit set), then to bfloat16 to nearest,
    ties to even, which rounds the double correctly (float32 has more than
    twice bfloat16's 8 significant bits).
    """
    f64, f32, i32 = ir.DoubleType(), ir.FloatType(), ir.IntType(32)
    single = builder.fptrunc(value, f32)
    back = builder.fpext(single, f64)
    inexact = builder.fcmp_ordered("!=", back, value)
    # rounded away from zero (the float has the double's sign; NVVM has no llvm.fabs)
    negative = builder.fcmp_ordered("<", value, ir.Constant(f64, 0.0))
    away = builder.select(
        negative,
        builder.fcmp_ordered("<", back, value),
        builder.fcmp_ordered(">", back, value),
    )
    bits = builder.bitcast(single, i32)
    bits = builder.sub(bits, builder.zext(builder.and_(inexact, away), i32))
    bits = builder.or_(bits, builder.zext(inexact, i32))
    # to nearest, ties to even: add 0x7fff and the lowest bit kept, then truncate
    kept = builder.and_(builder.lshr(bits, ir.Constant(i32, 16)), ir.Constant(i32, 1))
    rounded = builder.add(bits, builder.add(kept, ir.Constant(i32, 0x7FFF)))
    nan = builder.fcmp_unordered("uno", single, single)
    quiet = builder.or_(bits, ir.Constant(i32, 0x400000))  # a NaN stays a (quiet) NaN
    chosen = builder.select(nan, quiet, rounded)
    return builder.trunc(builder.lshr(chosen, ir.Constant(i32, 16)), ir.IntType(16))


def _record_pointer(builder: ir.IRBuilder, value: Any) -> ir.Value:
    """A record value's data, as ``i8*``: numba represents a record by a pointer to it."""
    return builder.bitcast(value, _I8P)


def _record_operand(
    context: Any, builder: ir.IRBuilder, value: Any, ty: Any, dtype: np.dtype[Any]
) -> ir.Value:
    """A record operand as ``i8*``: a record itself, or a tuple stored field by field."""
    from numba.cuda.np.numpy_support import from_dtype

    if not isinstance(ty, types.BaseTuple):
        return _record_pointer(builder, value)
    slot = _record_slot(builder, dtype)
    for i, field in enumerate(statefn.record_fields(dtype)):
        field_ty = from_dtype(field.dtype)
        item = context.cast(builder, builder.extract_value(value, i), ty.types[i], field_ty)
        where = builder.gep(slot, [ir.Constant(ir.IntType(64), field.offset)])
        builder.store(item, builder.bitcast(where, context.get_data_type(field_ty).as_pointer()))
    return slot


def _record_slot(builder: ir.IRBuilder, dtype: np.dtype[Any]) -> ir.Value:
    """An uninitialised stack slot with a record dtype's size and alignment, as ``i8*``."""
    unit = ir.IntType(8 * dtype.alignment)
    slot = cgutils.alloca_once(builder, ir.ArrayType(unit, dtype.itemsize // dtype.alignment))
    return builder.bitcast(slot, _I8P)


def _empty_slot(context: Any, builder: ir.IRBuilder, ty: Any) -> tuple[ir.Value, ir.Value]:
    """An uninitialised stack slot of ``ty``: (typed pointer, ``i8*``)."""
    slot = cgutils.alloca_once(builder, context.get_value_type(ty))
    return slot, builder.bitcast(slot, _I8P)


def _check_complete() -> None:
    """Refuse compiles whose product would silently lack the CUB code.

    The provider and the callbacks are LTO-IR link inputs of the kernel: a
    kernel compiled without link-time optimisation (``compile_ptx``,
    ``@cuda.jit(lto=False)`` or ``debug=True``) cannot link them, and numba-cuda's
    ``cuda.compile`` returns the kernel's own code without its link inputs.
    Whether the kernel is compiled for link-time optimisation is in the
    compilation's flags (numba-cuda makes the kernel's code library from
    them): ``lto`` for ``@cuda.jit``, the NVVM option ``gen-lto`` for
    ``compile``/``compile_all(output="ltoir")``.
    """
    flags = targetconfig.ConfigStack.top_or_none()
    lto = flags is None or bool(getattr(flags, "lto", True))
    lto = lto or "gen-lto" in (getattr(flags, "nvvm_options", None) or {})
    if not lto or inside_compile():
        raise PlanError(
            "scan.block calls are linked with the CUB code and callbacks they call, which "
            "cuda.compile() and cuda.compile_ptx() leave out and kernels without link-time "
            "optimisation (@cuda.jit(lto=False) or debug=True) cannot link; compile with "
            "scan.compile(kernel, signature, cc=...) (a linked cubin, or output='ltoir' for every "
            "object) or cuda.compile_all(..., output='ltoir'), and keep lto on; a "
            "@cuda.jit(device=True) function is compiled without its link inputs too: make "
            "scan.block calls in the kernel itself"
        )


def _emit_call(
    context: Any,
    builder: ir.IRBuilder,
    built: Built,
    cc: tuple[int, int],
    operands: Sequence[ir.Value],
    *,
    extra_types: Mapping[int, ir.Type] | None = None,
) -> None:
    """Declare ``int symbol(i8*, ...)``, call it, and attach the link inputs."""
    argtys = [(extra_types or {}).get(i, _I8P) for i in range(len(operands))]
    fnty = ir.FunctionType(ir.IntType(32), argtys)
    fn = cgutils.get_or_insert_function(builder.module, fnty, built.symbol)
    builder.call(fn, list(operands))
    _declare_launch_bounds(builder)
    library = context.active_code_library
    for item in built.link:
        library.add_linking_file(_LINK_OBJECTS.get(item.symbol, cc, item.ltoir))
        link_helpers(library, item.helpers)
    _linkcache.attach(library)


def _declare_launch_bounds(builder: ir.IRBuilder) -> None:
    """Declare the launch's thread count as the kernel's launch bounds (once per kernel).

    The annotation numba-cuda writes for ``launch_bounds=`` (its
    ``nvvm.set_launch_bounds``); a kernel that declares its own is left as it
    is (see :func:`declared_threads`). Without it ptxas sizes registers for
    1024 threads a block: at 512 threads and 4 items, 48 registers a thread
    instead of 40, two resident blocks an SM instead of three.
    """
    threads = declared_threads()
    kernel = builder.function
    if threads is None or kernel in _bounded:
        return
    nvvm.set_launch_bounds(kernel, threads)
    _bounded.add(kernel)


def _absent(ty: Any) -> bool:
    return isinstance(ty, types.NoneType | types.Omitted)


# ---------------------------------------------------------------------------
# the lowerings


class _Operands:
    """The primitive operand emitters of one call being lowered, in llvmlite IR.

    A :class:`scan._operands.OperandEmitter`: :func:`scan._operands.emit_operands`
    makes the operands as the family's operand table says.
    """

    def __init__(self, name: str, context: Any, builder: Any, sig: Any, args: Any) -> None:
        from numba.cuda.np.numpy_support import from_dtype

        params = _PARAMS[name]
        self.entry = CALLS[name]
        self.context = context
        self.builder = builder
        self.types = dict(zip(params, sig.args, strict=True))
        self.values = dict(zip(params, args, strict=True))
        self.plan = typed_plan(name, tuple(sig.args))
        self.spec = for_plan(self.plan)
        self.value_ty = from_dtype(self.plan.value_dtype)
        self.record = self.plan.value_dtype.names is not None
        self.result: tuple[ir.Value, Any] | None = None  # (slot, returned type)
        self.return_type = sig.return_type

    def passed(self, param: str) -> bool:
        return param in self.types and not _absent(self.types[param])

    def is_array(self, param: str) -> bool:
        return isinstance(self.types[param], types.Array)

    def constant(self, value: int) -> ir.Value:
        return ir.Constant(ir.IntType(64), value)

    def null(self) -> ir.Value:
        return _null()

    def data(self, param: str) -> ir.Value:
        return _data_pointer(self.context, self.builder, self.types[param], self.values[param])

    def index(self, param: str) -> ir.Value:
        return self.context.cast(self.builder, self.values[param], self.types[param], types.intp)

    def integer(self, param: str) -> ir.Value:
        return self.context.cast(self.builder, self.values[param], self.types[param], types.int64)

    def scalar_value(self, param: str) -> ir.Value:
        """A stack slot holding a scalar argument as the value type."""
        ty, val = self.types[param], self.values[param]
        return _scalar_slot(self.context, self.builder, val, ty, self.value_ty)

    def record_value(self, param: str) -> ir.Value:
        """A record, or a tuple stored field by field into a slot, as ``i8*``."""
        ty, val = self.types[param], self.values[param]
        return _record_operand(self.context, self.builder, val, ty, self.plan.value_dtype)

    def record_pointer(self, param: str) -> ir.Value:
        return _record_pointer(self.builder, self.values[param])

    def element_pointers(self, param: str, offset: ir.Value) -> list[ir.Value]:
        return [
            _element_pointer(self.context, self.builder, ty, array, offset)
            for ty, array in self.arrays(param)
        ]

    def lengths(self, param: str) -> list[ir.Value]:
        return [_array_length(self.context, self.builder, ty, a) for ty, a in self.arrays(param)]

    def minimum(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.select(self.builder.icmp_signed("<", a, b), a, b)

    def difference(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.sub(a, b)

    def zero_if_negative(self, test: ir.Value, value: ir.Value) -> ir.Value:
        zero = ir.Constant(value.type, 0)
        return self.builder.select(self.builder.icmp_signed("<", test, zero), zero, value)

    def nbytes(self, param: str) -> ir.Value:
        ty = self.types[param]
        length = _array_length(self.context, self.builder, ty, self.values[param])
        itemsize = self.context.get_abi_sizeof(self.context.get_data_type(ty.dtype))
        nbytes = self.builder.mul(length, ir.Constant(length.type, itemsize))
        return self.builder.sext(nbytes, ir.IntType(64)) if length.type.width < 64 else nbytes

    def arrays(self, param: str) -> list[tuple[types.Array, Any]]:
        """(type, value) of an array argument, or of each array of a tuple of them."""
        ty, value = self.types[param], self.values[param]
        if isinstance(ty, types.BaseTuple):
            items = cgutils.unpack_tuple(self.builder, value, len(ty.types))
            return list(zip(ty.types, items, strict=True))
        return [(ty, value)]

    def pointer_table(self, pointers: Sequence[ir.Value]) -> ir.Value:
        """A stack slot holding `pointers` in order, as ``i8*`` (zipped tile I/O's ``tile``)."""
        slot = cgutils.alloca_once(self.builder, ir.ArrayType(_I8P, len(pointers)))
        zero = ir.Constant(ir.IntType(32), 0)
        for i, pointer in enumerate(pointers):
            where = self.builder.gep(slot, [zero, ir.Constant(ir.IntType(32), i)])
            self.builder.store(pointer, where)
        return self.builder.bitcast(slot, _I8P)

    def result_slot(self) -> ir.Value:
        if self.record:
            slot = _record_slot(self.builder, self.plan.value_dtype)
        else:
            slot = _empty_slot(self.context, self.builder, self.return_type)[1]
        self.result = (slot, self.return_type)
        return slot

    def returned(self) -> Any:
        """The call's value: its result slot's content, or nothing."""
        if self.result is None:
            return self.context.get_dummy_value()
        slot, ty = self.result
        if self.record:
            return self.builder.bitcast(slot, self.context.get_value_type(ty))
        typed = self.builder.bitcast(slot, self.context.get_value_type(ty).as_pointer())
        return self.builder.load(typed)


def _lower(name: str, context: Any, builder: Any, sig: Any, args: Any) -> Any:
    call = _Operands(name, context, builder, sig, args)
    built, cc = _built(context, call.plan)
    operands = call.spec.operands
    values = emit_operands(call, call.plan, call.entry, operands)
    integers = {i: ir.IntType(64) for i, op in enumerate(operands) if op.integer}
    _emit_call(context, builder, built, cc, values, extra_types=integers)
    return call.returned()


def _register_lowering(name: str) -> None:
    def lower(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return _lower(name, context, builder, sig, args)

    lowering_registry.lower(FUNCTIONS[name], types.VarArg(types.Any))(lower)


for _name in FUNCTIONS:
    _register_lowering(_name)
