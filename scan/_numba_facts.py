# SPDX-License-Identifier: Apache-2.0
"""The core both Numba-based front ends share: IR facts, types as plan facts, typed plans.

numba-cuda and numba-cuda-mlir type kernels with the same Numba type system
and IR, each from its own copy of the modules. A front end describes its copy
once and gets the rest from here, so both read the same facts from a kernel,
accept and refuse the same calls with the same messages, and remember the
same plans:

* :class:`IRFacts` (its IR classes and ``cuda`` module): the facts a call's
  types do not carry, read from the kernel's IR before type inference (the
  literal lengths of local arrays, where ``prefix_state`` lives), and the
  callback globals pinned for the compilation;
* :class:`NumbaFacts` (its ``types`` module, its ``as_dtype``): the
  converters :func:`scan._calls.collect_facts` takes, one per argument role,
  the types of descriptors and refused callables, the type of a call's
  result, and the Numba type of the library's functions, which carries a
  rejection (:class:`Rejection`) out of Numba's template loop to the user;
* :class:`TypedPlans`: each typed call's plan, for the lowering of the same
  call, and the kernel groups of the build layer;
* the codec of the hidden keyword carrying the IR facts to the typing.

Nothing here imports Numba.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs
import numpy as np

import statefn

from ._build import KernelGroups
from ._calls import CALLS, MISSING, Converter, Role, boolean_operand
from ._errors import PlanError, ScanTypeError
from ._plan import ArrayFact, Block, Operand, ScalarFact, TupleFact, ZipFact, resolve_block
from ._primitives import for_plan
from ._target import check_cc
from ._vocab import bfloat16

__all__ = [
    "CompileRequest",
    "IRFacts",
    "LinkObjects",
    "NumbaFacts",
    "Refused",
    "Rejection",
    "TypedPlans",
    "as_descriptor",
    "compile_request",
    "decode_call_facts",
    "decode_call_values",
    "encode_call_facts",
    "pin_callback",
    "typeof_status",
    "typing_root",
]

_EXAMPLES = {
    "threads": "128",
    "items_per_thread": "4",
    "algorithm": "'raking'",
    "mode": "'inclusive'",
    "auto_sync": "False",
    "dtype": "np.int64",
}


class Refused:
    """A plain function offered as a callback that :func:`statefn.normalize` refuses.

    Typed as the front end's refused-callable type, so planning raises the
    refusal with the planner's words, as in the simulator.
    """

    def __init__(self, obj: Any) -> None:
        self.obj = obj


def as_descriptor(obj: Any, role: str) -> Any:
    """The descriptor a front end types instead of a plain function passed as a callback.

    Numba cannot type a plain Python function (or lambda) named in a kernel;
    the scans accept one as a callback (``statefn.normalize`` makes it a
    stateless callback or a scan operator), so the front ends swap the global
    for its descriptor before type inference.
    """
    try:
        return statefn.normalize(obj, role=role)  # type: ignore[call-overload]
    except statefn.StatefnError:
        return Refused(obj)


_MEMORY = "@memory"
_LAUNCH = "@launch"
_VALUE = "@value"


def encode_call_facts(
    lengths: Mapping[str, int],
    memory: Mapping[str, str] | None = None,
    launch: str | None = None,
    values: Mapping[str, float] | None = None,
) -> str:
    """The hidden literal keyword's text: what a front end's IR pass learns of one call.

    *lengths*: the literal length of each local-array operand, by parameter;
    *memory*: where an array lives (``"shared"``, ...), by parameter;
    *launch*: the launch's block shape as ``"x,y,z"`` when the pass knows it;
    *values*: the numbers written as constants for scalar operands
    (``oob_default=1e6``), by parameter.
    :func:`decode_call_facts` and :func:`decode_call_values` read it back;
    both front ends use this one codec.
    """
    items = [f"{name}={n}" for name, n in lengths.items()]
    items += [f"{name}{_MEMORY}={where}" for name, where in (memory or {}).items()]
    items += [f"{name}{_VALUE}={float(v)!r}" for name, v in (values or {}).items()]
    if launch:
        items.append(f"{_LAUNCH}={launch}")
    return ";".join(items)


def decode_call_values(text: object) -> dict[str, float]:
    """The constant scalar operands :func:`encode_call_facts`'s text names, by parameter."""
    values: dict[str, float] = {}
    if isinstance(text, str):
        for item in filter(None, text.split(";")):
            key, _, value = item.partition("=")
            if key.endswith(_VALUE):
                values[key.removesuffix(_VALUE)] = float(value)
    return values


def decode_call_facts(text: object) -> tuple[dict[str, int], dict[str, str], Block | None]:
    """``(lengths, memory, launch)`` from :func:`encode_call_facts`'s text (empty for none)."""
    lengths: dict[str, int] = {}
    memory: dict[str, str] = {}
    launch: Block | None = None
    if isinstance(text, str):
        for item in filter(None, text.split(";")):
            key, _, value = item.partition("=")
            if key == _LAUNCH:
                x, y, z = (int(v) for v in value.split(","))
                launch = (x, y, z)
            elif key.endswith(_MEMORY):
                memory[key.removesuffix(_MEMORY)] = value
            elif key.endswith(_VALUE):
                continue  # decode_call_values
            else:
                lengths[key] = int(value)
    return lengths, memory, launch


def typing_root(context: Any) -> object:
    """The outermost function a Numba typing context is typing, or None.

    Numba keeps the functions being typed on its typing context's call stack
    (``context.callstack``, a sequence whose item 0 is the innermost, in both
    front ends' Numba copies); the outermost is the kernel whose compilation
    this typing belongs to.
    """
    stack = getattr(context, "callstack", None)
    if not stack:
        return None
    return stack[len(stack) - 1]


def pin_callback(value: Any, role: str, memo: dict[int, tuple[Any, Any]]) -> Any:
    """The value a kernel's callback global holds for one compilation of the kernel.

    A plain function becomes its descriptor (:func:`as_descriptor`); a
    descriptor is pinned (:meth:`statefn.StatefulFunction.pinned`), so its key
    is computed once per compilation, however many calls name it. *memo* is
    the compilation's own (object id -> (object, value)); other values are
    returned as they are.
    """
    found = memo.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    if inspect.isfunction(value):
        pinned = as_descriptor(value, role)
    elif isinstance(
        value, statefn.StatefulFunction | statefn.StatelessFunction | statefn.ScanOperator
    ):
        pinned = value
    else:
        return value
    if not isinstance(pinned, Refused):
        pinned = pinned.pinned()
    memo[id(value)] = (value, pinned)
    return pinned


# ---------------------------------------------------------------------------
# facts read from the kernel's IR


@attrs.frozen
class IRFacts:
    """One front end's Numba IR, and the facts of a call read from it.

    Attributes
    ----------
    var, global_, expr, arg, const, assign : tuple of type
        The IR's classes of variables, globals and free variables,
        expressions, arguments, constants and assignments.
    local_array, shared_array : callable
        The front end's ``cuda.local.array`` and ``cuda.shared.array``.
    functions : mapping of int to str
        The library's functions (by object id) and their names.
    hidden : str
        The hidden keyword the front end adds to each call.
    """

    var: tuple[type[Any], ...]
    global_: tuple[type[Any], ...]
    expr: tuple[type[Any], ...]
    arg: tuple[type[Any], ...]
    const: tuple[type[Any], ...]
    assign: tuple[type[Any], ...]
    local_array: Any
    shared_array: Any
    functions: Mapping[int, str]
    hidden: str

    def definition(self, func_ir: Any, var: Any) -> Any:
        """The single definition of a variable, or None."""
        try:
            return func_ir.get_definition(var)
        except (KeyError, AttributeError):
            return None

    def resolve(self, func_ir: Any, var: Any, depth: int = 0) -> Any:
        """The Python object a variable denotes (globals and attribute chains).

        Raises LookupError (or AttributeError) when it denotes none.
        """
        if depth > 8 or not isinstance(var, self.var):
            raise LookupError
        defn = self.definition(func_ir, var)
        if isinstance(defn, self.global_):
            return defn.value
        if isinstance(defn, self.expr) and defn.op == "getattr":
            return getattr(self.resolve(func_ir, defn.value, depth + 1), defn.attr)
        raise LookupError

    def allocation(
        self, func_ir: Any, var: Any, kernel: bool, depth: int = 0
    ) -> tuple[str | None, Any]:
        """(memory space, the allocating call) of the array a variable denotes.

        ``local`` and ``shared`` for ``cuda.local.array`` / ``cuda.shared.array``
        calls (the call itself only when the variable is the allocation, not an
        item or slice of it), ``global`` for a kernel's argument; None when the
        definition cannot be followed (several definitions, a device
        function's parameter, a value returned by a call).
        """
        defn = self.definition(func_ir, var)
        if isinstance(defn, self.arg):
            return ("global" if kernel else None), None
        if not isinstance(defn, self.expr) or depth > 8:
            return None, None
        if defn.op in ("getitem", "static_getitem"):
            return self.allocation(func_ir, defn.value, kernel, depth + 1)[0], None
        if defn.op != "call":
            return None, None
        try:
            fn = self.resolve(func_ir, defn.func)
        except (LookupError, AttributeError):
            return None, None
        if fn is self.local_array:
            return "local", defn
        if fn is self.shared_array:
            return "shared", defn
        return None, None

    def static_length(self, func_ir: Any, call: Any) -> int | None:
        """The literal length of a 1-D allocation call (``cuda.local.array(4, ...)``)."""
        try:
            shape_var = call.args[0] if call.args else dict(call.kws).get("shape")
        except (AttributeError, IndexError):
            return None
        defn = self.definition(func_ir, shape_var)
        if not isinstance(defn, self.const + self.global_):
            return None
        shape = defn.value
        if isinstance(shape, tuple) and len(shape) == 1:
            shape = shape[0]
        if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
            return int(shape)
        return None

    def length(self, func_ir: Any, var: Any, kernel: bool) -> int | None:
        """The literal length of the local or shared array a variable is, if it is one."""
        call = self.allocation(func_ir, var, kernel)[1]
        return None if call is None else self.static_length(func_ir, call)

    def called(self, func_ir: Any, stmt: Any) -> tuple[Any, Any] | None:
        """(the function, the call) of an assignment of a call not yet given the hidden keyword."""
        if not (isinstance(stmt, self.assign) and isinstance(stmt.value, self.expr)):
            return None
        expr = stmt.value
        if expr.op != "call" or any(k == self.hidden for k, _ in expr.kws):
            return None
        try:
            return self.resolve(func_ir, expr.func), expr
        except (LookupError, AttributeError):
            return None

    def call_facts(
        self, func_ir: Any, stmt: Any, kernel: bool, pins: dict[int, tuple[Any, Any]]
    ) -> tuple[str, str] | None:
        """(entry point, encoded facts) of a statement calling a library function, else None.

        The facts: the literal lengths of its local-array operands and where
        ``prefix_state`` lives. The callback globals the call names are
        swapped for their pinned descriptors (:func:`pin_callback`; numba types
        every global it loads, so the global itself holds the descriptor). The
        facts are empty when the arguments do not bind (typing then reports
        the binding error with the right words).
        """
        found = self.called(func_ir, stmt)
        name = None if found is None else self.functions.get(id(found[0]))
        if found is None or name is None:
            return None
        expr = found[1]
        entry = CALLS[name]
        try:
            bound = entry.signature.bind_partial(*expr.args, **dict(expr.kws))
        except TypeError:
            return name, ""
        lengths: dict[str, int] = {}
        memory: dict[str, str] = {}
        values: dict[str, float] = {}
        for param in entry.params:
            var = bound.arguments.get(param.name)
            if var is None:
                continue
            if param.role in ("operand", "array"):
                where, call = self.allocation(func_ir, var, kernel)
                n = None if call is None else self.static_length(func_ir, call)
                if n is not None:
                    lengths[param.name] = n
                if param.name == "prefix_state" and where is not None:
                    memory[param.name] = where
                number = self.constant(func_ir, var)
                if number is not None:
                    values[param.name] = number
            elif param.callback is not None:
                defn = self.definition(func_ir, var)
                if isinstance(defn, self.global_):
                    defn.value = pin_callback(defn.value, param.callback, pins)
        return name, encode_call_facts(lengths, memory, values=values)

    def constant(self, func_ir: Any, var: Any) -> float | None:
        """The real number a variable holds when the kernel writes it as a constant.

        A literal, or a global (a module constant); None for anything else
        (the half-precision range check needs the value only where the
        kernel fixes it).
        """
        defn = self.definition(func_ir, var)
        if not isinstance(defn, self.const + self.global_):
            return None
        value = defn.value
        if isinstance(value, bool | np.bool_) or not isinstance(
            value, int | float | np.integer | np.floating
        ):
            return None
        try:
            return float(value)
        except OverflowError:  # an int past the largest double
            return float("inf") if value > 0 else float("-inf")

    def tile_size_facts(self, func_ir: Any, stmt: Any, kernel: bool, tile_size: Any) -> str | None:
        """The encoded facts (the items array's literal length) of a ``tile_size`` call."""
        found = self.called(func_ir, stmt)
        if found is None or found[0] is not tile_size:
            return None
        expr = found[1]
        try:
            items = inspect.signature(tile_size).bind_partial(*expr.args, **dict(expr.kws))
        except TypeError:
            return ""  # typing reports the binding error
        var = items.arguments.get("items")
        n = None if var is None else self.length(func_ir, var, kernel)
        return encode_call_facts({} if n is None else {"items": n})


# ---------------------------------------------------------------------------
# typed calls


class Rejection(Exception):  # noqa: N818 - a carrier, not an error users see
    """Carries a call's rejection out of Numba's template loop (which would bury it)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class TypedPlans:
    """Each typed call's plan, by a key of the front end's, for the lowering of the same call.

    Typing always precedes lowering in one compilation; the lowering plans
    again from the call's types should a plan be missing all the same.
    :attr:`groups` collects the calls of each kernel for one NVRTC unit.
    """

    def __init__(self) -> None:
        self._plans: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        #: The calls of the kernels being compiled, one NVRTC unit per kernel.
        self.groups = KernelGroups()

    def remember(self, key: Hashable, plan: Any, context: Any) -> None:
        """Keep `plan`, typed in `context` (a Numba typing context), for its lowering."""
        with self._lock:
            self._plans[key] = plan
        self.groups.note(typing_root(context), plan)

    def get(self, key: Hashable) -> Any:
        """The plan remembered under `key`, or None."""
        return self._plans.get(key)


class LinkObjects:
    """A front end's link-input objects (its ``cuda.LTOIR``), one per (symbol, target).

    A provider or callback lowered several times, in one kernel or in many,
    is the same object each time: the front ends link an object they have
    seen once.
    """

    def __init__(self, make: Callable[[bytes, str], Any]) -> None:
        self._make = make
        self._objects: dict[tuple[str, tuple[int, int]], Any] = {}
        self._lock = threading.Lock()

    def get(self, symbol: str, cc: tuple[int, int], data: bytes) -> Any:
        """The object of LTO-IR `data` named `symbol`, for target `cc`."""
        with self._lock:
            obj = self._objects.get((symbol, cc))
            if obj is None:
                obj = self._objects[(symbol, cc)] = self._make(data, f"{symbol}.ltoir")
            return obj


def typeof_status(types: Any, from_dtype: Callable[[Any], Any], front_end: str) -> Any:
    """A front end's ``typeof`` of a :class:`scan.TileStatus`: a C-contiguous array of its dtype.

    The status is passed as the array its ``__cuda_array_interface__``
    describes, but the interface's typestr (``|V16``) has no fields, and the
    fields name the values' dtype; so the type comes from the status, made
    once per status and front end (every launch types its arguments).
    """

    def make(dtype: np.dtype[Any], ndim: int) -> Any:
        return types.Array(from_dtype(dtype), ndim, "C")

    return lambda val, c: val.numba_type(front_end, make)


def _callable_types(dummy: type) -> tuple[type, type]:
    """A front end's types for descriptors and refused callables, on its ``types.Dummy``."""

    class DescriptorType(dummy):  # type: ignore[misc]
        """Numba type of a statefn descriptor named in a kernel (a compile-time constant)."""

        def __init__(self, descriptor: Any) -> None:
            # pinned: the key is computed now, while the kernel that names the
            # descriptor is compiled, and every later step of that compilation
            # (plans, generated code, the callback's compile and its cache
            # entry) sees this one key
            self.descriptor = descriptor.pinned()
            self._key = (type(descriptor).__name__, self.descriptor.key)
            super().__init__(name=f"statefn.{self._key[0]}({self._key[1][:16]})")

        @property
        def key(self) -> Any:
            return self._key

    class RefusedCallable(dummy):  # type: ignore[misc]
        """Numba type of a plain function the descriptors refuse (the planner says why)."""

        def __init__(self, obj: Any) -> None:
            self.obj = obj
            super().__init__(name=f"statefn.refused({getattr(obj, '__qualname__', type(obj))})")

        @property
        def key(self) -> Any:
            return (RefusedCallable, self.obj)

    return DescriptorType, RefusedCallable


@attrs.frozen
class NumbaFacts:
    """One front end's Numba types, and how they become facts.

    Attributes
    ----------
    types : module
        The front end's Numba ``types`` module.
    as_dtype : callable
        Its ``numpy_support.as_dtype``.
    records : bool
        Whether record values (and tuples spelling them) are facts here.
    descriptor_type, refused_type : type
        The types of statefn descriptors and of :class:`Refused` callables in
        its kernels (made from its ``types.Dummy``; the front end registers
        their ``typeof`` and data model).
    entry_point_type : type
        The type of the library's functions (from its ``types.Function``):
        a :class:`Rejection` raised by their typing reaches the user as the
        error it carries.
    bfloat16_types : tuple of type
        Other types of the front end's that are bfloat16 besides
        ``types.bfloat16`` (numba-cuda-mlir types a torch bfloat16 tensor's
        items with a bfloat16 type of its own).
    """

    types: Any
    as_dtype: Callable[[Any], Any]
    records: bool
    descriptor_type: type
    refused_type: type
    entry_point_type: type
    bfloat16_types: tuple[type, ...] = ()

    @classmethod
    def of(
        cls,
        types: Any,
        as_dtype: Callable[[Any], Any],
        *,
        records: bool = True,
        bfloat16_types: tuple[type, ...] = (),
    ) -> NumbaFacts:
        """The facts of a front end's ``types`` module, with its three types made."""
        descriptor_type, refused_type = _callable_types(types.Dummy)
        return cls(
            types,
            as_dtype,
            records,
            descriptor_type,
            refused_type,
            _entry_type(types.Function),
            bfloat16_types,
        )

    def return_type(self, plan: Any, bound: Mapping[str, Any]) -> Any:
        """The type of a call's result: its family's ``returns`` parameter's (element) type."""
        returns = for_plan(plan).returns
        if not plan.returns_value or returns is None:
            return self.types.none
        result = getattr(plan, "result_dtype", None)  # a reduce's dtype=
        if result is not None:
            return getattr(self.types, np.dtype(result).name)
        ty = bound[returns]
        return ty.dtype if isinstance(ty, self.types.Array) else self.types.unliteral(ty)

    def absent(self, ty: Any) -> bool:
        """Whether an argument was not passed, or passed as None."""
        return (
            ty is MISSING or ty is None or isinstance(ty, self.types.NoneType | self.types.Omitted)
        )

    def literal(self, function: str, name: str, ty: Any) -> Any:
        """The Python value of a literal argument (None when omitted or None)."""
        if self.absent(ty):
            return getattr(ty, "value", None)
        if isinstance(ty, self.types.Literal):
            return ty.literal_value
        if isinstance(ty, self.types.BaseTuple):
            return tuple(self.literal(function, name, t) for t in ty.types)
        if isinstance(ty, self.types.NumberClass):  # dtype=np.int64
            return np.dtype(self.as_dtype(ty.instance_type))
        if isinstance(ty, self.types.DType):  # dtype=np.dtype(np.int64), a module constant
            return np.dtype(self.as_dtype(ty.dtype))
        example = _EXAMPLES.get(name, "...")
        raise PlanError(
            f"{function}: {name}= must be a literal constant written in the kernel (got a runtime "
            f"value of type {ty}); write it out, e.g. {name}={example}"
        )

    def callable(self, function: str, name: str, ty: Any) -> Any:
        """The Python object a callable-valued argument denotes."""
        types = self.types
        if self.absent(ty):
            return None
        if isinstance(ty, self.descriptor_type):
            return ty.descriptor  # type: ignore[attr-defined]
        if isinstance(ty, self.refused_type):
            return ty.obj  # type: ignore[attr-defined]
        if isinstance(ty, types.Dispatcher):
            return ty.dispatcher
        if isinstance(ty, types.Literal):
            return ty.literal_value
        if isinstance(ty, types.Function):
            return ty.typing_key
        fix = (
            "pass a statefn descriptor, a @cuda.jit(device=True) function or an operator string "
            "such as '+'"
        )
        raise ScanTypeError(
            f"got an operand of type {ty} where a callback or operator was expected; {fix}"
        )

    def np_dtype(self, ty: Any) -> np.dtype[Any]:
        """The NumPy dtype of a scalar type (bfloat16: ``ml_dtypes.bfloat16``'s)."""
        ty = self.types.unliteral(ty)
        if ty == getattr(self.types, "bfloat16", None) or isinstance(ty, self.bfloat16_types):
            try:
                return bfloat16()
            except ImportError as exc:
                raise ScanTypeError(f"scan: {exc}") from None
        dtype: np.dtype[Any] = np.dtype(self.as_dtype(ty))
        return dtype

    def converters(
        self,
        lengths: Mapping[str, int],
        memory: Mapping[str, str],
        values: Mapping[str, float] | None = None,
    ) -> dict[Role, Converter]:
        """The converters of one call, given its local arrays' lengths and memory spaces,
        and the values of its constant scalar operands."""
        types = self.types

        def array(ty: Any, name: str) -> ArrayFact:
            return ArrayFact(
                dtype=self.np_dtype(ty.dtype),
                ndim=ty.ndim,
                length=lengths.get(name),
                contiguous=ty.layout == "C",
                memory=memory.get(name),  # type: ignore[arg-type]
            )

        def operand(function: str, name: str, ty: Any) -> Operand | None:
            if self.absent(ty):
                return None
            if isinstance(ty, types.Array):
                return array(ty, name)
            if (
                isinstance(ty, types.BaseTuple)
                and len(ty.types) > 0
                and all(isinstance(t, types.Array) for t in ty.types)
            ):  # zipped tile I/O: one array per record field
                return ZipFact(tuple(array(t, f"{name}[{i}]") for i, t in enumerate(ty.types)))
            if isinstance(types.unliteral(ty), types.Boolean):
                raise boolean_operand(function, name)
            scalars = (types.Number, types.Record) if self.records else types.Number
            if isinstance(ty, scalars):
                return ScalarFact(self.np_dtype(ty), value=(values or {}).get(name))
            if (
                self.records
                and isinstance(ty, types.BaseTuple)
                and all(
                    isinstance(types.unliteral(t), types.Number)
                    and not isinstance(t, types.Boolean)
                    for t in ty.types
                )
            ):  # a record value spelled as a tuple (initial_value=(1.0, 0.0))
                return TupleFact(tuple(self.np_dtype(t) for t in ty.types))
            raise ScanTypeError(f"{function}: {name} must be a number or an array (got {ty})")

        return {
            "operand": operand,
            "array": operand,
            "index": operand,
            "literal": self.literal,
            "callable": self.callable,
        }


def _entry_type(function: type) -> type:
    """A front end's type of the library's functions, on its ``types.Function``."""

    class EntryPointType(function):  # type: ignore[misc]
        """The Numba type of a :mod:`scan.block` function: its rejections reach the user."""

        def get_call_type(self, context: Any, args: Any, kws: Any) -> Any:
            try:
                return super().get_call_type(context, args, kws)
            except Rejection as carried:
                raise carried.error from None

    return EntryPointType


# ---------------------------------------------------------------------------
# scan.compile's arguments

_OUTPUTS = ("cubin", "ltoir")


@attrs.frozen
class CompileRequest:
    """``scan.compile``'s arguments, checked: what either front end compiles."""

    pyfunc: Callable[..., Any]
    args: tuple[Any, ...]
    cc: tuple[int, int]
    block: Block | None
    options: tuple[tuple[str, Any], ...]
    #: what was passed: a dispatcher, or the function itself
    kernel: Any = None

    @property
    def memo_key(self) -> tuple[Any, ...]:
        """Equal for requests that compile to the same code in one process.

        Keyed by the dispatcher (or function) passed, as Numba compiles a
        dispatcher once per signature: another ``cuda.jit`` of the same
        function compiles again, with the globals' values of that moment.
        """
        kernel = self.pyfunc if self.kernel is None else self.kernel
        return (kernel, self.args, self.cc, self.block, self.options)


def compile_request(
    kernel: Any,
    signature: Any,
    *,
    cc: object,
    output: str,
    block: int | tuple[int, ...] | None,
    normalize_signature: Callable[[Any], tuple[Any, Any]],
    honoured: tuple[str, ...],
) -> CompileRequest:
    """Check ``scan.compile``'s arguments before anything is compiled.

    `honoured` names the kernel's options (``@cuda.jit(fastmath=True)``, ...)
    that the front end's compile takes over.
    """
    if output not in _OUTPUTS:
        raise ValueError(f"scan.compile: output must be 'cubin' or 'ltoir' (got {output!r})")
    target = check_cc(cc)
    shape = None if block is None else resolve_block("scan.compile", block, None)
    args, ret = normalize_signature(signature)
    if ret is not None and str(ret) != "none":
        raise TypeError(f"scan.compile: a kernel returns nothing; got the return type {ret}")
    pyfunc = getattr(kernel, "py_func", kernel)
    if not callable(pyfunc):
        raise TypeError(f"scan.compile: expected a @cuda.jit kernel or a function, got {kernel!r}")
    options = getattr(kernel, "targetoptions", {})
    chosen = tuple(sorted((k, options[k]) for k in honoured if options.get(k) is not None))
    return CompileRequest(pyfunc, tuple(args), target, shape, chosen, kernel)
