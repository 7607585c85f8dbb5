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

Record values are pointers to their bytes, as numba-cuda-mlir represents
them; a tuple spelling a record (``initial_value=(1.0, 0.0)``) is stored field
by field into a slot. numba-cuda-mlir 0.6 represents an array of records by a
byte memref (``memref<?x...xi8>``, shape and strides counted in records,
offset in bytes) and indexes one-dimensional ones with an integer, but cannot
lower what the record programs of ``docs/records.md`` also need:

- ``cuda.local.array(n, record_dtype)`` and ``cuda.shared.array(n, record_dtype)``
  (``invalid memref element type``: it allocates a memref of the record's
  pointer type);
- an integer index into an array of records of two or more dimensions
  (``src[row]`` yields a record pointer instead of a row; ``src[row, col]``
  and ``dst[row, col] = r`` are internal compiler errors).

In every function that calls :mod:`scan.block`, the planner
:class:`RecordArrays` (after the typing's, which records the calls' facts)
replaces exactly those constructs with calls of intrinsics that emit what
numba-cuda-mlir's own record code expects: a local or static shared array is a
byte buffer with the record's alignment viewed as a record memref; a row of a
C-contiguous array is the memref of the row; an element is the record's
address; an assignment copies the record field by field. Every other
construct (arrays of records that are not C-contiguous, slices, dynamic shared
memory), and functions without :mod:`scan.block` calls, compile as
numba-cuda-mlir compiles them.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numba_cuda_mlir import cuda, extending
from numba_cuda_mlir._mlir import ir
from numba_cuda_mlir._mlir.dialects import arith, func, gpu, llvm, memref
from numba_cuda_mlir.lowering_utilities import (
    convert,
    get_conversion_signedness,
    get_or_insert_function,
    get_storage_type,
    llvm_ptr_add_bytes,
    llvm_ptr_load,
    llvm_ptr_store,
    memref_data_pointer,
    memref_to_llvm_ptr,
    storage_to_value,
    to_llvm_storable_type,
    value_to_storage,
)
from numba_cuda_mlir.numba_cuda import types
from numba_cuda_mlir.numba_cuda.core import ir as nir
from numba_cuda_mlir.numba_cuda.np.numpy_support import as_dtype, from_dtype
from numba_cuda_mlir.numba_cuda.typing.templates import signature

import statefn

from .._build import Built, build
from .._calls import CALLS
from .._numba_facts import LinkObjects
from .._operands import emit_operands
from .._primitives import for_plan
from ._callbacks import MlirCallbacks, field_pointer, record_fields_of, store_fields
from ._typing import (
    FUNCTIONS,
    HIDDEN_KW,
    KERNEL_GROUPS,
    bound_types,
    launch_block,
    typed_plan,
)

__all__ = ["CALLBACKS", "RecordArrays", "collect_link_inputs", "record_operand", "record_slot"]

#: The numba-cuda-mlir front end's callback compiler.
CALLBACKS = MlirCallbacks()


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


#: The link inputs, one numba_cuda_mlir.cuda.LTOIR each: the lowering links an
#: object it has seen once.
_LINK_OBJECTS = LinkObjects(lambda data, name: cuda.LTOIR(data, name=name))


def _ptr() -> ir.Type:
    return llvm.PointerType.get()


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _null() -> ir.Value:
    return llvm.mlir_zero(_ptr())


def _index() -> ir.Type:
    return ir.IndexType.get()


def _const(value: int) -> ir.Value:
    return arith.constant(_i64(), value)


_DYNAMIC = -9223372036854775808  # MLIR's dynamic size, stride and offset marker


# ---------------------------------------------------------------------------
# record operands of the pointer ABI


def record_slot(lower: Any, dtype: np.dtype[Any]) -> ir.Value:
    """An uninitialised stack slot with a record dtype's size and alignment (a pointer)."""
    unit = dtype.alignment
    storage = llvm.ArrayType.get(ir.IntegerType.get_signless(8 * unit), dtype.itemsize // unit)
    with lower.alloca_insertion_point():
        return llvm.alloca(_ptr(), _const(1), storage, alignment=unit)


def record_operand(lower: Any, value: Any, ty: Any, dtype: np.dtype[Any]) -> ir.Value:
    """A record operand as a pointer: a record itself, or a tuple stored field by field."""
    if isinstance(ty, types.Record):
        return value
    slot = record_slot(lower, dtype)
    store_fields(slot, from_dtype(dtype), tuple(value), tuple(ty.types))
    return slot


class _Call:
    """One call being lowered: its plan, argument types and variables by parameter.

    Its primitive emitters make it a :class:`scan._operands.OperandEmitter`:
    :func:`scan._operands.emit_operands` makes the operands as the family's
    operand table says.
    """

    def __init__(self, name: str, lower: Any, args: Sequence[Any], kws: Sequence[Any]) -> None:
        self.lower = lower
        arg_types = tuple(lower.get_numba_type(v.name) for v in args)
        kw_types = {k: lower.get_numba_type(v.name) for k, v in kws}
        self.types = bound_types(name, arg_types, kw_types)
        self.entry = CALLS[name]
        self.plan: Any = typed_plan(name, self.types)
        self.spec = for_plan(self.plan)
        self.value_ty = from_dtype(self.plan.value_dtype)
        self.is_record = self.plan.value_dtype.names is not None
        self.result: ir.Value | None = None  # the slot of a call that returns its value
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
        """A stack slot holding a scalar argument converted to `to`.

        A complex number is stored as its two parts (NumPy's layout), which
        is how numba-cuda-mlir keeps one in memory.
        """
        src = types.unliteral(self.types[param])
        signed = get_conversion_signedness(src, to)
        stored = value_to_storage(to, self.value(param), signed=signed)
        slot = self.lower.alloca(to_llvm_storable_type(get_storage_type(to)))
        llvm_ptr_store(stored, slot)
        return slot

    def arrays(self, param: str) -> list[tuple[Any, ir.Value]]:
        """(type, value) of an array argument, or of each array of a tuple of them."""
        ty = self.types[param]
        if isinstance(ty, types.BaseTuple):
            return list(zip(ty.types, tuple(self.value(param)), strict=True))
        return [(ty, self.value(param))]

    def integer(self, param: str) -> ir.Value:
        """An integer argument as a 64-bit integer."""
        src = types.unliteral(self.types[param])
        signed = get_conversion_signedness(src, types.int64)
        return convert(self.value(param), _i64(), signed=signed)

    def record(self, param: str, dtype: Any) -> ir.Value:
        """A record argument (a record, or a tuple of numbers) as a pointer to its bytes."""
        return record_operand(self.lower, self.value(param), self.types[param], dtype)

    # the primitive emitters of scan._operands.OperandEmitter

    def is_array(self, param: str) -> bool:
        return isinstance(self.types[param], types.Array)

    def constant(self, value: int) -> ir.Value:
        return _const(value)

    def null(self) -> ir.Value:
        return _null()

    def result_slot(self) -> ir.Value:
        slot = (
            record_slot(self.lower, self.plan.value_dtype)
            if self.is_record
            else self.lower.alloca(to_llvm_storable_type(get_storage_type(self.value_ty)))
        )
        self.result = slot
        return slot

    def scalar_value(self, param: str) -> ir.Value:
        return self.slot(param, self.value_ty)

    def record_value(self, param: str) -> ir.Value:
        return self.record(param, self.plan.value_dtype)

    def record_pointer(self, param: str) -> ir.Value:
        return self.value(param)  # a record is a pointer to its bytes

    def index(self, param: str) -> ir.Value:
        return self.integer(param)

    def element_pointers(self, param: str, offset: ir.Value) -> list[ir.Value]:
        return [_element(ty, array, offset) for ty, array in self.arrays(param)]

    def pointer_table(self, pointers: Sequence[ir.Value]) -> ir.Value:
        """A stack slot holding `pointers` in order (zipped tile I/O's ``tile`` operand)."""
        with self.lower.alloca_insertion_point():
            table = llvm.alloca(
                _ptr(), _const(1), llvm.ArrayType.get(_ptr(), len(pointers)), alignment=8
            )
        for i, pointer in enumerate(pointers):
            llvm.store(pointer, llvm_ptr_add_bytes(table, _const(8 * i)))
        return table

    def lengths(self, param: str) -> list[ir.Value]:
        return [_length(array) for _, array in self.arrays(param)]

    def minimum(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.minsi(a, b)

    def difference(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.subi(a, b)

    def zero_if_negative(self, test: ir.Value, value: ir.Value) -> ir.Value:
        zero = _const(0)
        before = arith.cmpi(arith.CmpIPredicate.slt, test, zero)
        return arith.select(before, zero, value)

    def nbytes(self, param: str) -> ir.Value:
        # records are counted in records too (the memref's shape)
        length = _length(self.value(param))
        return arith.muli(length, _const(as_dtype(self.types[param].dtype).itemsize))

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
            self.lower.link_external_item(_LINK_OBJECTS.get(item.symbol, self.cc, item.ltoir))
            if collected is not None and item.ltoir not in collected:
                collected.append(item.ltoir)


def _built(call: _Call) -> Built:
    """The provider of `call`, compiled in one unit with its kernel's other calls."""
    library = call.lower.context.active_code_library
    group = KERNEL_GROUPS.group(call.plan, call.cc, library)
    return build(call.plan, call.cc, CALLBACKS, together=group)


def _element(ty: Any, array: ir.Value, offset: ir.Value) -> ir.Value:
    """``&array[offset]`` of a 1-D array argument of type `ty` (generic address space)."""
    if isinstance(ty.dtype, types.Record):
        # a record array: a C-contiguous byte memref (the planner refuses other layouts)
        nbytes = arith.muli(offset, _const(as_dtype(ty.dtype).itemsize))
        return llvm_ptr_add_bytes(memref_data_pointer(array), nbytes)
    element = memref_to_llvm_ptr(array, [offset], get_storage_type(ty.dtype))
    return llvm.addrspacecast(_ptr(), element)


def _length(array: ir.Value) -> ir.Value:
    """``len(array)`` of a 1-D array, as a 64-bit integer."""
    return convert(memref.dim(array, arith.constant(_index(), 0)), _i64())


def _lower(name: str, lower: Any, target: Any, args: Any, kws: Any) -> None:
    call = _Call(name, lower, args, kws)
    built = _built(call)
    call.emit(built, emit_operands(call, call.plan, call.entry, call.spec.operands))
    if call.result is None:
        lower.store_var(target, None)
    elif call.is_record:
        lower.store_var(target, call.result)  # a record is a pointer to its bytes
    else:
        loaded = llvm_ptr_load(get_storage_type(call.value_ty), call.result)
        lower.store_var(target, storage_to_value(call.value_ty, loaded))


# ---------------------------------------------------------------------------
# kernels: the record arrays numba-cuda-mlir cannot lower


def _c_strides(shape: Sequence[int]) -> list[int]:
    """C-order strides of `shape`, counted in items."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


#: The arrays of records the planner has asked for, by the key it passes:
#: (where, shape, dtype, alignment), `where` ``"local"`` or ``"shared"``.
_ARRAYS: dict[str, tuple[str, tuple[int, ...], np.dtype[Any], int]] = {}
_arrays_lock = threading.Lock()
_shared_names = itertools.count()


def _array_key(where: str, shape: tuple[int, ...], dtype: np.dtype[Any], alignment: int) -> str:
    """The string literal naming an array of records for :func:`scan_record_array`."""
    key = f"{where}|{','.join(map(str, shape))}|{alignment}|{statefn.dtype_key(dtype)}"
    with _arrays_lock:
        _ARRAYS.setdefault(key, (where, shape, dtype, alignment))
    return key


def _with_space(memref_type: Any, space: Any) -> Any:
    t = ir.MemRefType(memref_type)
    return ir.MemRefType.get(list(t.shape), t.element_type, layout=t.layout, memory_space=space)


@extending.intrinsic  # type: ignore[untyped-decorator]
def scan_record_array(typingctx: Any, key: Any) -> Any:
    """``cuda.local.array`` or ``cuda.shared.array`` of records: bytes with the record's
    alignment, viewed as numba-cuda-mlir's record memref (shape and strides in records).

    `key` is the string literal :func:`_array_key` made (an intrinsic made while a
    kernel compiles would be unknown to that compile's typing).
    """
    if not isinstance(key, types.StringLiteral):
        return None
    with _arrays_lock:
        found = _ARRAYS.get(key.literal_value)
    if found is None:
        return None
    where, shape, dtype, alignment = found
    array_type = types.Array(from_dtype(dtype), len(shape), "C")
    nbytes = max(1, math.prod(shape)) * dtype.itemsize
    strides = _c_strides(shape)

    def codegen(lower: Any, target: Any, args: Any, kws: Any) -> None:
        i8 = ir.IntegerType.get_signless(8)
        space = None
        if where == "shared":
            space = ir.Attribute.parse("#gpu.address_space<workgroup>")
            raw_type = ir.MemRefType.get([nbytes], i8, memory_space=space)
            name = f"scan_record_shared_{next(_shared_names)}"
            with ir.InsertionPoint(lower.mlir_gpu_module.bodyRegion.blocks[0]):
                memref.global_(name, raw_type, sym_visibility="private", alignment=alignment)
            raw = memref.get_global(raw_type, name)
        else:
            with lower.alloca_insertion_point():
                raw = memref.alloca(ir.MemRefType.get([nbytes], i8), [], [], alignment=alignment)
        layout = ir.StridedLayoutAttr.get(offset=0, strides=strides)
        view = memref.reinterpret_cast(
            ir.MemRefType.get(list(shape), i8, layout=layout, memory_space=space),
            raw,
            [],
            [],
            [],
            static_offsets=[0],
            static_sizes=list(shape),
            static_strides=strides,
        )
        array = memref.cast(_with_space(lower.get_mlir_type(array_type), space), view)
        lower.store_var(target, array)

    return signature(array_type, key), codegen


def _is_c_record_array(ty: Any) -> bool:
    return (
        isinstance(ty, types.Array)
        and isinstance(ty.dtype, types.Record)
        and ty.layout == "C"
        and ty.ndim >= 2
    )


def _index_types(ty: Any) -> tuple[Any, ...] | None:
    """The integer types of an index (one integer or a tuple of them), else None."""
    items = tuple(ty.types) if isinstance(ty, types.BaseTuple) else (ty,)
    if all(isinstance(t, types.Integer) for t in items):
        return items
    return None


def _indices(lower: Any, var: Any, ty: Any) -> list[tuple[ir.Value, Any]]:
    value = lower.load_var(var)
    if isinstance(ty, types.BaseTuple):
        return list(zip(value, ty.types, strict=True))
    return [(value, ty)]


def _element_offset(
    lower: Any, array: ir.Value, indices: list[tuple[ir.Value, Any]]
) -> tuple[ir.Value, list[ir.Value], list[ir.Value], ir.Value]:
    """(items before the indexed part, sizes, strides, offset) of a C-contiguous record memref.

    Negative indices count from the end, as Numba's basic indexing does.
    """
    rank = ir.MemRefType(array.type).rank
    meta = memref.extract_strided_metadata(array)
    sizes = [convert(meta[2 + d], _i64()) for d in range(rank)]
    strides = list(meta[2 + rank : 2 + 2 * rank])
    linear = _const(0)
    for d, (value, ty) in enumerate(indices):
        idx = convert(value, _i64(), signed=getattr(ty, "signed", True))
        if getattr(ty, "signed", True):
            negative = arith.cmpi(arith.CmpIPredicate.slt, idx, _const(0))
            idx = arith.select(negative, arith.addi(idx, sizes[d]), idx)
        linear = arith.addi(arith.muli(linear, sizes[d]), idx)
    inner = _const(1)
    for d in range(len(indices), rank):
        inner = arith.muli(inner, sizes[d])
    return arith.muli(linear, inner), sizes, strides, meta[1]


@extending.intrinsic  # type: ignore[untyped-decorator]
def scan_record_index(typingctx: Any, array: Any, index: Any) -> Any:
    """``array[index]`` of a C-contiguous record array of two or more dimensions."""
    items = _index_types(index)
    if not _is_c_record_array(array) or items is None or len(items) > array.ndim:
        return None
    rest = array.ndim - len(items)
    result = array.dtype if rest == 0 else types.Array(array.dtype, rest, "C")
    itemsize = array.dtype.size

    def codegen(lower: Any, target: Any, args: Any, kws: Any) -> None:
        source = lower.load_var(args[0])
        before, sizes, strides, offset = _element_offset(
            lower, source, _indices(lower, args[1], index)
        )
        nbytes = arith.muli(before, _const(itemsize))
        if rest == 0:
            lower.store_var(target, llvm_ptr_add_bytes(memref_data_pointer(source), nbytes))
            return
        start = arith.addi(offset, arith.index_cast(_index(), nbytes))
        kept = range(len(items), array.ndim)
        view = memref.reinterpret_cast(
            lower.get_mlir_type(result),
            source,
            [start],
            [arith.index_cast(_index(), sizes[d]) for d in kept],
            [strides[d] for d in kept],
            static_offsets=[_DYNAMIC],
            static_sizes=[_DYNAMIC] * rest,
            static_strides=[_DYNAMIC] * rest,
        )
        lower.store_var(target, view)

    return signature(result, array, index), codegen


@extending.intrinsic  # type: ignore[untyped-decorator]
def scan_record_setitem(typingctx: Any, array: Any, index: Any, value: Any) -> Any:
    """``array[index] = value``: one record of a C-contiguous record array, field by field."""
    items = _index_types(index)
    if (
        not _is_c_record_array(array)
        or items is None
        or len(items) != array.ndim
        or value != array.dtype
    ):
        return None
    itemsize = array.dtype.size

    def codegen(lower: Any, target: Any, args: Any, kws: Any) -> None:
        source = lower.load_var(args[0])
        before, _, _, _ = _element_offset(lower, source, _indices(lower, args[1], index))
        dst = llvm_ptr_add_bytes(memref_data_pointer(source), arith.muli(before, _const(itemsize)))
        src = lower.load_var(args[2])
        for offset, ty in record_fields_of(array.dtype):
            storage = get_storage_type(ty)
            llvm.store(llvm.load(storage, field_pointer(src, offset)), field_pointer(dst, offset))
        lower.store_var(target, None)

    return signature(types.none, array, index, value), codegen


# ---------------------------------------------------------------------------
# the planner


def _definition(func_ir: Any, var: Any) -> Any:
    try:
        return func_ir.get_definition(var)
    except (KeyError, AttributeError):
        return None


def _constant(func_ir: Any, var: Any, depth: int = 0) -> Any:
    """The Python value of a global, free variable, constant, attribute chain or tuple of
    them (else raises LookupError)."""
    defn = _definition(func_ir, var) if isinstance(var, nir.Var) and depth < 8 else None
    if isinstance(defn, nir.Global | nir.FreeVar | nir.Const):
        return defn.value
    if isinstance(defn, nir.Expr) and defn.op == "getattr":
        return getattr(_constant(func_ir, defn.value, depth + 1), defn.attr)
    if isinstance(defn, nir.Expr) and defn.op == "build_tuple":
        return tuple(_constant(func_ir, item, depth + 1) for item in defn.items)
    raise LookupError


def _shape(value: object) -> tuple[int, ...] | None:
    shape = value if isinstance(value, tuple) else (value,)
    if shape and all(isinstance(n, int | np.integer) and not isinstance(n, bool) for n in shape):
        return tuple(int(n) for n in shape)
    return None


class _Rewriter:
    """The rewrites of one function (see the module docstring)."""

    def __init__(self, func_ir: Any, args: Sequence[Any]) -> None:
        self.func_ir = func_ir
        self.args = tuple(args)
        self.known: dict[int, Any] = {}  # id(defining expression) -> its Numba type

    def type_of(self, var: Any) -> Any:
        defn = _definition(self.func_ir, var)
        if isinstance(defn, nir.Arg) and defn.index < len(self.args):
            return self.args[defn.index]
        return self.known.get(id(defn))

    def global_var(self, blk: Any, body: list[Any], value: Any, loc: Any) -> Any:
        var = nir.Var(blk.scope, blk.scope.redefine("$scan_record", loc).name, loc)
        body.append(nir.Assign(nir.Global(getattr(value, "__name__", "f"), value, loc), var, loc))
        return var

    def array(self, expr: Any) -> str | None:
        """The key of ``cuda.local.array``/``cuda.shared.array`` of records (None: not one)."""
        try:
            fn = _constant(self.func_ir, expr.func)
        except (LookupError, AttributeError):
            return None
        where = {id(cuda.local.array): "local", id(cuda.shared.array): "shared"}
        if id(fn) not in where:
            return None
        params = ("shape", "dtype", "alignment")
        bound = dict(zip(params, expr.args, strict=False))
        bound.update(dict(expr.kws))
        if set(bound) - set(params) or "dtype" not in bound or "shape" not in bound:
            return None
        try:
            dtype = _constant(self.func_ir, bound["dtype"])
            shape = _shape(_constant(self.func_ir, bound["shape"]))
            alignment = _constant(self.func_ir, bound["alignment"]) if "alignment" in bound else 8
        except (LookupError, AttributeError):
            return None
        record = isinstance(dtype, np.dtype) and dtype.names is not None
        if not record or shape is None or 0 in shape:
            return None  # dynamic shared memory (shape 0) is numba-cuda-mlir's
        if alignment is None:
            alignment = 8
        if not isinstance(alignment, int) or alignment <= 0:
            return None
        dtype = np.dtype(dtype)
        self.known[id(expr)] = types.Array(from_dtype(dtype), len(shape), "C")
        return _array_key(where[id(fn)], shape, dtype, max(alignment, dtype.alignment))

    def index_count(self, index_var: Any, constant: object) -> int | None:
        """How many integers an index holds (None: not integers, or not known before typing)."""
        if constant is not None:
            items = constant if isinstance(constant, tuple) else (constant,)
            ok = all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in items)
            if ok or index_var is None:
                return len(items) if ok else None
            # not a constant after all (a static index Numba guessed): the variable decides
        defn = _definition(self.func_ir, index_var)
        if isinstance(defn, nir.Expr) and defn.op == "build_tuple":
            return len(defn.items)
        if isinstance(defn, nir.Global | nir.FreeVar | nir.Const):
            return None if defn.value is None else self.index_count(None, defn.value)
        if isinstance(defn, nir.Expr) and defn.op == "call":
            try:
                if _constant(self.func_ir, defn.func) is slice:
                    return None
            except (LookupError, AttributeError):
                pass
        return 1  # one integer, or a tuple typing finds (the intrinsic declines what is not)

    def getitem(self, expr: Any) -> tuple[Any, Any] | None:
        """(index var, result type) when `expr` indexes a record array numba-cuda-mlir cannot."""
        if expr.op not in ("getitem", "static_getitem"):
            return None
        ty = self.type_of(expr.value)
        if not _is_c_record_array(ty):
            return None
        constant = expr.index if expr.op == "static_getitem" else None
        var = expr.index_var if expr.op == "static_getitem" else expr.index
        if var is None:
            return None
        count = self.index_count(var, constant)
        if count is None or count > ty.ndim:
            return None
        rest = ty.ndim - count
        return var, (ty.dtype if rest == 0 else types.Array(ty.dtype, rest, "C"))

    def setitem(self, stmt: Any) -> Any:
        """The index var when `stmt` assigns one record of a record array numba-cuda-mlir cannot."""
        if not isinstance(stmt, nir.SetItem | nir.StaticSetItem):
            return None
        ty = self.type_of(stmt.target)
        if not _is_c_record_array(ty):
            return None
        static = isinstance(stmt, nir.StaticSetItem)
        var = stmt.index_var if static else stmt.index
        if var is None:
            return None
        count = self.index_count(var, stmt.index if static else None)
        return var if count == ty.ndim else None

    def run(self) -> bool:
        """Rewrite until nothing changes (a use may come before its definition's block)."""
        changed = False
        for _ in range(4):
            if not self.rewrite():
                break
            changed = True
        return changed

    def rewrite(self) -> bool:
        changed = False
        for blk in self.func_ir.blocks.values():
            body: list[Any] = []
            for stmt in blk.body:
                loc = stmt.loc
                if isinstance(stmt, nir.Assign) and isinstance(stmt.value, nir.Expr):
                    expr = stmt.value
                    if expr.op == "call" and (key := self.array(expr)) is not None:
                        func = self.global_var(blk, body, scan_record_array, loc)
                        name = blk.scope.redefine("$scan_record_key", loc).name
                        arg = nir.Var(blk.scope, name, loc)
                        body.append(nir.Assign(nir.Const(key, loc), arg, loc))
                        stmt.value = nir.Expr.call(func, (arg,), (), loc)
                        changed = True
                    elif (found := self.getitem(expr)) is not None:
                        index, result = found
                        self.known[id(expr)] = result
                        func = self.global_var(blk, body, scan_record_index, loc)
                        stmt.value = nir.Expr.call(func, (expr.value, index), (), loc)
                        changed = True
                elif (index := self.setitem(stmt)) is not None:
                    func = self.global_var(blk, body, scan_record_setitem, loc)
                    done = nir.Var(blk.scope, blk.scope.redefine("$scan_record_set", loc).name, loc)
                    call = nir.Expr.call(func, (stmt.target, index, stmt.value), (), loc)
                    stmt = nir.Assign(call, done, loc)
                    changed = True
                body.append(stmt)
            blk.body = body
        return changed


def _calls_scan(func_ir: Any) -> bool:
    """Whether the function calls :mod:`scan.block` (the facts planner marked the calls)."""
    for blk in func_ir.blocks.values():
        for stmt in blk.body:
            expr = getattr(stmt, "value", None)
            if (
                isinstance(expr, nir.Expr)
                and expr.op == "call"
                and any(k == HIDDEN_KW for k, _ in expr.kws)
            ):
                return True
    return False


@extending.register_planner
class RecordArrays(extending.WholeFunctionPlanner):  # type: ignore[misc]
    """Arrays of records numba-cuda-mlir 0.6 cannot lower (local and shared arrays, integer
    indices into N-D arrays), rewritten in functions that call :mod:`scan.block`."""

    def run(self) -> bool:
        func_ir = self.state.func_ir
        if not _calls_scan(func_ir):
            return False
        return _Rewriter(func_ir, getattr(self.state, "args", ()) or ()).run()


def _register(name: str) -> None:
    def lower_call(lower: Any, target: Any, args: Any, kws: Any) -> None:
        _lower(name, lower, target, args, kws)

    extending.lower_builtin(FUNCTIONS[name], types.VarArg(types.Any))(lower_call)


for _name in FUNCTIONS:
    _register(_name)
