# SPDX-License-Identifier: Apache-2.0
"""Typing of :mod:`scan.block` calls in numba-cuda-mlir kernels.

Importing this module registers, with numba-cuda-mlir's extension registries:

* a typeof for statefn descriptors, so kernels can name them as globals;
* a whole-function planner (numba-cuda-mlir's hook that runs after inlining,
  before type inference) that adds one hidden literal keyword to every call:
  the literal lengths of the local arrays passed (items per thread is a C++
  template parameter, and Numba's array types carry no shape), where
  ``prefix_state`` lives, and the launch's block shape when a call has no
  ``threads=`` (asking for it makes numba-cuda-mlir compile the kernel once
  per launch configuration). It also swaps plain functions passed as
  callbacks for their descriptors, as the numba-cuda front end does;
* typing templates that bind each call (:func:`scan._calls.bind`), turn the
  Numba types into facts and plan it (:func:`scan._calls.plan_call`): every
  rejection happens there, with the same words as under numba-cuda. The plan
  is kept for the lowering of the same call (:func:`typed_plan`).
"""

from __future__ import annotations

import contextlib
import contextvars
import linecache
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from numba_cuda_mlir import cuda as mlir_cuda
from numba_cuda_mlir import extending
from numba_cuda_mlir.models import OpaqueModel
from numba_cuda_mlir.numba_cuda import types
from numba_cuda_mlir.numba_cuda.core import ir
from numba_cuda_mlir.numba_cuda.np.numpy_support import as_dtype, from_dtype
from numba_cuda_mlir.numba_cuda.typing.templates import AbstractTemplate, signature
from numba_cuda_mlir.type_defs.float_types import BFloat16Type

import statefn

from .. import block
from .._calls import bind, collect_facts, plan_call, public_functions
from .._errors import ScanError
from .._lookback import Lookback
from .._numba_facts import (
    IRFacts,
    NumbaFacts,
    Refused,
    Rejection,
    TypedPlans,
    decode_call_facts,
    decode_call_values,
    encode_call_facts,
    typeof_status,
)
from .._plan import Block
from .._tile_status import TileStatus

__all__ = [
    "FUNCTIONS",
    "HIDDEN_KW",
    "KERNEL_GROUPS",
    "DescriptorType",
    "assume_block",
    "bound_types",
    "launch_block",
    "typed_plan",
]

#: The hidden literal keyword the planner adds to every call.
HIDDEN_KW = "_scan_mlir_facts"
#: The public functions, by entry-point name (the typing and lowering keys).
FUNCTIONS: dict[str, Callable[..., Any]] = public_functions()
_BY_ID = {id(fn): name for name, fn in FUNCTIONS.items()}


# ---------------------------------------------------------------------------
# descriptors and refused plain functions as kernel globals


#: numba-cuda-mlir's types as plan facts (numbers, records, tuples spelling a
#: record), and its types of descriptors and refused callables.
FACTS = NumbaFacts.of(types, as_dtype, bfloat16_types=(BFloat16Type,))
DescriptorType = FACTS.descriptor_type

for _cls in (statefn.StatefulFunction, statefn.StatelessFunction, statefn.ScanOperator, Lookback):
    extending.typeof_impl.register(_cls)(lambda val, c: FACTS.descriptor_type(val))
extending.typeof_impl.register(Refused)(lambda val, c: FACTS.refused_type(val.obj))
extending.register_model(FACTS.descriptor_type)(OpaqueModel)
extending.register_model(FACTS.refused_type)(OpaqueModel)
extending.typeof_impl.register(TileStatus)(typeof_status(types, from_dtype, "numba-cuda-mlir"))


# ---------------------------------------------------------------------------
# the whole-function planner


#: The kernel's IR, read by the whole-function planner (scan._numba_facts.IRFacts).
IR = IRFacts(
    var=(ir.Var,),
    global_=(ir.Global, ir.FreeVar),
    expr=(ir.Expr,),
    arg=(ir.Arg,),
    const=(ir.Const,),
    assign=(ir.Assign,),
    local_array=mlir_cuda.local.array,
    shared_array=mlir_cuda.shared.array,
    functions=_BY_ID,
    hidden=HIDDEN_KW,
)


_ASSUMED: contextvars.ContextVar[Block | None] = contextvars.ContextVar(
    "scan_mlir_assumed_block", default=None
)


@contextlib.contextmanager
def assume_block(shape: Block | None) -> Iterator[None]:
    """Compile as if launched with `shape` (for compiles that no launch triggers)."""
    token = _ASSUMED.set(shape)
    try:
        yield
    finally:
        _ASSUMED.reset(token)


@extending.register_planner
class RecordCallFacts(extending.WholeFunctionPlanner):  # type: ignore[misc]
    """Add the hidden literal keyword (lengths, memory, launch shape) to every call."""

    def run(self) -> bool:
        func_ir = self.state.func_ir
        kernel = not self.is_device_function
        changed = False
        launch: str | None = None
        pins: dict[int, tuple[Any, Any]] = {}  # the callbacks' pinned descriptors
        for blk in func_ir.blocks.values():
            body = []
            for stmt in blk.body:
                text = self._facts(func_ir, stmt, kernel, pins)
                if text is not None:
                    if "threads" not in dict(stmt.value.kws) and launch is None:
                        launch = self._launch()
                    if launch:
                        lengths, memory, _ = decode_call_facts(text)
                        text = encode_call_facts(lengths, memory, launch, decode_call_values(text))
                    loc = stmt.loc
                    var = ir.Var(blk.scope, blk.scope.redefine("$scan_facts", loc).name, loc)
                    body.append(ir.Assign(ir.Const(text, loc), var, loc))
                    stmt.value.kws = [*stmt.value.kws, (HIDDEN_KW, var)]
                    changed = True
                body.append(stmt)
            blk.body = body
        return changed

    def _launch(self) -> str:
        """The launch's block shape as ``x,y,z``, or "" when no launch triggered the compile."""
        try:
            config = extending.require_launch_config(self.state)
        except RuntimeError:  # compiled without a launch (cuda.compile, scan.compile)
            config = None
        if config is None:
            assumed = _ASSUMED.get()
            return "" if assumed is None else ",".join(map(str, assumed))
        dims = tuple(int(d) for d in config["block"])
        return ",".join(map(str, (*dims, 1, 1)[:3]))

    @staticmethod
    def _facts(
        func_ir: Any, stmt: Any, kernel: bool, pins: dict[int, tuple[Any, Any]]
    ) -> str | None:
        found = IR.call_facts(func_ir, stmt, kernel, pins)
        return None if found is None else found[1]


# ---------------------------------------------------------------------------
# Numba types as facts


def _hidden(bound: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, str], Block | None]:
    """The lengths, memory spaces and launch shape the hidden keyword's text names."""
    hidden = bound.get(HIDDEN_KW)
    return decode_call_facts(hidden.literal_value if isinstance(hidden, types.Literal) else "")


def _plan(name: str, bound: Mapping[str, Any]) -> Any:
    lengths, memory, launch = _hidden(bound)
    hidden = bound.get(HIDDEN_KW)
    values = decode_call_values(hidden.literal_value if isinstance(hidden, types.Literal) else "")
    visible = {k: v for k, v in bound.items() if k != HIDDEN_KW}
    facts = collect_facts(name, visible, FACTS.converters(lengths, memory, values))
    return plan_call(name, facts, launch)


# The plans of typed calls, by entry point and the bound argument types (the
# hidden keyword's text names the lengths and the launch shape), for lowering.
#: The plans of typed calls, for the lowering of the same calls; the kernel groups.
TYPED = TypedPlans()
#: The calls of the kernels being compiled, one NVRTC unit per kernel.
KERNEL_GROUPS = TYPED.groups


def _typed_key(name: str, bound: Mapping[str, Any]) -> tuple[Any, ...]:
    return (name, tuple(sorted(bound.items())))


#: The calls of the kernels being compiled, one NVRTC unit per kernel (as in
#: the numba-cuda front end).


def launch_block(bound: Mapping[str, Any]) -> Block | None:
    """The launch's block shape the typing recorded for a call (None: not known)."""
    return _hidden(bound)[2]


def typed_plan(name: str, bound: Mapping[str, Any]) -> Any:
    """The plan made when the call with these argument types (by parameter) was typed."""
    plan = TYPED.get(_typed_key(name, bound))
    return plan if plan is not None else _plan(name, bound)


def bound_types(name: str, args: tuple[Any, ...], kws: Mapping[str, Any]) -> dict[str, Any]:
    """A call's argument types by parameter name (the hidden keyword included)."""
    visible = {k: v for k, v in kws.items() if k != HIDDEN_KW}
    bound = bind(name, args, visible)
    if HIDDEN_KW in kws:
        bound[HIDDEN_KW] = kws[HIDDEN_KW]
    return bound


def _make_template(name: str) -> type[AbstractTemplate]:
    def generic(self: Any, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        try:
            bound = bound_types(name, tuple(args), kws)
            plan = _plan(name, bound)
        except (ScanError, statefn.StatefnError) as exc:
            raise Rejection(exc) from None
        ret = FACTS.return_type(plan, bound)
        TYPED.remember(_typed_key(name, bound), plan, self.context)
        return signature(ret, *args, *kws.values())

    return type(
        f"_MlirTemplate_{name}",
        (AbstractTemplate,),
        {"key": FUNCTIONS[name], "prefer_literal": True, "generic": generic},
    )


# ---------------------------------------------------------------------------
# rejections reach the user as they are


for _name, _fn in FUNCTIONS.items():
    extending.typing_registry.register_global(_fn, FACTS.entry_point_type(_make_template(_name)))
extending.refresh_registries(typing=True, target=False, include_uninitialized_cuda=False)


# ---------------------------------------------------------------------------
# block.tile_size: a constant, known when the kernel is typed
#
# The planner adds the hidden keyword (the items array's literal length, the
# launch's block shape) to block.tile_size calls too; the typing computes the
# tile size from it (or threads=) and types the call as that integer literal;
# the lowering stores the constant.

import inspect  # noqa: E402

from numba_cuda_mlir._mlir import ir as _mlir_ir  # noqa: E402
from numba_cuda_mlir._mlir.dialects import arith  # noqa: E402

from .._errors import PlanError  # noqa: E402
from .._plan import tile_size as _tile_size  # noqa: E402

_TILE_SIZE_PUBLIC = inspect.signature(block.tile_size)


@extending.register_planner
class RecordTileSizeFacts(RecordCallFacts):
    """The hidden keyword (items length, launch shape) on ``block.tile_size`` calls."""

    @staticmethod
    def _facts(func_ir: Any, stmt: Any, kernel: bool, *_: Any) -> str | None:
        return IR.tile_size_facts(func_ir, stmt, kernel, block.tile_size)


def _tile_size_of(args: tuple[Any, ...], kws: Mapping[str, Any]) -> int:
    """The tile size a call with these argument types names (rejections raised)."""
    visible = {k: v for k, v in kws.items() if k != HIDDEN_KW}
    try:
        bound = _TILE_SIZE_PUBLIC.bind(*args, **visible).arguments
    except TypeError as exc:
        raise PlanError(f"tile_size: {exc}; call it as block.tile_size(items)") from None
    hidden = kws.get(HIDDEN_KW)
    text = hidden.literal_value if isinstance(hidden, types.Literal) else ""
    lengths, _, launch = decode_call_facts(text)
    items = bound["items"]
    per_thread = (
        items.literal_value if isinstance(items, types.IntegerLiteral) else lengths.get("items")
    )
    threads = bound.get("threads")
    return _tile_size(
        per_thread,
        None if threads is None else FACTS.literal("tile_size", "threads", threads),
        launch,
    )


class _TileSizeTemplate(AbstractTemplate):  # type: ignore[misc]
    key = block.tile_size
    prefer_literal = True

    def generic(self, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        try:
            n = _tile_size_of(tuple(args), kws)
        except ScanError as exc:
            raise Rejection(exc) from None
        return signature(types.IntegerLiteral(n), *args, *kws.values())


extending.typing_registry.register_global(
    block.tile_size, FACTS.entry_point_type(_TileSizeTemplate)
)
extending.refresh_registries(typing=True, target=False, include_uninitialized_cuda=False)


def _lower_tile_size(lower: Any, target: Any, args: Any, kws: Any) -> None:
    arg_types = tuple(lower.get_numba_type(v.name) for v in args)
    kw_types = {k: lower.get_numba_type(v.name) for k, v in kws}
    n = _tile_size_of(arg_types, kw_types)
    lower.store_var(target, arith.constant(_mlir_ir.IntegerType.get_signless(64), n))


extending.lower_builtin(block.tile_size, types.VarArg(types.Any))(_lower_tile_size)


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
    thread_index=mlir_cuda.threadIdx,
    lane_id=mlir_cuda.laneid,
)


def _at_line(exc: ScanError) -> ScanError:
    """A rejection found in the IR, with the file, line and source its ``loc`` names first."""
    loc = getattr(exc, "loc", None)
    if loc is None:
        return exc
    text = linecache.getline(loc.filename, loc.line).strip()
    where = f'File "{loc.filename}", line {loc.line}'
    return type(exc)(f"{where}\n    {text}\n{exc}" if text else f"{where}\n{exc}")


@extending.register_planner
class RewriteTileLoops(extending.WholeFunctionPlanner):  # type: ignore[misc]
    """Check the function's tile loops, then make each ``tiles`` call its loop."""

    def run(self) -> bool:
        func_ir = self.state.func_ir
        kernel = not self.is_device_function
        launch: list[Block | None] = []

        def shape(name: str = "") -> Block | None:
            if not launch:
                _, _, known = decode_call_facts(
                    encode_call_facts({}, None, RecordCallFacts._launch(self))
                )
                launch.append(known)
            return launch[0]

        changed = False
        try:
            LOOPS.check(func_ir, kernel, shape)
            for blk in func_ir.blocks.values():
                body = LOOPS.rewrite(func_ir, blk, kernel, shape)
                if body is not None:
                    blk.body = body
                    changed = True
        except ScanError as exc:
            raise _at_line(exc).with_traceback(None) from None
        return changed


def _tile_helper_template(name: str) -> type[AbstractTemplate]:
    """A call the planner did not see (the function stored or passed): refused at typing."""

    def generic(self: Any, args: tuple[Any, ...], kws: Mapping[str, Any]) -> Any:
        module, _, short = name.rpartition(".")
        raise Rejection(
            PlanError(
                f"{name}: call scan.{module or 'block'}.{short} by name where its result "
                f"is used (for base in {module or 'block'}.{short}(n, items): ...); the "
                "kernel's compiler makes the call its loop and cannot follow the function "
                "through another variable or function"
            )
        )

    return type(
        f"_MlirTemplate_{name}",
        (AbstractTemplate,),
        {"key": _TILE_HELPERS[name], "generic": generic},
    )


for _name, _fn in _TILE_HELPERS.items():
    extending.typing_registry.register_global(
        _fn, FACTS.entry_point_type(_tile_helper_template(_name))
    )
extending.refresh_registries(typing=True, target=False, include_uninitialized_cuda=False)
