# SPDX-License-Identifier: Apache-2.0
"""User callbacks compiled by numba-cuda behind the pointer ABI (:func:`lower`).

The symbol and declaration are :func:`statefn.pointer_abi`'s; the definition
is LTO-IR that numba-cuda compiles for an explicit compute capability.
Results are memoised in the process and the same
:class:`statefn.LoweredCallback` object is returned for equal requests, so
callers may deduplicate link inputs by identity.

A callback may call ``@cuda.jit(device=True)`` functions (and ``@numba.njit``
ones), named by globals, closure variables or module attributes: they are
compiled for the requested compute capability, with or without a GPU
(:class:`_Helpers`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading
from collections.abc import Iterable, Iterator
from types import CellType, FunctionType, ModuleType
from typing import Any, cast

import numpy as np
import numpy.typing as npt

import statefn

from ._compat import declared_signatures_only, struct_value

__all__ = ["HELPER_MODULES", "helpers_of", "link_helpers", "lower"]

_MEMO: dict[tuple[str, str, str, str, tuple[int, int]], statefn.LoweredCallback] = {}
_LOCK = threading.Lock()

#: numba-cuda's modules of C++ helper functions (its float16 and bfloat16
#: arithmetic): their lowering writes each helper's source into the module's
#: ``shim_stream`` and links the module's ``shim_obj``, which numba-cuda
#: compiles when it links the kernel.
HELPER_MODULES = ("numba.cuda._internal.cuda_fp16", "numba.cuda._internal.cuda_bf16")
# the helpers each lowered callback calls, by its symbol
_HELPERS: dict[str, tuple[tuple[str, str, str], ...]] = {}


@contextlib.contextmanager
def _recording_helpers() -> Iterator[list[tuple[str, str, str]]]:
    """The C++ helpers numba-cuda's lowering asks for while a callback compiles.

    A callback compiled on its own (``cuda.compile``) leaves numba-cuda's
    helper object out; the kernel that calls it must link it instead, holding
    the callback's helpers, also in a process that fetched the callback from
    the cache. So the helpers' (module, name, source) are recorded here, and
    :func:`link_helpers` writes them into the kernel's helper object.
    """
    found: list[tuple[str, str, str]] = []
    patched = []
    for name in HELPER_MODULES:
        stream: Any = getattr(importlib.import_module(name), "shim_stream", None)
        write = getattr(stream, "write_with_key", None)
        if write is None:
            continue

        def record(key: str, source: str, _name: str = name, _write: Any = write) -> None:
            found.append((_name, key, source))
            _write(key, source)

        stream.write_with_key = record
        patched.append(stream)
    try:
        yield found
    finally:
        for stream in patched:
            del stream.write_with_key  # the class's method again


def helpers_of(symbol: str) -> tuple[tuple[str, str, str], ...]:
    """The C++ helpers (module, name, source) the callback lowered as `symbol` calls."""
    return _HELPERS.get(symbol, ())


def link_helpers(library: Any, helpers: Iterable[tuple[str, str, str]]) -> None:
    """Make `library` (a kernel's code library) link numba-cuda's helper objects for `helpers`.

    Each helper's source goes into its module's helper stream (once: numba-cuda
    keys the stream's entries), and the module's helper object joins the
    kernel's link inputs (a set: once per kernel, with the kernel's own uses).
    """
    for module_name, key, source in helpers:
        module = importlib.import_module(module_name)
        module.shim_stream.write_with_key(key, source)
        library.add_linking_file(module.shim_obj)


def lower(
    descriptor: statefn.Descriptor, value_dtype: npt.DTypeLike, *, cc: tuple[int, int]
) -> statefn.LoweredCallback:
    """Compile *descriptor* for *value_dtype* and *cc* to the pointer ABI (memoised).

    Parameters
    ----------
    descriptor : StatefulFunction, StatelessFunction or ScanOperator
        A user callback. Built-in scan operators are not lowered.
    value_dtype : dtype-like
        The dtype of the scanned values (one of :data:`statefn.STATE_DTYPES`).
    cc : tuple of int
        Target compute capability, e.g. ``(9, 0)``. Always explicit: asking
        the device would need a GPU.

    Returns
    -------
    LoweredCallback
        The same object for repeated equal requests in one process.

    Raises
    ------
    RoleError
        For a built-in :class:`ScanOperator` (CUB supplies it).
    StateDtypeError
        For an unsupported *value_dtype*.
    CallbackCompileError
        When Numba cannot compile the callback for these dtypes.

    .. versionadded:: 0.1
    """
    if isinstance(descriptor, statefn.ScanOperator) and descriptor.builtin is not None:
        raise statefn.RoleError(
            f"built-in scan operator {descriptor.builtin!r} has no device function to "
            "lower; expected a user callback. The C++ side uses CUB's functor for it: "
            "check ScanOperator.is_builtin before lowering."
        )
    if not isinstance(
        descriptor, statefn.StatefulFunction | statefn.StatelessFunction | statefn.ScanOperator
    ):
        raise TypeError(
            f"lower() takes a statefn descriptor; got {type(descriptor).__qualname__}. "
            "Call statefn.normalize() first."
        )
    abi = statefn.callback_abi(descriptor, value_dtype, cc=cc)
    with _LOCK:
        found = _MEMO.get(abi.key)
        if found is not None:
            return found
        with _recording_helpers() as helpers:
            ltoir = _compile(descriptor, abi)
        _HELPERS[abi.symbol] = tuple(dict.fromkeys(helpers))
        lowered = statefn.LoweredCallback(
            symbol=abi.symbol,
            c_decl=abi.c_decl,
            ltoir=ltoir,
            kind=abi.kind,
            value_dtype=abi.value_dtype,
            state_dtype=abi.state_dtype,
        )
        _MEMO[abi.key] = lowered
        return lowered


def _renamed(fn: FunctionType, qualname: str, cc: tuple[int, int]) -> FunctionType:
    """A copy of *fn* under a unique qualified name, its device functions compiled for *cc*.

    Numba names the internal (``linkonce_odr``) functions it emits after the
    Python qualname plus a per-process counter. Two callbacks compiled in
    different processes could otherwise carry equal internal names with
    different bodies, and the linker would keep only one of them. The
    ``@cuda.jit(device=True)`` functions the copy calls are renamed the same
    way (:class:`_Helpers`).
    """
    return _Helpers(qualname, cc).copy(fn, qualname)


class _Helpers:
    """Copies of the device functions a callback calls, compiled for an explicit *cc*.

    numba-cuda compiles a ``@cuda.jit(device=True)`` function called from
    another for the current device (``CUDADispatcher.compile_device`` asks the
    driver for its compute capability): without a GPU a callback calling one
    could not compile at all, and with one its helpers would be compiled for
    that GPU rather than the requested *cc*. The callback's copy calls copies
    of its helpers instead (found in cloned globals and closure cells, helpers
    of helpers included), dispatchers that compile for *cc* under a name unique
    to the callback. The user's functions and dispatchers are left untouched.
    """

    def __init__(self, prefix: str, cc: tuple[int, int]) -> None:
        self.prefix = prefix
        self.cc = cc
        self.copies: dict[int, Any] = {}  # id(original dispatcher) -> its copy

    def copy(self, fn: FunctionType, qualname: str) -> FunctionType:
        """*fn* under *qualname*, naming the helpers' copies instead of the helpers."""
        names = _global_names(fn.__code__)
        globals_ = fn.__globals__
        swapped = {n: self.replacement(globals_[n], names) for n in names if n in globals_}
        swapped = {n: v for n, v in swapped.items() if v is not globals_[n]}
        if swapped:
            globals_ = {**globals_, **swapped}
        closure = fn.__closure__
        if closure is not None:
            cells = [(c, self.replacement(_cell_value(c), names)) for c in closure]
            if any(new is not _cell_value(c) for c, new in cells):
                closure = tuple(c if new is _cell_value(c) else CellType(new) for c, new in cells)
        clone = FunctionType(fn.__code__, globals_, fn.__name__, fn.__defaults__, closure)
        clone.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
        clone.__qualname__ = qualname
        clone.__module__ = fn.__module__
        return clone

    def replacement(self, value: Any, names: set[str]) -> Any:
        """What a copy names instead of *value*: a helper's copy; a module whose
        attributes among *names* are helpers (``helpers.scale(x)``), with them
        replaced; else *value* itself."""
        if _is_dispatcher(value):
            return self.helper(value)
        if not isinstance(value, ModuleType):
            return value
        found = self.copies.get(id(value))
        if found is not None:
            return found
        self.copies[id(value)] = value  # while looking inside: cycles of imports end here
        namespace = vars(value)
        swapped = {n: self.replacement(namespace[n], names) for n in names if n in namespace}
        swapped = {n: v for n, v in swapped.items() if v is not namespace[n]}
        if swapped:
            clone = ModuleType(value.__name__, value.__doc__)
            vars(clone).update({**namespace, **swapped})
            self.copies[id(value)] = clone
        return self.copies[id(value)]

    def helper(self, dispatcher: Any) -> Any:
        """The copy of *dispatcher* that compiles for ``self.cc`` (one per original)."""
        found = self.copies.get(id(dispatcher))
        if found is not None:
            return found
        cls = _offline_dispatcher()
        options = dict(dispatcher.targetoptions)
        options["device"] = True
        copy = cls.__new__(cls)
        copy.cc = self.cc
        self.copies[id(dispatcher)] = copy  # before copying the body: recursion finds it
        fn = dispatcher.py_func
        cls.__init__(copy, self.copy(fn, f"{self.prefix}__{fn.__qualname__}"), options)
        if _is_cuda_dispatcher(dispatcher) and declared_signatures_only(dispatcher):
            # declared with signatures: keeps them, and casts its arguments to them
            for cres in list(dispatcher.overloads.values()):
                copy.compile_device(tuple(cres.signature.args), cres.signature.return_type)
            copy.disable_compile()
        return copy


def _global_names(code: Any) -> set[str]:
    """The global names *code* and the functions defined in it may load."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def _cell_value(cell: CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _is_dispatcher(value: Any) -> bool:
    """Whether *value* is a Numba dispatcher that numba-cuda compiles as a device function."""
    if value is None or not hasattr(value, "py_func") or not hasattr(value, "targetoptions"):
        return False
    from numba.core.dispatcher import Dispatcher
    from numba.cuda.dispatcher import CUDADispatcher

    # numba-cuda compiles a CPU dispatcher (@numba.njit) called from device code
    # as a device function of its py_func too
    return isinstance(value, CUDADispatcher | Dispatcher)


def _is_cuda_dispatcher(value: Any) -> bool:
    from numba.cuda.dispatcher import CUDADispatcher

    return isinstance(value, CUDADispatcher)


@functools.cache
def _offline_dispatcher() -> Any:
    """``CUDADispatcher`` whose device compilations target its ``cc`` attribute."""
    from numba.cuda.compiler import compile_cuda
    from numba.cuda.dispatcher import CUDADispatcher

    class OfflineDispatcher(CUDADispatcher):  # type: ignore[misc]
        cc: tuple[int, int]

        def compile_device(self, args: Any, return_type: Any = None) -> Any:
            found = self.overloads.get(args)
            if found is not None:
                return found
            opts = self.targetoptions
            with self._compiling_counter:
                cres = compile_cuda(
                    self.py_func,
                    return_type,
                    args,
                    debug=opts.get("debug"),
                    lineinfo=opts.get("lineinfo"),
                    forceinline=opts.get("forceinline"),
                    inline=opts.get("inline", "never"),
                    fastmath=opts.get("fastmath"),
                    nvvm_options={
                        "opt": 3 if opts.get("opt") else 0,
                        "fastmath": opts.get("fastmath"),
                        **({"g": None} if opts.get("debug") else {}),
                    },
                    cc=self.cc,
                )
            self.overloads[args] = cres
            cres.target_context.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            return cres

    return OfflineDispatcher


def _omitted_defaults(fn: FunctionType) -> list[Any]:
    """Defaults of the parameters the ABI never passes, in parameter order."""
    code = fn.__code__
    values = list(fn.__defaults__ or ())
    kwdefaults = fn.__kwdefaults__ or {}
    start = code.co_argcount
    values += [
        kwdefaults[name] for name in code.co_varnames[start : start + code.co_kwonlyargcount]
    ]
    return values


class _BadResultError(Exception):
    """Raised while lowering: the callback's result cannot be a scan value."""

    def __init__(self, returned: str) -> None:
        super().__init__(returned)
        self.returned = returned


def _bad_result(exc: BaseException | None) -> _BadResultError | None:
    """The :class:`_BadResultError` that *exc* wraps (Numba wraps errors raised in lowering)."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, _BadResultError):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _check_result(got: Any, *, record: bool, complex_values: bool = True) -> None:
    """Refuse a callback result type that cannot become a value (:func:`statefn.result_error`)."""
    from numba.cuda import types

    returned = statefn.result_kind(got, types, record=record, complex_values=complex_values)
    if returned is not None:
        raise _BadResultError(returned)


def _compile(descriptor: statefn.Descriptor, abi: statefn.CallbackABI) -> bytes:
    # mypy binds a FunctionType attribute as a method; it is a plain attribute here
    fn = cast(FunctionType, abi.function)
    kind, cc, symbol = abi.kind, abi.cc, abi.symbol
    value_dt, state_dt = abi.value_dtype, abi.state_dtype
    value_record = value_dt.names is not None
    try:
        if value_record or (state_dt is not None and state_dt.names is not None):
            return _compile_numba_records(kind, fn, value_dt, state_dt, cc, symbol)
        return _compile_numba(kind, fn, value_dt, state_dt, cc, symbol)
    except Exception as exc:
        bad = _bad_result(exc)
        if bad is not None:
            raise statefn.result_error(descriptor, bad.returned, value_dt) from None
        dtypes = f"value dtype {statefn.dtype_name(value_dt)}" + (
            f", state dtype {statefn.dtype_name(state_dt)}" if state_dt is not None else ""
        )
        if any(cls.__name__ == "CudaSupportError" for cls in type(exc).__mro__):
            advice = (
                "The callback calls a function that numba-cuda compiles for the current "
                "device, which needs a GPU: not a @cuda.jit(device=True) helper named by a "
                "global, closure variable or module attribute (those are compiled for the "
                "requested cc) but, for example, a NumPy function numba-cuda implements in "
                "Python such as np.clip. Write it with operators and math functions (e.g. "
                "min(max(x, lo), hi) for np.clip), or compile on a machine with a GPU."
            )
        elif value_record:
            advice = (
                "Check that the function compiles in a CUDA kernel with these operand "
                "types: record operands arrive as named tuples of the record's fields "
                f"({', '.join(f.name for f in statefn.record_fields(value_dt))}), the state is a "
                "one-item array, and the result must be a tuple of as many numbers "
                "(return (x, y), not a record such as state[0])."
            )
        else:
            advice = (
                "Check that the function compiles in a CUDA kernel with these operand "
                "types (the state is a one-item array; the result is cast to the value "
                "dtype)."
            )
        raise statefn.CallbackCompileError(
            f"could not compile {kind} callback {abi.label} for {dtypes} (cc {cc[0]}.{cc[1]}): "
            f"{type(exc).__name__}: {exc}\n{advice}"
        ) from exc


def _compile_numba(
    kind: str,
    fn: FunctionType,
    value_dt: np.dtype[Any],
    state_dt: np.dtype[Any] | None,
    cc: tuple[int, int],
    symbol: str,
) -> bytes:
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.extending import intrinsic
    from numba.cuda.np.arrayobj import populate_array
    from numba.cuda.np.numpy_support import from_dtype
    from numba.cuda.typing.templates import signature

    user_op = _renamed(fn, f"{symbol}__op", cc)
    defaults = _omitted_defaults(fn)
    omitted = [types.Omitted(value) for value in defaults]
    VT = from_dtype(value_dt)
    ptr_v = types.CPointer(VT)

    def call_user(context: Any, builder: Any, arg_types: list[Any], args: list[Any]) -> Any:
        # compile_subroutine(caching=False): Numba's internal cache keys on the
        # code object and closure only, so functions differing in defaults or
        # globals would otherwise share one compiled body.
        # The return type is inferred, checked, then cast to the value type.
        declared = signature(None, *arg_types, *omitted)
        cres = context.compile_subroutine(builder, user_op, declared, caching=False)
        got = cres.signature.return_type
        _check_result(got, record=False, complex_values=value_dt.kind == "c")
        filler = [context.get_dummy_value() for _ in omitted]
        out = context.call_internal(builder, cres.fndesc, cres.signature, [*args, *filler])
        return context.cast(builder, out, got, VT)

    if kind == "stateful":
        assert state_dt is not None
        ST = from_dtype(state_dt)
        ARR = types.Array(ST, 1, "C")

        @intrinsic  # type: ignore[untyped-decorator]
        def call_stateful(typingctx: Any, state_ptr: Any, agg: Any) -> Any:
            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                ptr, aggv = args
                ary = context.make_array(ARR)(context, builder)
                itemsize = context.get_abi_sizeof(context.get_data_type(ST))
                one = context.get_constant(types.intp, 1)
                size = context.get_constant(types.intp, itemsize)
                populate_array(
                    ary, data=ptr, shape=[one], strides=[size], itemsize=size, meminfo=None
                )
                return call_user(context, builder, [ARR, VT], [struct_value(ary), aggv])

            return signature(VT, state_ptr, agg), codegen

        def stateful_wrapper(result: Any, state: Any, agg: Any) -> int:
            result[0] = call_stateful(state, agg[0])
            return 0

        wrapper: Any = stateful_wrapper
        argtypes: tuple[Any, ...] = (ptr_v, types.CPointer(ST), ptr_v)
    elif kind == "stateless":

        @intrinsic  # type: ignore[untyped-decorator]
        def call_stateless(typingctx: Any, agg: Any) -> Any:
            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                return call_user(context, builder, [VT], list(args))

            return signature(VT, agg), codegen

        def stateless_wrapper(result: Any, agg: Any) -> int:
            result[0] = call_stateless(agg[0])
            return 0

        wrapper = stateless_wrapper
        argtypes = (ptr_v, ptr_v)
    else:

        @intrinsic  # type: ignore[untyped-decorator]
        def call_binary(typingctx: Any, lhs: Any, rhs: Any) -> Any:
            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                return call_user(context, builder, [VT, VT], list(args))

            return signature(VT, lhs, rhs), codegen

        def binary_wrapper(result: Any, lhs: Any, rhs: Any) -> int:
            result[0] = call_binary(lhs[0], rhs[0])
            return 0

        wrapper = binary_wrapper
        argtypes = (ptr_v, ptr_v, ptr_v)

    wrapper.__qualname__ = symbol
    wrapper.__name__ = symbol
    ltoir, _ = cuda.compile(
        wrapper,
        types.int32(*argtypes),
        device=True,
        abi="c",
        abi_info={"abi_name": symbol},
        output="ltoir",
        cc=cc,
    )
    return bytes(ltoir)


# ---------------------------------------------------------------------------
# records: operands as named tuples, results as tuples, every pointer a void*


def _compile_numba_records(
    kind: str,
    fn: FunctionType,
    value_dt: np.dtype[Any],
    state_dt: np.dtype[Any] | None,
    cc: tuple[int, int],
    symbol: str,
) -> bytes:
    """The pointer ABI where the value or the state is a record.

    Every operand is a ``void*``. A record value is loaded field by field into
    a named tuple (:func:`statefn.record_tuple`) before the user's function sees it;
    its result is cast to that tuple type (so a plain tuple of numbers of any
    numeric types fits) and stored field by field at the record's offsets.
    """
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.extending import intrinsic
    from numba.cuda.np.arrayobj import populate_array
    from numba.cuda.np.numpy_support import from_dtype
    from numba.cuda.typing.templates import signature
    from numba.cuda.typing.typeof import typeof

    user_op = _renamed(fn, f"{symbol}__op", cc)
    omitted = [types.Omitted(value) for value in _omitted_defaults(fn)]
    record = value_dt.names is not None
    if record:
        fields = statefn.record_fields(value_dt)
        field_tys = [from_dtype(f.dtype) for f in fields]
        VT = typeof(statefn.record_tuple(value_dt)(*(f.dtype.type(0) for f in fields)))
        # what the user's function returns is cast to this plain tuple type
        RT = types.Tuple(field_tys)
    else:
        VT = RT = from_dtype(value_dt)
    i8p = ir_pointer()

    def field_ptr(context: Any, builder: Any, ptr: Any, offset: int, ty: Any) -> Any:
        raw = builder.gep(builder.bitcast(ptr, i8p), [context.get_constant(types.intp, offset)])
        return builder.bitcast(raw, context.get_data_type(ty).as_pointer())

    def load_value(context: Any, builder: Any, ptr: Any) -> Any:
        if not record:
            return builder.load(builder.bitcast(ptr, context.get_data_type(VT).as_pointer()))
        items = [
            builder.load(field_ptr(context, builder, ptr, f.offset, ty))
            for f, ty in zip(fields, field_tys, strict=True)
        ]
        return context.make_tuple(builder, VT, items)

    def store_value(context: Any, builder: Any, value: Any, ptr: Any) -> None:
        if not record:
            builder.store(value, builder.bitcast(ptr, context.get_data_type(VT).as_pointer()))
            return
        for i, (f, ty) in enumerate(zip(fields, field_tys, strict=True)):
            item = builder.extract_value(value, i)
            builder.store(item, field_ptr(context, builder, ptr, f.offset, ty))

    def call_user(context: Any, builder: Any, arg_types: list[Any], args: list[Any]) -> Any:
        # the return type is inferred (a named tuple does not convert to a
        # plain tuple type in typing), then cast to RT field by field
        declared = signature(None, *arg_types, *omitted)
        cres = context.compile_subroutine(builder, user_op, declared, caching=False)
        sig = cres.signature
        got = sig.return_type
        _check_result(got, record=record)
        if record and len(got) != len(fields):
            raise _BadResultError(f"a tuple of {len(got)} items")
        filler = [context.get_dummy_value() for _ in omitted]
        out = context.call_internal(builder, cres.fndesc, sig, [*args, *filler])
        if not record:
            return context.cast(builder, out, got, RT)
        items = [
            context.cast(builder, builder.extract_value(out, i), got[i], ty)
            for i, ty in enumerate(field_tys)
        ]
        return context.make_tuple(builder, RT, items)

    def state_array(context: Any, builder: Any, ptr: Any) -> tuple[Any, Any]:
        assert state_dt is not None
        ST = from_dtype(state_dt)
        ARR = types.Array(ST, 1, "C")
        ary = context.make_array(ARR)(context, builder)
        data_ty = context.get_data_type(ST)
        size = context.get_constant(types.intp, context.get_abi_sizeof(data_ty))
        populate_array(
            ary,
            data=builder.bitcast(ptr, data_ty.as_pointer()),
            shape=[context.get_constant(types.intp, 1)],
            strides=[size],
            itemsize=size,
            meminfo=None,
        )
        return ARR, struct_value(ary)

    n_operands = {"stateful": 2, "stateless": 1, "scan_op": 2}[kind]

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        result, *operands = args
        if kind == "stateful":
            arr_ty, arr = state_array(context, builder, operands[0])
            arg_types, values = [arr_ty, VT], [arr, load_value(context, builder, operands[1])]
        else:
            arg_types = [VT] * len(operands)
            values = [load_value(context, builder, p) for p in operands]
        out = call_user(context, builder, arg_types, values)
        store_value(context, builder, out, result)
        return context.get_constant(types.int32, 0)

    wrapper: Any
    if n_operands == 1:

        @intrinsic  # type: ignore[untyped-decorator]
        def call_record1(typingctx: Any, result: Any, a: Any) -> Any:
            return signature(types.int32, result, a), codegen

        def wrapper1(result: Any, a: Any) -> int:
            return call_record1(result, a)  # type: ignore[no-any-return]

        wrapper = wrapper1
    else:

        @intrinsic  # type: ignore[untyped-decorator]
        def call_record2(typingctx: Any, result: Any, a: Any, b: Any) -> Any:
            return signature(types.int32, result, a, b), codegen

        def wrapper2(result: Any, a: Any, b: Any) -> int:
            return call_record2(result, a, b)  # type: ignore[no-any-return]

        wrapper = wrapper2
    wrapper.__qualname__ = symbol
    wrapper.__name__ = symbol
    ltoir, _ = cuda.compile(
        wrapper,
        types.int32(*([types.voidptr] * (n_operands + 1))),
        device=True,
        abi="c",
        abi_info={"abi_name": symbol},
        output="ltoir",
        cc=cc,
    )
    return bytes(ltoir)


def ir_pointer() -> Any:
    """``i8*`` in llvmlite."""
    from llvmlite import ir

    return ir.IntType(8).as_pointer()
