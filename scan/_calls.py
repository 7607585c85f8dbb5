# SPDX-License-Identifier: Apache-2.0
"""The call table of :mod:`scan.block`, and the one way from a call to its plan.

Every entry point (``scan``, the four sums and scans, ``load``, ``store``) is
described once here: its parameters in order, their defaults, which are
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

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypeAlias

import attrs

from ._errors import ScanTypeError
from ._plan import (
    ArrayFact,
    Block,
    Operand,
    ScalarFact,
    ScanPlan,
    TileIOPlan,
    TupleFact,
    check_unknown_keywords,
    plan_scan,
    plan_tile_io,
    resolve_block,
)

__all__ = [
    "CALLS",
    "IO_CALLS",
    "MISSING",
    "SCAN_CALLS",
    "Converter",
    "EntryPoint",
    "HostBackend",
    "Param",
    "Role",
    "bind",
    "boolean_operand",
    "collect_facts",
    "host_backend",
    "host_call",
    "kernel_only",
    "plan_call",
    "set_host_backend",
]

Role: TypeAlias = Literal["operand", "array", "index", "literal", "callable"]
Plan: TypeAlias = ScanPlan | TileIOPlan


class _Missing:
    """An argument the call did not pass."""

    def __repr__(self) -> str:
        return "MISSING"


#: Stands for an argument the call did not pass (its default applies).
MISSING: Any = _Missing()


@attrs.frozen
class Param:
    """One parameter of an entry point."""

    name: str
    role: Role
    default: Any = inspect.Parameter.empty
    keyword_only: bool = True


@attrs.frozen
class EntryPoint:
    """One public function of :mod:`scan.block`: its parameters and what it plans.

    Attributes
    ----------
    name : str
    kind : {"scan", "load", "store"}
    params : tuple of Param
        In signature order.
    mode : {"inclusive", "exclusive"} or None
        Fixed by the name, or None for ``scan`` (``mode=`` decides).
    sum : bool
        Whether the operator is fixed to ``+``.
    """

    name: str
    kind: Literal["scan", "load", "store"]
    params: tuple[Param, ...]
    mode: Literal["inclusive", "exclusive"] | None = None
    sum: bool = False
    signature: inspect.Signature = attrs.field(init=False, eq=False, repr=False)

    @signature.default
    def _signature(self) -> inspect.Signature:
        kinds = {
            True: inspect.Parameter.KEYWORD_ONLY,
            False: inspect.Parameter.POSITIONAL_OR_KEYWORD,
        }
        return inspect.Signature(
            [
                inspect.Parameter(p.name, kinds[p.keyword_only], default=p.default)
                for p in self.params
            ]
        )

    @property
    def names(self) -> frozenset[str]:
        """Every parameter name (the accepted keywords)."""
        return frozenset(p.name for p in self.params)


def _p(name: str, role: Role, default: Any = None) -> Param:
    return Param(name, role, default)


_REQUIRED = inspect.Parameter.empty
_OPERANDS = (Param("values", "operand", keyword_only=False), Param("out", "operand", None, False))
_COMMON = (
    _p("temp_storage", "array"),
    _p("threads", "literal"),
    _p("items_per_thread", "literal"),
    _p("auto_sync", "literal", True),
)
_PREFIX = (_p("prefix_op", "callable"), _p("prefix_state", "array"), _p("block_aggregate", "array"))
_SCAN_ALGORITHM = _p("algorithm", "literal")


def _io(name: Literal["load", "store"]) -> EntryPoint:
    array = "src" if name == "load" else "dst"
    oob = (_p("oob_default", "operand"),) if name == "load" else ()
    return EntryPoint(
        name,
        name,
        (
            Param(array, "array", keyword_only=False),
            Param("offset", "index", keyword_only=False),
            Param("items", "operand", keyword_only=False),
            _p("valid_items", "index"),
            *oob,
            _p("algorithm", "literal"),
            *_COMMON,
        ),
    )


def _with_operator(name: str, mode: Literal["inclusive", "exclusive"]) -> EntryPoint:
    operator = (_p("scan_op", "callable", _REQUIRED), _p("initial_value", "operand"))
    params = (*_OPERANDS, *operator, *_PREFIX, _SCAN_ALGORITHM, *_COMMON)
    return EntryPoint(name, "scan", params, mode=mode)


#: Every entry point of :mod:`scan.block`, by name.
CALLS: Mapping[str, EntryPoint] = {
    "scan": EntryPoint(
        "scan",
        "scan",
        (
            *_OPERANDS,
            _p("mode", "literal", _REQUIRED),
            _p("scan_op", "callable", "+"),
            _p("initial_value", "operand"),
            *_PREFIX,
            _SCAN_ALGORITHM,
            *_COMMON,
        ),
    ),
    "inclusive_sum": EntryPoint(
        "inclusive_sum",
        "scan",
        (*_OPERANDS, *_PREFIX, _SCAN_ALGORITHM, *_COMMON),
        mode="inclusive",
        sum=True,
    ),
    "exclusive_sum": EntryPoint(
        "exclusive_sum",
        "scan",
        (*_OPERANDS, *_PREFIX, _SCAN_ALGORITHM, *_COMMON),
        mode="exclusive",
        sum=True,
    ),
    "inclusive_scan": _with_operator("inclusive_scan", "inclusive"),
    "exclusive_scan": _with_operator("exclusive_scan", "exclusive"),
    "load": _io("load"),
    "store": _io("store"),
}
SCAN_CALLS: tuple[str, ...] = tuple(n for n, e in CALLS.items() if e.kind == "scan")
IO_CALLS: tuple[str, ...] = tuple(n for n, e in CALLS.items() if e.kind != "scan")


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
    check_unknown_keywords(name, kwargs, set(entry.names))
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


def _describe(fact: Operand) -> str:
    if isinstance(fact, ArrayFact):
        return f"a {fact.ndim}-D {fact.dtype} array"
    return str(fact.dtype)


def _array(function: str, name: str, fact: Operand | None) -> ArrayFact | None:
    if fact is not None and not isinstance(fact, ArrayFact):
        raise ScanTypeError(
            f"{function}: {name} must be an array (got a scalar of type {fact.dtype})"
        )
    return fact


def _scalar(function: str, name: str, fact: Operand | None) -> ScalarFact | TupleFact | None:
    if isinstance(fact, ArrayFact):
        raise ScanTypeError(f"{function}: {name} must be a scalar")
    return fact


def _index(function: str, name: str, fact: Operand | None) -> None:
    if fact is not None and (isinstance(fact, ArrayFact) or fact.dtype.kind not in "iu"):
        raise ScanTypeError(f"{function}: {name} must be an integer (got {_describe(fact)})")


def plan_call(name: str, facts: Mapping[str, Any], launch: Block | None) -> Plan:
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
    entry = CALLS[name]
    block = resolve_block(name, facts["threads"], launch)
    ipt = facts["items_per_thread"]
    auto_sync = True if facts["auto_sync"] is None else bool(facts["auto_sync"])
    temp = _array(name, "temp_storage", facts["temp_storage"])
    if entry.kind != "scan":
        array_name = "src" if entry.kind == "load" else "dst"
        array = _array(name, array_name, facts[array_name])
        if array is None:
            raise ScanTypeError(f"{name}: {array_name} must be an array")
        items = facts["items"]
        if items is None:
            raise ScanTypeError(f"{name}: items must be a local array")
        oob = _scalar(name, "oob_default", facts.get("oob_default"))
        _index(name, "valid_items", facts["valid_items"])
        _index(name, "offset", facts["offset"])
        return plan_tile_io(
            function=entry.kind,
            array=array,
            items=items,
            algorithm=facts["algorithm"],
            oob_default=oob,
            temp_storage=temp,
            block=block,
            items_per_thread=ipt,
            auto_sync=auto_sync,
        )
    values = facts["values"]
    if values is None:
        raise ScanTypeError(f"{name}: values is required")
    scan_op = "+" if entry.sum else facts["scan_op"]
    return plan_scan(
        function=name,
        values=values,
        out=facts["out"],
        mode=entry.mode or facts["mode"],
        scan_op="+" if scan_op is None else scan_op,
        initial_value=_scalar(name, "initial_value", facts.get("initial_value")),
        prefix_op=facts["prefix_op"],
        prefix_state=_array(name, "prefix_state", facts["prefix_state"]),
        block_aggregate=_array(name, "block_aggregate", facts["block_aggregate"]),
        algorithm=facts["algorithm"],
        temp_storage=temp,
        block=block,
        items_per_thread=ipt,
        auto_sync=auto_sync,
    )


# ---------------------------------------------------------------------------
# host calls


class HostBackend(Protocol):
    """What runs :mod:`scan.block` calls made from Python (the simulator)."""

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
    """The refusal of a block primitive called from host code.

    `simulator` is True when the call reached the simulator (NUMBA_ENABLE_CUDASIM=1
    already set): the advice to set it would then be wrong.
    """
    if simulator:
        return RuntimeError(
            f"scan.block.{name}() was called from host code, not inside a @cuda.jit kernel; "
            "the simulator (NUMBA_ENABLE_CUDASIM=1) runs it only in a kernel launch: "
            "call it from a @cuda.jit function, from every thread of the block, "
            "and launch that with kernel[blocks, threads](...)"
        )
    return RuntimeError(
        f"scan.block.{name}() runs inside @cuda.jit kernels only (all threads of a block "
        "call it); to run kernels without a GPU set NUMBA_ENABLE_CUDASIM=1 before importing numba"
    )


def host_call(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """A public function called from Python: the host backend runs it, or it is refused."""
    if _host is None:
        raise kernel_only(name)
    return _host.call(name, bind(name, args, kwargs))
