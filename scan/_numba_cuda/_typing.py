# SPDX-License-Identifier: Apache-2.0
"""Typing of :mod:`scan.block` calls in numba-cuda kernels.

Importing this module registers:

* a typeof for statefn descriptors, so kernels can name them as globals;
* a before-inference IR rewrite that records the literal lengths of the local
  arrays passed to block primitives (items per thread is a C++ template
  parameter, and numba's array types carry no shape);
* typing templates that bind a call (:func:`scan._calls.bind`), turn its Numba
  types into facts and plan it (:func:`scan._calls.plan_call`): every
  rejection happens there, before C++ exists. The plan is kept for the
  lowering of the same call (:func:`typed_plan`), which does not plan again.

Typing templates are used instead of ``@overload`` because overload
implementations compile through a dispatcher that asks the current device for
its compute capability, which fails on machines without a GPU; these paths
compile with an explicit ``cc``.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import linecache
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from numba import cuda
from numba.cuda import launchconfig, types
from numba.cuda.core import errors as numba_errors
from numba.cuda.core import ir
from numba.cuda.core.rewrites import Rewrite, register_rewrite
from numba.cuda.cudadecl import registry as typing_registry
from numba.cuda.extending import core_models, register_model, typeof_impl
from numba.cuda.np.numpy_support import as_dtype, from_dtype
from numba.cuda.typing.templates import AbstractTemplate, signature

import statefn

from .. import block
from .._calls import CALLS, bind, collect_facts, plan_call, public_functions
from .._errors import ScanError
from .._lookback import Lookback
from .._numba_facts import (
    IRFacts,
    NumbaFacts,
    Refused,
    Rejection,
    TypedPlans,
    decode_call_facts,
    typeof_status,
)
from .._plan import Block, check_launch_bounds
from .._tile_status import TileStatus

__all__ = [
    "FUNCTIONS",
    "KERNEL_GROUPS",
    "LENGTHS_KW",
    "DescriptorType",
    "assume_block",
    "declared_threads",
    "fold_signature",
    "typed_plan",
]

#: The hidden literal keyword carrying the local-array lengths of a call.
LENGTHS_KW = "_scan_static_lengths"
#: The public functions, by entry-point name (the typing and lowering keys).
FUNCTIONS: dict[str, Callable[..., Any]] = public_functions()
_BY_OBJECT = {id(fn): name for name, fn in FUNCTIONS.items()}
# the operands whose literal lengths the rewrite records
_ARRAY_ROLES = ("operand", "array")


def fold_signature(name: str) -> inspect.Signature:
    """The all-positional signature a typed call is lowered with.

    numba folds keyword-only parameters incorrectly, so lowering sees every
    parameter positionally, plus the hidden lengths parameter. Required
    keyword-only parameters get a placeholder default there: the public
    signature has already enforced that they were passed.
    """
    params = [
        p.replace(
            kind=inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None if p.default is inspect.Parameter.empty and i > 0 else p.default,
        )
        for i, p in enumerate(CALLS[name].signature.parameters.values())
    ]
    params.append(
        inspect.Parameter(LENGTHS_KW, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
    )
    return inspect.Signature(params)


_FOLD_SIGS = {name: fold_signature(name) for name in CALLS}


# ---------------------------------------------------------------------------
# descriptors as kernel globals


#: Numba-cuda's types as plan facts, and its types of descriptors and refused callables.
FACTS = NumbaFacts.of(types, as_dtype)
DescriptorType = FACTS.descriptor_type

for _cls in (statefn.StatefulFunction, statefn.StatelessFunction, statefn.ScanOperator, Lookback):
    typeof_impl.register(_cls)(lambda val, c: FACTS.descriptor_type(val))
typeof_impl.register(Refused)(lambda val, c: FACTS.refused_type(val.obj))
register_model(FACTS.descriptor_type)(core_models.OpaqueModel)
register_model(FACTS.refused_type)(core_models.OpaqueModel)
typeof_impl.register(TileStatus)(typeof_status(types, from_dtype, "numba-cuda"))


# ---------------------------------------------------------------------------
# the rewrite recording local-array lengths


#: The kernel's IR, read before type inference (scan._numba_facts.IRFacts).
IR = IRFacts(
    var=ir.var_types,
    global_=ir.global_types + ir.freevar_types,
    expr=ir.expr_types,
    arg=ir.arg_types,
    const=ir.const_types,
    assign=ir.assign_types,
    local_array=cuda.local.array,
    shared_array=cuda.shared.array,
    functions=_BY_OBJECT,
    hidden=LENGTHS_KW,
)


@register_rewrite("before-inference")
class RecordStaticLengths(Rewrite):  # type: ignore[misc]
    """Add a hidden literal keyword with the operands' local-array lengths.

    It also records where ``prefix_state`` lives (``prefix_state@memory=shared``),
    so the planner can refuse state that is not per thread, and swaps plain
    functions passed as ``prefix_op=``/``scan_op=`` for their descriptors.
    """

    def __init__(self, state: Any) -> None:
        super().__init__(state)
        self._pending: list[tuple[Any, str]] = []
        self._block: Any = None
        # a kernel is compiled with a declared void return type; device
        # functions called from it are typed with none declared
        self._kernel = getattr(state, "return_type", None) == types.void
        # the callbacks' pinned descriptors, once per compilation of the function
        self._pins: dict[int, tuple[Any, Any]] = {}

    def match(self, func_ir: Any, block_: Any, typemap: Any, calltypes: Any) -> bool:
        self._pending = []
        for stmt in block_.body:
            found = self._facts(func_ir, stmt)
            if found is not None:
                self._pending.append((stmt, found))
        if self._pending:
            self._block = block_
            return True
        return False

    def _facts(self, func_ir: Any, stmt: Any) -> str | None:
        found = IR.call_facts(func_ir, stmt, self._kernel, self._pins)
        return None if found is None else found[1]

    def apply(self) -> Any:
        new_block = self._block.copy()
        new_block.clear()
        scope = self._block.scope
        targets = {id(stmt): text for stmt, text in self._pending}
        for stmt in self._block.body:
            text = targets.get(id(stmt))
            if text is not None:
                loc = stmt.loc
                var = ir.Var(scope, scope.redefine("$scan_lengths", loc).name, loc)
                new_block.append(ir.Assign(ir.Const(text, loc), var, loc))
                stmt.value.kws = [*stmt.value.kws, (LENGTHS_KW, var)]
            new_block.append(stmt)
        return new_block


# ---------------------------------------------------------------------------
# Numba types as facts


_ASSUMED: contextvars.ContextVar[Block | None] = contextvars.ContextVar(
    "scan_assumed_block", default=None
)


# the launch_bounds= of the kernel compiled under assume_block (None: none)
_ASSUMED_BOUNDS: contextvars.ContextVar[object] = contextvars.ContextVar(
    "scan_assumed_bounds", default=None
)


@contextlib.contextmanager
def assume_block(block: Block | None, *, launch_bounds: object = None) -> Iterator[None]:
    """Compile as if launched with `block` (for compiles that no launch triggers).

    `launch_bounds`: the kernel's own ``launch_bounds=`` option, if any.
    """
    token = _ASSUMED.set(block)
    bounds_token = _ASSUMED_BOUNDS.set(launch_bounds)
    try:
        yield
    finally:
        _ASSUMED_BOUNDS.reset(bounds_token)
        _ASSUMED.reset(token)


def _launch() -> tuple[Block | None, object]:
    """The block shape the kernel is compiled for and its own ``launch_bounds=``."""
    cfg = launchconfig.current_launch_config()
    if cfg is None:
        return _ASSUMED.get(), _ASSUMED_BOUNDS.get()
    bx, by, bz = cfg.blockdim
    options = getattr(cfg.dispatcher, "targetoptions", {})
    return (int(bx), int(by), int(bz)), options.get("launch_bounds")


def declared_threads() -> int | None:
    """The block size to declare as the kernel's launch bounds, if the library should.

    A kernel that calls the library is compiled for one block shape (it is
    launch-config sensitive), so its thread count is a bound the code may
    rely on, as ``__launch_bounds__`` in CUDA C++: ptxas can then give each
    thread the registers that many threads leave, instead of planning for
    1024. None when the block shape is unknown or the kernel declares
    ``launch_bounds=`` itself.
    """
    block, bounds = _launch()
    if block is None or bounds is not None:
        return None
    return block[0] * block[1] * block[2]


def _launch_block(name: str) -> Block | None:
    cfg = launchconfig.current_launch_config()
    if cfg is not None:
        # the plan bakes the block shape into the code: recompile for other launches
        cfg.dispatcher.mark_launch_config_sensitive()
    block, bounds = _launch()
    check_launch_bounds(name, block, bounds)
    return block


def _plan(name: str, bound: Mapping[str, Any], hidden: Any) -> Any:
    lengths, memory, _ = decode_call_facts(FACTS.literal(name, LENGTHS_KW, hidden))
    facts = collect_facts(name, bound, FACTS.converters(lengths, memory))
    return plan_call(name, facts, _launch_block(name))


#: The plans of typed calls, by (entry point, the typed signature's arguments,
#: launch block shape), for the lowering of the same calls; the kernel groups.
TYPED = TypedPlans()
#: The calls of the kernels being compiled, one NVRTC unit per kernel.
KERNEL_GROUPS = TYPED.groups


def _typed_key(name: str, argtys: tuple[Any, ...]) -> tuple[Any, ...]:
    cfg = launchconfig.current_launch_config()
    return (name, argtys, _ASSUMED.get() if cfg is None else tuple(cfg.blockdim))


def typed_plan(name: str, argtys: tuple[Any, ...]) -> Any:
    """The plan made when the call with these (folded) argument types was typed.

    Typing always precedes lowering in one compilation; should a plan be
    missing all the same, the call is planned again from its types.
    """
    plan = TYPED.get(_typed_key(name, argtys))
    if plan is not None:
        return plan
    bound = dict(zip(_FOLD_SIGS[name].parameters, argtys, strict=True))
    hidden = bound.pop(LENGTHS_KW)
    return _plan(name, {k: v for k, v in bound.items() if not FACTS.absent(v)}, hidden)


# ---------------------------------------------------------------------------
# rejections at the user's line


class _Located(numba_errors.UnsupportedError):  # type: ignore[misc]
    """A rejection made while typing a kernel, reported at the call's line.

    A numba error type (not a typing error), so numba neither buries it among
    "no implementation found" candidates nor shows its own frames: the
    dispatcher re-raises it with a short traceback. Each concrete class also
    derives from the rejection's own class (``scan.PlanError``, ...), so
    ``except`` clauses for those still catch it; :attr:`rejection` is the
    original exception.
    """

    rejection: Exception
    _placed: bool = False

    # numba prefixes the pipeline step ("Failed in cuda mode pipeline (step:
    # nopython frontend)") by assigning args; the call's site stays first.
    @property
    def args(self) -> tuple[Any, ...]:
        return BaseException.args.__get__(self)  # type: ignore[attr-defined,no-any-return]

    @args.setter
    def args(self, value: tuple[Any, ...]) -> None:
        if self._placed and value and isinstance(value[0], str):
            value = (_PIPELINE.sub("", value[0], count=1), *value[1:])
        BaseException.args.__set__(self, value)  # type: ignore[attr-defined]

    def add_context(self, msg: str) -> Any:
        """Put the call's file, line and source first, instead of numba's context lines."""
        found = _CALL_AT.match(str(msg))
        if found is None or self._placed:
            return self
        self._placed = True
        self.args = (f"{_call_site(found[1], int(found[2]))}\n{self.rejection}",)
        return self


_CALL_AT = re.compile(r"typing of call at (.+) \((\d+)\)")
_PIPELINE = re.compile(r"^Failed in \w+ mode pipeline \(step: [^)]*\)\n")
_LOCATED: dict[type[BaseException], type[_Located]] = {}


def _call_site(filename: str, line: int) -> str:
    """``File "f.py", line 12, in kernel`` and the call's source line."""
    text = linecache.getline(filename, line)
    where = f'File "{filename}", line {line}'
    for back in range(line - 1, 0, -1):  # the enclosing def
        found = re.match(r"\s*def\s+(\w+)", linecache.getline(filename, back))
        if found is not None:
            where += f", in {found[1]}"
            break
    return f"{where}\n    {text.strip()}" if text.strip() else where


def _located(exc: Exception) -> _Located:
    cls = _LOCATED.get(type(exc))
    if cls is None:
        home = type(exc).__module__.split(".")[0]  # the public package: scan, statefn
        cls = type(type(exc).__name__, (_Located, type(exc)), {"__module__": home})
        _LOCATED[type(exc)] = cls
    error = cls(str(exc), highlighting=False)
    error.rejection = exc
    return error


def _make_template(name: str) -> type[AbstractTemplate]:
    def generic(self: Any, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        visible = {k: v for k, v in kws.items() if k != LENGTHS_KW}
        try:
            bound = bind(name, args, visible)
            plan = _plan(name, bound, kws.get(LENGTHS_KW))
        except (ScanError, statefn.StatefnError) as exc:
            raise Rejection(_located(exc)) from None
        ret = FACTS.return_type(plan, bound)
        passed = {**bound, LENGTHS_KW: kws.get(LENGTHS_KW)}
        argtys = tuple(
            passed[p.name] if passed.get(p.name) is not None else types.Omitted(p.default)
            for p in _FOLD_SIGS[name].parameters.values()
        )
        TYPED.remember(_typed_key(name, argtys), plan, self.context)
        return signature(ret, *argtys).replace(pysig=_FOLD_SIGS[name])

    return type(
        f"_Template_{name}",
        (AbstractTemplate,),
        {"key": FUNCTIONS[name], "prefer_literal": True, "generic": generic},
    )


for _name, _fn in FUNCTIONS.items():
    _template = _make_template(_name)
    typing_registry.register_global(_fn, FACTS.entry_point_type(_template))


# ---------------------------------------------------------------------------
# block.tile_size: a constant, known when the kernel is typed
#
# A rewrite records the literal length of the items array (as for the block
# calls); the template computes the tile size from it and the launch's block
# shape (or threads=) and types the call as that integer literal; the lowering
# emits the constant.

from numba.cuda.cudaimpl import registry as _lowering_registry  # noqa: E402

from .._errors import PlanError  # noqa: E402
from .._plan import tile_size as _tile_size  # noqa: E402

_TILE_SIZE_PUBLIC = inspect.signature(block.tile_size)
# the signature block.tile_size is typed and lowered with (the hidden lengths last)
_TILE_SIZE_SIG = inspect.Signature(
    [
        inspect.Parameter("items", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("threads", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        inspect.Parameter(LENGTHS_KW, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
    ]
)


@register_rewrite("before-inference")
class RecordTileSizeItems(RecordStaticLengths):
    """Add the hidden literal keyword with the ``items`` array's literal length."""

    def _facts(self, func_ir: Any, stmt: Any) -> str | None:
        return IR.tile_size_facts(func_ir, stmt, self._kernel, block.tile_size)


def _tile_items_per_thread(items: Any, hidden: Any) -> object:
    """The literal int passed as ``items``, or the recorded length of the items array."""
    if isinstance(items, types.IntegerLiteral):
        return items.literal_value
    lengths, _, _ = decode_call_facts(FACTS.literal("tile_size", LENGTHS_KW, hidden))
    return lengths.get("items")


class _TileSizeTemplate(AbstractTemplate):  # type: ignore[misc]
    key = block.tile_size
    prefer_literal = True

    def generic(self, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        visible = {k: v for k, v in kws.items() if k != LENGTHS_KW}
        try:
            try:
                bound = _TILE_SIZE_PUBLIC.bind(*args, **visible).arguments
            except TypeError as exc:
                raise PlanError(f"tile_size: {exc}; call it as block.tile_size(items)") from None
            threads = bound.get("threads")
            n = _tile_size(
                _tile_items_per_thread(bound["items"], kws.get(LENGTHS_KW)),
                None if threads is None else FACTS.literal("tile_size", "threads", threads),
                _launch_block("tile_size"),
            )
        except ScanError as exc:
            raise Rejection(_located(exc)) from None
        passed = {**bound, LENGTHS_KW: kws.get(LENGTHS_KW)}
        argtys = tuple(
            passed[p] if passed.get(p) is not None else types.Omitted(None)
            for p in _TILE_SIZE_SIG.parameters
        )
        return signature(types.IntegerLiteral(n), *argtys).replace(pysig=_TILE_SIZE_SIG)


typing_registry.register_global(block.tile_size, FACTS.entry_point_type(_TileSizeTemplate))


def _lower_tile_size(context: Any, builder: Any, sig: Any, args: Any) -> Any:
    return context.get_constant(types.intp, sig.return_type.literal_value)


_lowering_registry.lower(block.tile_size, types.VarArg(types.Any))(_lower_tile_size)


# ---------------------------------------------------------------------------
# tile loops: block.tiles and warp.tiles become the range loops written by
# hand, warp.tile_size a constant (scan._numba_loops), before type inference;
# the mistakes the IR shows are refused at their line first

from .. import warp  # noqa: E402
from .._numba_loops import TileLoops  # noqa: E402

_TILE_HELPERS: dict[str, Callable[..., Any]] = {
    "tiles": block.tiles,
    "warp.tiles": warp.tiles,
    "warp.tile_size": warp.tile_size,
}
#: The kernel's tile loops, rewritten and checked (scan._numba_loops.TileLoops).
LOOPS = TileLoops(
    facts=IR,
    ir=ir,
    functions={id(fn): name for name, fn in _TILE_HELPERS.items()},
    signatures={name: inspect.signature(fn) for name, fn in _TILE_HELPERS.items()},
    thread_index=cuda.threadIdx,
    lane_id=cuda.laneid,
)


def _refusal_at(exc: Exception) -> Exception:
    """A rejection found in the IR, at the line its ``loc`` names (else as it is)."""
    loc = getattr(exc, "loc", None)
    error = _located(exc)
    if loc is not None:
        error._placed = True
        error.args = (f"{_call_site(loc.filename, loc.line)}\n{exc}",)
    return error


@register_rewrite("before-inference")
class RewriteTileLoops(Rewrite):  # type: ignore[misc]
    """Check the function's tile loops once, then make each ``tiles`` call its loop."""

    def __init__(self, state: Any) -> None:
        super().__init__(state)
        self._kernel = getattr(state, "return_type", None) == types.void
        self._checked = False
        self._block: Any = None
        self._body: list[Any] | None = None

    def match(self, func_ir: Any, block_: Any, typemap: Any, calltypes: Any) -> bool:
        try:
            if not self._checked:
                self._checked = True
                LOOPS.check(func_ir, self._kernel, lambda: _launch()[0])
            self._body = LOOPS.rewrite(func_ir, block_, self._kernel, _launch_block)
        except ScanError as exc:
            raise _refusal_at(exc) from None
        self._block = block_
        return self._body is not None

    def apply(self) -> Any:
        new_block = self._block.copy()
        new_block.clear()
        for stmt in self._body or ():
            new_block.append(stmt)
        return new_block


def _tile_helper_template(name: str) -> type[AbstractTemplate]:
    """A call the rewrite did not see (the function stored or passed): refused at typing."""

    def generic(self: Any, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        module, _, short = name.rpartition(".")
        raise Rejection(
            _located(
                PlanError(
                    f"{name}: call scan.{module or 'block'}.{short} by name where its result "
                    f"is used (for base in {module or 'block'}.{short}(n, items): ...); the "
                    "kernel's compiler makes the call its loop and cannot follow the function "
                    "through another variable or function"
                )
            )
        )

    return type(
        f"_Template_{name}",
        (AbstractTemplate,),
        {"key": _TILE_HELPERS[name], "generic": generic},
    )


for _name, _fn in _TILE_HELPERS.items():
    typing_registry.register_global(_fn, FACTS.entry_point_type(_tile_helper_template(_name)))
