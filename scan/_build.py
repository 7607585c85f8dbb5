# SPDX-License-Identifier: Apache-2.0
"""The build layer: from a plan to the compiled objects a kernel links, for any front end.

:func:`build` is the one way from a plan (of any family: its spec, looked up
in :mod:`scan._primitives`, renders it) to a :class:`Built`: the provider's entry
point, its temp-storage layout, and every LTO-IR object the kernel must link
(the provider's, and the user callbacks' behind the pointer ABI). Callbacks
are compiled by the front end (:class:`CallbackCompiler`: Numba for
numba-cuda kernels), through the persistent cache; providers by NVRTC
(:mod:`scan._compile`). Host-side layout queries
(:func:`temp_storage_layout`) go through the same path.

Nothing here imports Numba.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias

import attrs
import numpy as np

import statefn

from ._cache import Artifact, get_or_build
from ._codegen import CallbackDecl, group_storage, render_group
from ._compile import Provider, check_target, compile_group, compile_provider, provider_layout
from ._errors import PlanError
from ._keys import cache_key, compile_key
from ._plan import resolve_block
from ._primitives import PRIMITIVES, for_layout, for_plan
from ._target import arch
from ._vocab import TempStorageLayout

__all__ = [
    "Built",
    "CallbackCompiler",
    "CallbackDescriptor",
    "CompiledCallback",
    "KernelGroups",
    "LinkInput",
    "build",
    "callback",
    "group_source",
    "provider_group",
    "provider_source",
    "temp_storage_layout",
]

#: A plan of any family (:mod:`scan._primitives`).
Plan: TypeAlias = Any
#: A user callable the build lowers behind the pointer ABI.
CallbackDescriptor: TypeAlias = (
    statefn.StatefulFunction[Any, Any] | statefn.StatelessFunction[Any] | statefn.ScanOperator
)


@attrs.frozen
class CompiledCallback:
    """A callback compiled to the pointer ABI by a front end: symbol, C declaration, LTO-IR.

    ``helpers`` names the front end's own C++ helper functions the LTO-IR
    calls but does not define, each as (owner, name, C++ source), which the
    front end links with the kernel (numba-cuda computes float16 and
    bfloat16 arithmetic through such helpers); empty for most callbacks.
    """

    symbol: str
    c_decl: str
    ltoir: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
    helpers: tuple[tuple[str, str, str], ...] = ()


class CallbackCompiler(Protocol):
    """A front end's compiler of user callbacks (``extern "C"`` pointer-ABI functions)."""

    @property
    def frontend(self) -> str:
        """Name and version of the compiler (part of the callbacks' cache keys)."""

    def __call__(
        self, descriptor: CallbackDescriptor, value_dtype: np.dtype[Any], cc: tuple[int, int]
    ) -> CompiledCallback:
        """Compile `descriptor` for `value_dtype` and `cc`."""


@attrs.frozen
class LinkInput:
    """One LTO-IR object a kernel links: its symbol (the object's name) and bytes.

    ``helpers`` are a callback's :attr:`CompiledCallback.helpers`.
    """

    symbol: str
    ltoir: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
    helpers: tuple[tuple[str, str, str], ...] = ()


@attrs.frozen
class Built:
    """What a kernel needs to call one planned primitive.

    Attributes
    ----------
    symbol : str
        The provider's ``extern "C"`` entry point.
    link : tuple of LinkInput
        The provider's LTO-IR first, then its callbacks'.
    """

    symbol: str
    link: tuple[LinkInput, ...]


def callback(
    descriptor: CallbackDescriptor,
    value_dtype: np.dtype[Any],
    cc: tuple[int, int],
    compiler: CallbackCompiler,
) -> CompiledCallback:
    """A callback compiled for `value_dtype` and `cc`, through the persistent cache."""
    state = (
        statefn.dtype_key(descriptor.state_dtype)
        if isinstance(descriptor, statefn.StatefulFunction)
        else ""
    )
    key = compile_key(
        "callback",
        {
            "descriptor": descriptor.key,
            "value_dtype": statefn.dtype_key(value_dtype),
            "state_dtype": state,
            "frontend": compiler.frontend,
        },
        cc,
    )

    def compile_it() -> Artifact:
        compiled = compiler(descriptor, value_dtype, cc)
        meta: dict[str, str] = {"symbol": compiled.symbol, "c_decl": compiled.c_decl}
        if compiled.helpers:
            meta["helpers"] = json.dumps([list(h) for h in compiled.helpers])
        return Artifact(payload=compiled.ltoir, meta=meta)

    name = getattr(descriptor, "name", None) or getattr(descriptor.op, "__qualname__", "")
    what = f"{name} for {value_dtype.name} values, {arch(cc)} ({compiler.frontend})"
    art = get_or_build("callback", key, compile_it, what=what)
    symbol, decl = art.meta["symbol"], art.meta["c_decl"]
    assert isinstance(symbol, str)
    assert isinstance(decl, str)
    helpers = art.meta.get("helpers")
    found = tuple(
        (str(owner), str(name), str(source))
        for owner, name, source in (json.loads(helpers) if isinstance(helpers, str) else ())
    )
    return CompiledCallback(symbol=symbol, c_decl=decl, ltoir=art.payload, helpers=found)


def build(
    plan: Plan,
    cc: tuple[int, int],
    compiler: CallbackCompiler | None,
    *,
    together: Sequence[Plan] = (),
) -> Built:
    """Compile (or fetch) the provider of `plan` and the callbacks it calls.

    Parameters
    ----------
    plan : a plan of any family
    cc : tuple of int
        Target compute capability.
    compiler : CallbackCompiler or None
        Compiles the plan's user callbacks; only None for plans without any.
    together : sequence of plans
        Plans (`plan` among them) whose providers compile in one NVRTC unit:
        a front end passes the calls of one kernel, which then costs one
        parse of CUB's headers instead of one per call. Only `plan`'s own
        callbacks are linked: the link drops the unit's other providers, and
        their calls of callbacks with them, unless the kernel calls them too
        (and then links their callbacks). Empty or `plan` alone: the
        provider's own unit.
    """
    check_target(cc)  # before any callback or provider is compiled
    group = provider_group(plan, together)
    if len(group) == 1:
        provider = compile_provider(plan.symbol, _source(plan), cc=cc, what=_what(plan))
        unit = LinkInput(plan.symbol, provider.ltoir)
    else:
        name, providers = _group_unit(group, cc)
        provider = providers[plan.symbol]
        unit = LinkInput(name, provider.ltoir)
    compiled = []
    for descriptor in _callbacks(plan):
        done = callback(descriptor, plan.value_dtype, cc, _needed(compiler, plan))
        if done.symbol != statefn.pointer_abi(descriptor, plan.value_dtype)[0]:
            raise TypeError(
                f"{compiler!r} compiled {done.symbol}, not the symbol of statefn.pointer_abi"
            )
        compiled.append(done)
    link = (unit, *(LinkInput(c.symbol, c.ltoir, c.helpers) for c in compiled))
    return Built(provider.symbol, link)


def _shares_storage(plan: Plan) -> bool:
    """Whether `plan`'s provider may use its unit's shared library-owned storage.

    It must own library storage and end with a barrier after its last use of
    it (each family's spec says when: ``Primitive.shares_storage``).
    """
    return for_plan(plan).shares_storage(plan)


def provider_group(plan: Plan, together: Sequence[Plan]) -> tuple[Plan, ...]:
    """`plan` and `together`, one of each provider, in a fixed order (by symbol)."""
    members = {p.symbol: p for p in together}
    members[plan.symbol] = plan
    return tuple(members[s] for s in sorted(members))


class KernelGroups:
    """The calls of each kernel a front end compiles, grouped for one unit per kernel.

    Typing notes every planned call (:meth:`note`) with the outermost function
    being typed (the front end finds it: :func:`scan._numba_facts.typing_root`).
    The first call lowered in a kernel takes every call typed with it
    (:meth:`group`): one NVRTC unit per kernel on a cold cache, whose
    providers overlay one temp storage. The kernel's later calls find that
    group by the kernel's code library. Each kernel has a unit of its own, even
    where it shares calls with another: a unit's overlaid temp storage is sized
    by its own calls, and a kernel with the same calls forms the same unit in
    any process, in any order, so a warm cache serves it.
    """

    def __init__(self) -> None:
        # the plans typed on this thread since the lowering last took them,
        # and the outermost function being typed when they were
        self._pending = threading.local()
        self._lock = threading.Lock()
        #: per kernel code library: each plan's group, by (plan symbol, target)
        self.by_library: weakref.WeakKeyDictionary[
            Any, dict[tuple[str, tuple[int, int]], tuple[Plan, ...]]
        ] = weakref.WeakKeyDictionary()

    def note(self, root: object, plan: Plan) -> None:
        """Record a call typed while the front end typed `root` (its outermost function).

        `root` is opaque here: only its identity is compared, to tell one
        kernel's typing from the next.
        """
        plans: dict[str, Plan] | None = getattr(self._pending, "plans", None)
        if plans is None or getattr(self._pending, "root", None) is not root:
            # another kernel's typing began: plans left by one that failed are dropped
            plans = self._pending.plans = {}
            self._pending.root = root
        plans[plan.symbol] = plan

    def take(self) -> list[Plan]:
        """The plans typed on this thread since the last call (the kernel being compiled)."""
        plans: dict[str, Plan] = getattr(self._pending, "plans", None) or {}
        self._pending.plans = {}
        return list(plans.values())

    def group(self, plan: Plan, cc: tuple[int, int], library: Any) -> tuple[Plan, ...]:
        """The plans compiling in one unit with `plan`'s, for the kernel of `library`."""
        with self._lock:
            groups = self.by_library.setdefault(library, {})
            found = groups.get((plan.symbol, cc))
            if found is not None:
                return found
            group = provider_group(plan, self.take())
            for member in group:
                groups.setdefault((member.symbol, cc), group)
            return group


# Units of several providers already rendered and compiled in this process, by
# (unit name, target): the other calls of a kernel find theirs here instead of
# rendering and hashing the unit again. Values: the unit's name and each
# member's provider, by the member's own symbol.
_units: dict[tuple[str, tuple[int, int]], dict[str, Provider]] = {}
_units_lock = threading.Lock()


def group_source(group: Sequence[Plan]) -> tuple[str, str, tuple[str, ...]]:
    """The unit `group`'s providers compile in: its name, its C++, each member's entry point.

    `group` is a :func:`provider_group` of several plans; the entry points
    (local to the unit) are in the group's order. Tests that run the
    generated code on the host compile exactly this text.
    """
    tag = cache_key("group", {"plans": " ".join(p.key for p in group)})[:12]
    name = f"statefn_scan_group_{tag}"
    storage = group_storage(name)
    units = []
    for p in group:
        shares = _shares_storage(p)
        local = f"{p.symbol}_{tag}"
        units.append((local, _source(p, local, storage if shares else None), shares))
    return name, render_group(name, units), tuple(local for local, _, _ in units)


def _group_unit(group: Sequence[Plan], cc: tuple[int, int]) -> tuple[str, dict[str, Provider]]:
    """The name of `group`'s unit and its members' providers (compiled or fetched)."""
    tag = cache_key("group", {"plans": " ".join(p.key for p in group)})[:12]
    name = f"statefn_scan_group_{tag}"
    with _units_lock:
        found = _units.get((name, cc))
    if found is None:
        name, source, symbols = group_source(group)
        compiled = compile_group(
            name,
            list(symbols),
            source,
            cc=cc,
            what=f"{name} ({len(group)} providers: " + "; ".join(_what(p) for p in group) + ")",
        )
        found = {p.symbol: compiled[local] for p, local in zip(group, symbols, strict=True)}
        with _units_lock:
            _units[(name, cc)] = found
    return name, found


def _callbacks(plan: Plan) -> list[CallbackDescriptor]:
    return for_plan(plan).callbacks(plan)


def provider_source(plan: Plan) -> str:
    """The C++ of `plan`'s provider compiled alone (its own unit, as :func:`build` compiles it)."""
    return _source(plan)


def _source(plan: Plan, symbol: str | None = None, storage: str | None = None) -> str:
    """The provider's C++: callbacks are declared by their pointer-ABI symbols only.

    `symbol` and `storage`: the entry point's name and the shared storage
    function in a unit of several providers (:func:`scan._codegen.render_group`).
    """
    decls = []
    for descriptor in _callbacks(plan):
        callback_symbol, c_decl = statefn.pointer_abi(descriptor, plan.value_dtype)
        decls.append(CallbackDecl(symbol=callback_symbol, c_decl=c_decl))
    return for_plan(plan).render(plan, decls, symbol, storage)


def _what(plan: Plan) -> str:
    """The plan in a few words, for the log."""
    shape = "x".join(str(d) for d in plan.block if d > 1) or "1"
    algorithm = getattr(plan, "algorithm", None)  # warp scans have none
    return (
        f"{plan.symbol} ({for_plan(plan).describe(plan)} of {plan.value_dtype.name}, "
        f"{shape} threads x {plan.items_per_thread} items"
        + (f", {algorithm})" if algorithm else ")")
    )


def _needed(compiler: CallbackCompiler | None, plan: Plan) -> CallbackCompiler:
    if compiler is None:
        raise TypeError(f"{plan.symbol}: building user callbacks needs a callback compiler")
    return compiler


def temp_storage_layout(
    primitive: str,
    dtype: np.dtype[Any],
    threads: int | tuple[int, ...],
    items_per_thread: int,
    *,
    algorithm: str | None,
    cc: tuple[int, int],
) -> TempStorageLayout:
    """(size, alignment) of `primitive`'s TempStorage, from compiled code."""
    name = f"temp_storage({primitive!r})"
    blk = resolve_block(name, threads, None)
    spec = for_layout(primitive)
    if spec is None or spec.layout_plan is None:
        names = [n for s in PRIMITIVES for n in s.layout_names]
        raise PlanError(
            f"temp_storage: primitive must be {', '.join(map(repr, names[:-1]))} or "
            f"{names[-1]!r} (got {primitive!r})"
        )
    plan = spec.layout_plan(primitive, np.dtype(dtype), blk, items_per_thread, algorithm)
    check_target(cc)
    # the provider alone: its layout needs no callback code
    size, alignment = provider_layout(plan.symbol, _source(plan), cc=cc, what=_what(plan))
    # numba-cuda allocates aligned shared arrays in multiples of 8 bytes
    return TempStorageLayout(size, max(alignment, 8))
