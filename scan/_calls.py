# SPDX-License-Identifier: Apache-2.0
"""The call table of :mod:`scan.block`, and the one way from a call to its plan.

Every entry point is declared once, by its family's spec
(:mod:`scan._primitives`): its parameters in order, their defaults, which are
keyword-only, and the *role* of each, which says what a front end must tell
the planner about the argument:

=============  ===========================================================
role           fact handed to :func:`plan_call`
=============  ===========================================================
``operand``    :class:`~scan._plan.ScalarFact` or :class:`~scan._plan.ArrayFact`
``array``      the same; the planner refuses scalars
``index``      a :class:`~scan._plan.ScalarFact` (a runtime integer)
``literal``    the Python value written in the kernel (``threads=128``)
``callable``   the object passed (descriptor, function, operator string)
=============  ===========================================================

A front end binds a call with :func:`bind`, turns each bound argument into its
fact with converters of its own (from Numba types, or from the simulator's
runtime values) through :func:`collect_facts`, and calls :func:`plan_call`. So
the compiled path and the simulator accept, refuse and plan every call alike.

The module also holds the host-side hook of the public functions: under the
simulator a front end installs a :class:`HostBackend` that runs them; without
one they refuse host calls.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeAlias

from ._errors import ScanTypeError
from ._plan import Block, check_unknown_keywords, resolve_block
from ._primitives import CALLS, for_call
from ._spec import EntryPoint, Param, Role

__all__ = [
    "CALLS",
    "MISSING",
    "Converter",
    "EntryPoint",
    "HostBackend",
    "Param",
    "Role",
    "bind",
    "boolean_operand",
    "collect_facts",
    "entry_point_function",
    "host_backend",
    "host_call",
    "kernel_only",
    "plan_call",
    "public_functions",
    "set_host_backend",
]


class _Missing:
    """An argument the call did not pass."""

    def __repr__(self) -> str:
        return "MISSING"


#: Stands for an argument the call did not pass (its default applies).
MISSING: Any = _Missing()

# ---------------------------------------------------------------------------
# binding and facts


def bind(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Bind a call's arguments to the entry point's parameters (only those passed).

    Raises
    ------
    PlanError
        For an unknown or retired keyword, naming the right one.
    ScanTypeError
        For any other binding error (missing or surplus arguments).
    """
    entry = CALLS[name]
    check_unknown_keywords(name, kwargs, set(entry.names), for_call(name).keyword_hint)
    try:
        bound = entry.signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise ScanTypeError(f"{name}: {exc}; see help(scan.block.{name})") from None
    return dict(bound.arguments)


#: A front end's converter for one role: (function, parameter name, value) -> fact.
Converter: TypeAlias = Callable[[str, str, Any], Any]


def collect_facts(
    name: str, bound: Mapping[str, Any], converters: Mapping[Role, Converter]
) -> dict[str, Any]:
    """The facts of every parameter: ``converters[role](name, param, value)``.

    Parameters not passed are given as :data:`MISSING`; converters turn that
    (and an explicit None) into None.
    """
    return {
        p.name: converters[p.role](name, p.name, bound.get(p.name, MISSING))
        for p in CALLS[name].params
    }


def boolean_operand(function: str, name: str) -> ScanTypeError:
    """The refusal of a boolean operand (front ends see booleans differently)."""
    return ScanTypeError(f"{function}: {name} is a boolean; use an integer dtype")


def plan_call(name: str, facts: Mapping[str, Any], launch: Block | None) -> Any:
    """Check one call and build its plan: the only planner every front end uses.

    Parameters
    ----------
    name : str
        The entry point (a key of :data:`CALLS`).
    facts : mapping
        Every parameter's fact (see the module docstring), None where not passed.
    launch : tuple of int or None
        The launch's block shape, when known.

    Raises
    ------
    PlanError, ScanTypeError, statefn.StatefnError
        For every call the library refuses, before any code is generated.
    """
    block = resolve_block(name, facts["threads"], launch)
    auto_sync = facts.get("auto_sync")  # block calls only (warp calls have no barrier)
    auto_sync = True if auto_sync is None else bool(auto_sync)
    return for_call(name).plan(CALLS[name], {**facts, "auto_sync": auto_sync}, block)


# ---------------------------------------------------------------------------
# host calls


class HostBackend(Protocol):
    """What runs :mod:`scan.block` calls made from Python (the simulator).

    Attributes
    ----------
    simulated : bool
        Whether kernels run in the simulator (host objects such as tile
        statuses are then simulated too), or on a GPU.
    """

    simulated: bool

    def call(self, name: str, bound: Mapping[str, Any]) -> Any:
        """Run entry point `name` with its bound arguments for the calling thread."""

    def default_cc(self) -> tuple[int, int]:
        """The compute capability host-side queries use when none is given."""


_host: HostBackend | None = None


def set_host_backend(backend: HostBackend | None) -> None:
    """Install (or remove, with None) the backend that runs host calls."""
    global _host  # one process-wide hook, set when scan is imported
    _host = backend


def host_backend() -> HostBackend | None:
    """The installed host backend, if any."""
    return _host


def kernel_only(name: str, *, simulator: bool = False) -> RuntimeError:
    """The refusal of a kernel-side function (entry-point key `name`) called from host code.

    `simulator` is True when the call reached the simulator (NUMBA_ENABLE_CUDASIM=1
    already set): the advice to set it would then be wrong.
    """
    name = name if "." in name else f"block.{name}"
    if simulator:
        return RuntimeError(
            f"scan.{name}() was called from host code, not inside a @cuda.jit kernel; "
            "the simulator (NUMBA_ENABLE_CUDASIM=1) runs it only in a kernel launch: "
            "call it from a @cuda.jit function, from every thread of the block, "
            "and launch that with kernel[blocks, threads](...)"
        )
    return RuntimeError(
        f"scan.{name}() runs inside @cuda.jit kernels only (all threads of a block "
        "call it); to run kernels without a GPU set NUMBA_ENABLE_CUDASIM=1 before importing numba"
    )


def public_functions() -> dict[str, Callable[..., Any]]:
    """Each entry point's public function (``scan.block.inclusive_sum``, ...), by key.

    Imports the modules that hold them; call it once they can be imported
    (the front ends do, after :mod:`scan.block`).
    """
    return {
        key: getattr(importlib.import_module(f"scan.{entry.module}"), entry.name)
        for key, entry in CALLS.items()
    }


def entry_point_function(entry: EntryPoint) -> Callable[..., Any]:
    """The public function of a call of the registry: its signature and docstring from the spec.

    Kernel code calls it (the front ends type and lower it); host code reaches
    :func:`host_call`.
    """
    key = entry.key

    def call(*args: Any, **kwargs: Any) -> Any:
        return host_call(key, args, kwargs)

    call.__name__ = call.__qualname__ = entry.name
    call.__module__ = f"scan.{entry.module}"
    call.__doc__ = for_call(key).docs[entry.name]
    call.__signature__ = entry.signature  # type: ignore[attr-defined]
    return call


def host_call(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """A public function called from Python: the host backend runs it, or it is refused."""
    if _host is None:
        raise kernel_only(name)
    return _host.call(name, bind(name, args, kwargs))
