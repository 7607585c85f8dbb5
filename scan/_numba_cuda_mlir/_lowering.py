# SPDX-License-Identifier: Apache-2.0
"""Lowering of :mod:`scan.block` calls in numba-cuda-mlir kernels.

A call site becomes one ``func.call`` of the provider's ``extern "C"`` entry
point with every operand passed as a generic pointer (an array's data
pointer, or a stack slot for a scalar), exactly the operands the numba-cuda
front end passes. The plan is the one the typing made
(:func:`scan._numba_cuda_mlir._typing.typed_plan`); :func:`scan._build.build`
compiles or fetches the provider and the callbacks (compiled by
numba-cuda-mlir, :class:`~scan._numba_cuda_mlir._callbacks.MlirCallbacks`);
their LTO-IR is registered with the kernel's lowering as in-memory
:class:`numba_cuda_mlir.cuda.LTOIR` objects, which numba-cuda-mlir links with
nvJitLink when it builds the kernel's cubin.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from numba_cuda_mlir import cuda, extending
from numba_cuda_mlir._mlir import ir
from numba_cuda_mlir._mlir.dialects import arith, func, gpu, llvm, memref
from numba_cuda_mlir.lowering_utilities import (
    convert,
    get_conversion_signedness,
    get_or_insert_function,
    get_storage_type,
    memref_data_pointer,
    memref_to_llvm_ptr,
    storage_to_value,
    value_to_storage,
)
from numba_cuda_mlir.numba_cuda import types

from .._build import Built, build
from .._calls import CALLS, IO_CALLS
from .._plan import ScanPlan, TileIOPlan
from ._callbacks import MlirCallbacks
from ._typing import (
    FUNCTIONS,
    HIDDEN_KW,
    KERNEL_GROUPS,
    bound_types,
    launch_block,
    typed_plan,
)

__all__ = ["CALLBACKS", "collect_link_inputs"]

#: The numba-cuda-mlir front end's callback compiler.
CALLBACKS = MlirCallbacks()
_lock = threading.Lock()
_objects: dict[tuple[str, tuple[int, int]], Any] = {}


_COLLECTED: contextvars.ContextVar[list[bytes] | None] = contextvars.ContextVar(
    "scan_mlir_link_inputs", default=None
)


@contextlib.contextmanager
def collect_link_inputs() -> Iterator[list[bytes]]:
    """The LTO-IR of every provider and callback lowered inside the block, in order, once each."""
    found: list[bytes] = []
    token = _COLLECTED.set(found)
    try:
        yield found
    finally:
        _COLLECTED.reset(token)


def _ltoir(symbol: str, cc: tuple[int, int], data: bytes) -> Any:
    # one object per (symbol, target): the lowering links an object it has seen once
    with _lock:
        obj = _objects.get((symbol, cc))
        if obj is None:
            obj = cuda.LTOIR(data, name=f"{symbol}.ltoir")
            _objects[(symbol, cc)] = obj
        return obj


def _ptr() -> ir.Type:
    return llvm.PointerType.get()


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _null() -> ir.Value:
    return llvm.mlir_zero(_ptr())


class _Call:
    """One call being lowered: its plan, argument types and variables by parameter."""

    def __init__(self, name: str, lower: Any, args: Sequence[Any], kws: Sequence[Any]) -> None:
        self.lower = lower
        arg_types = tuple(lower.get_numba_type(v.name) for v in args)
        kw_types = {k: lower.get_numba_type(v.name) for k, v in kws}
        self.types = bound_types(name, arg_types, kw_types)
        self.plan: ScanPlan | TileIOPlan = typed_plan(name, self.types)
        visible = {k: v for k, v in kws if k != HIDDEN_KW}
        self.vars = dict(CALLS[name].signature.bind(*args, **visible).arguments)
        self.cc: tuple[int, int] = tuple(lower.metadata["gpu_target"]["cc"])[:2]

    def passed(self, param: str) -> bool:
        ty = self.types.get(param)
        return ty is not None and not isinstance(ty, types.NoneType | types.Omitted)

    def value(self, param: str) -> ir.Value:
        return self.lower.load_var(self.vars[param])

    def data(self, param: str) -> ir.Value:
        """The data pointer of an array argument (generic address space)."""
        return memref_data_pointer(self.value(param))

    def slot(self, param: str, to: Any) -> ir.Value:
        """A stack slot holding a scalar argument converted to `to`."""
        src = types.unliteral(self.types[param])
        signed = get_conversion_signedness(src, to)
        stored = value_to_storage(to, self.value(param), signed=signed)
        slot = self.lower.alloca(get_storage_type(to))
        llvm.store(stored, slot)
        return slot

    def _declare_launch_bounds(self) -> None:
        """Declare the launch's thread count as the kernel's ``nvvm.maxntid``.

        The attribute numba-cuda-mlir writes for ``launch_bounds=``, and what
        the numba-cuda front end declares (``_numba_cuda._lowering``): ptxas
        then sizes registers for the launch's block instead of 1024 threads.
        A device function, a kernel compiled without a known launch and a
        kernel that declares its own bounds are left as they are.
        """
        launch = launch_block(self.types)
        op = self.lower.mlir_funcOp
        if launch is None or not isinstance(op, gpu.GPUFuncOp) or "nvvm.maxntid" in op.attributes:
            return
        threads = launch[0] * launch[1] * launch[2]
        op.attributes["nvvm.maxntid"] = ir.DenseI32ArrayAttr.get([threads, 1, 1])

    def emit(self, built: Built, operands: Sequence[ir.Value]) -> None:
        i32 = ir.IntegerType.get_signless(32)
        fnty = ir.FunctionType.get(inputs=[o.type for o in operands], results=[i32])
        callee = get_or_insert_function(built.symbol, fnty, self.lower.mlir_gpu_module)
        func.call(result=[i32], callee=callee.name.value, operands_=list(operands))
        self._declare_launch_bounds()
        collected = _COLLECTED.get()
        for item in built.link:
            self.lower.link_external_item(_ltoir(item.symbol, self.cc, item.ltoir))
            if collected is not None and item.ltoir not in collected:
                collected.append(item.ltoir)


def _built(call: _Call) -> Built:
    """The provider of `call`, compiled in one unit with its kernel's other calls."""
    library = call.lower.context.active_code_library
    group = KERNEL_GROUPS.group(call.plan, call.cc, library)
    return build(call.plan, call.cc, CALLBACKS, together=group)


def _lower_scan(name: str, lower: Any, target: Any, args: Any, kws: Any) -> None:
    call = _Call(name, lower, args, kws)
    plan = call.plan
    assert isinstance(plan, ScanPlan)
    built = _built(call)
    result = None
    if plan.scalar:
        value_ty = types.unliteral(call.types["values"])
        in_ptr = call.slot("values", value_ty)
        result = lower.alloca(get_storage_type(value_ty))
        out_ptr = result
    else:
        value_ty = call.types["values"].dtype
        in_ptr = call.data("values")
        out_ptr = call.data("out") if call.passed("out") else in_ptr
    init = call.slot("initial_value", value_ty) if plan.has_initial_value else _null()
    state = call.data("prefix_state") if plan.stateful else _null()
    aggregate = call.data("block_aggregate") if plan.has_block_aggregate else _null()
    temp = call.data("temp_storage") if plan.temp_storage == "caller" else _null()
    call.emit(built, [temp, in_ptr, out_ptr, init, state, aggregate])
    if result is None:
        lower.store_var(target, None)
    else:
        loaded = llvm.load(get_storage_type(value_ty), result)
        lower.store_var(target, storage_to_value(value_ty, loaded))


def _lower_io(name: str, lower: Any, target: Any, args: Any, kws: Any) -> None:
    call = _Call(name, lower, args, kws)
    plan = call.plan
    assert isinstance(plan, TileIOPlan)
    built = _built(call)
    array_name = "src" if name == "load" else "dst"
    array_ty = call.types[array_name]
    array = call.value(array_name)
    offset_ty = types.unliteral(call.types["offset"])
    offset = convert(
        call.value("offset"), _i64(), signed=get_conversion_signedness(offset_ty, types.int64)
    )
    zero = arith.constant(ir.IndexType.get(), 0)
    length = convert(memref.dim(array, zero), _i64())
    valid = arith.subi(length, offset)
    if call.passed("valid_items"):
        valid_ty = types.unliteral(call.types["valid_items"])
        requested = convert(
            call.value("valid_items"),
            _i64(),
            signed=get_conversion_signedness(valid_ty, types.int64),
        )
        valid = arith.minsi(requested, valid)
    element = memref_to_llvm_ptr(array, [offset], get_storage_type(array_ty.dtype))
    base = llvm.addrspacecast(_ptr(), element)
    items = call.data("items")
    oob = call.slot("oob_default", array_ty.dtype) if plan.has_oob_default else _null()
    temp = call.data("temp_storage") if plan.temp_storage == "caller" else _null()
    call.emit(built, [temp, base, valid, oob, items])
    lower.store_var(target, None)


def _register(name: str) -> None:
    impl = _lower_io if name in IO_CALLS else _lower_scan

    def lower_call(lower: Any, target: Any, args: Any, kws: Any) -> None:
        impl(name, lower, target, args, kws)

    extending.lower_builtin(FUNCTIONS[name], types.VarArg(types.Any))(lower_call)


for _name in FUNCTIONS:
    _register(_name)
