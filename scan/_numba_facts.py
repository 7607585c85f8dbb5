# SPDX-License-Identifier: Apache-2.0
"""Numba types as plan facts: the converters of every Numba-based front end.

numba-cuda and numba-cuda-mlir type kernels with the same Numba type system,
each from its own copy of the ``types`` module. A front end describes its copy
with one :class:`NumbaFacts` (its ``types`` module, its ``as_dtype``, and the
two types it gives descriptors and refused callables) and gets the converters
:func:`scan._calls.collect_facts` takes, one per argument role. So both front
ends turn the same types into the same facts, with the same messages. Nothing
here imports Numba.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

import statefn

from ._calls import MISSING, Converter, Role, boolean_operand
from ._errors import PlanError, ScanTypeError
from ._plan import ArrayFact, Block, Operand, ScalarFact, TupleFact, resolve_block
from ._target import check_cc

__all__ = [
    "CompileRequest",
    "NumbaFacts",
    "Refused",
    "as_descriptor",
    "compile_request",
    "decode_call_facts",
    "encode_call_facts",
    "pin_callback",
    "typing_root",
]

_EXAMPLES = {
    "threads": "128",
    "items_per_thread": "4",
    "algorithm": "'raking'",
    "mode": "'inclusive'",
    "auto_sync": "False",
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


def encode_call_facts(
    lengths: Mapping[str, int],
    memory: Mapping[str, str] | None = None,
    launch: str | None = None,
) -> str:
    """The hidden literal keyword's text: what a front end's IR pass learns of one call.

    *lengths*: the literal length of each local-array operand, by parameter;
    *memory*: where an array lives (``"shared"``, ...), by parameter;
    *launch*: the launch's block shape as ``"x,y,z"`` when the pass knows it.
    :func:`decode_call_facts` reads it back; both front ends use this one codec.
    """
    items = [f"{name}={n}" for name, n in lengths.items()]
    items += [f"{name}{_MEMORY}={where}" for name, where in (memory or {}).items()]
    if launch:
        items.append(f"{_LAUNCH}={launch}")
    return ";".join(items)


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
            else:
                lengths[key] = int(value)
    return lengths, memory, launch


def typing_root(context: Any) -> object:
    """The outermost function a Numba typing context is typing, or None.

    Numba keeps the functions being typed on its typing context's call stack
    (a private attribute both front ends' Numba copies share); the first is
    the kernel whose compilation this typing belongs to.
    """
    stack = getattr(getattr(context, "callstack", None), "_stack", None)
    return stack[0] if stack else None


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
    """

    types: Any
    as_dtype: Callable[[Any], Any]
    records: bool
    descriptor_type: type
    refused_type: type

    @classmethod
    def of(cls, types: Any, as_dtype: Callable[[Any], Any], *, records: bool = True) -> NumbaFacts:
        """The facts of a front end's ``types`` module, with its two callable types made."""
        descriptor_type, refused_type = _callable_types(types.Dummy)
        return cls(types, as_dtype, records, descriptor_type, refused_type)

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
        """The NumPy dtype of a scalar type."""
        dtype: np.dtype[Any] = np.dtype(self.as_dtype(self.types.unliteral(ty)))
        return dtype

    def converters(
        self, lengths: Mapping[str, int], memory: Mapping[str, str]
    ) -> dict[Role, Converter]:
        """The converters of one call, given its local arrays' lengths and memory spaces."""
        types = self.types

        def operand(function: str, name: str, ty: Any) -> Operand | None:
            if self.absent(ty):
                return None
            if isinstance(ty, types.Array):
                return ArrayFact(
                    dtype=self.np_dtype(ty.dtype),
                    ndim=ty.ndim,
                    length=lengths.get(name),
                    contiguous=ty.layout == "C",
                    memory=memory.get(name),  # type: ignore[arg-type]
                )
            if isinstance(types.unliteral(ty), types.Boolean):
                raise boolean_operand(function, name)
            scalars = (types.Number, types.Record) if self.records else types.Number
            if isinstance(ty, scalars):
                return ScalarFact(self.np_dtype(ty))
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
