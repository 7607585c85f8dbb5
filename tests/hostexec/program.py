# SPDX-License-Identifier: Apache-2.0
"""Harness programs: a kernel's providers, its callbacks and a driver, built and run on the host.

A :class:`Program` is the C++ of one harness: the kernel's unit
(:mod:`hostexec.units`, ``__shared__`` rewritten), the callbacks
(:mod:`hostexec.corpus`) and a driver that a kernel family writes
(:mod:`hostexec.kernels`, :mod:`hostexec.families`, :mod:`hostexec.lookback`): its
kernel body calls each provider through the
family's operand table (:func:`call`), as a front end's lowering does, and its
``main`` reads buffers and parameters, launches, and writes the buffers back.

:func:`run` runs a built program on NumPy inputs in a fresh folder and
returns its buffers; a run that breaks a rule of the runtime raises
:class:`HostViolationError` with the runtime's message, any other failure
:class:`HostRunError`.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scan._primitives import for_plan
from scan._spec import AbiOperand, c_parameters

from . import corpus
from .toolchain import Builder
from .units import kernel_unit, rewrite_shared

__all__ = [
    "Arg",
    "HostRunError",
    "HostViolationError",
    "Program",
    "call",
    "declare",
    "run",
    "run_source",
    "value_decls",
]

#: exit status of a run that broke one of the runtime's rules
VIOLATION = 3


class HostViolationError(AssertionError):
    """The generated code broke a rule the host runtime checks (a race, a bound, a contract)."""


class HostRunError(AssertionError):
    """A harness failed otherwise (it crashed, or timed out)."""


@dataclass(frozen=True)
class Arg:
    """A call's argument, as C++: an array's element pointer, or a scalar's lvalue.

    Attributes
    ----------
    expr : str
        The pointer to the array's first element (arrays), or the scalar
        lvalue (scalars: operands passed through a stack slot).
    length : str or None
        Arrays: their length in elements (a C++ expression); None for a scalar.
    itemsize : int
        Arrays: bytes an element.
    """

    expr: str
    length: str | None = None
    itemsize: int = 0

    @property
    def array(self) -> bool:
        """Whether the argument is an array."""
        return self.length is not None


def _param(op: AbiOperand, args: Mapping[str, Any]) -> str | None:
    names = (op.param,) if isinstance(op.param, str) else (op.param or ())
    for name in names:
        if name in args:
            return name
    return None


def call(plan: Any, symbol: str, args: Mapping[str, Arg | Sequence[Arg]], result: str = "") -> str:
    """A block of C++ calling `plan`'s provider `symbol` with `args` (by parameter name).

    Every operand of the family's table (:attr:`scan._spec.Primitive.operands`)
    is made as the front ends make it: null where the plan does not use it,
    the tile's address and its valid items from the array, offset and count,
    a table of pointers for zipped tile I/O, `result` (a ``value_t``
    variable) for a call that returns its value.
    """
    pre: list[str] = []
    operands: list[str] = []
    for op in for_plan(plan).operands:
        name = _param(op, args)
        if not op.present(plan):
            operands.append("0" if op.integer else "nullptr")
            continue
        kind = op.kind
        if kind == "output":
            if plan.returns_value:
                operands.append(f"(void*)&{result}")
                continue
            name = name or op.alias
        if kind == "count":
            operands.append(f"(long long)({_one(args[name]).expr})" if name else str(op.absent))
            continue
        if name is None:
            raise KeyError(f"{plan.function}: no argument for operand {op.name} ({op.param})")
        given = args[name]
        if kind in ("array", "output"):
            operands.append(f"(void*)({_one(given).expr})")
        elif kind == "value":
            operands.append(f"(const void*)&({_one(given).expr})")
        elif kind == "input":
            arg = _one(given)
            operands.append(f"(void*)({arg.expr})" if arg.array else f"(void*)&({arg.expr})")
        elif kind in ("tile", "tile_valid"):
            assert op.offset is not None
            offset = _one(args[op.offset]).expr
            arrays = list(given) if isinstance(given, Sequence) else [given]
            if kind == "tile":
                pointers = [f"(void*)({a.expr} + ({offset}))" for a in arrays]
                if getattr(plan, "zipped", False):
                    pre.append(f"void* tile_ptrs[{len(arrays)}] = {{{', '.join(pointers)}}};")
                    operands.append("(void*)tile_ptrs")
                else:
                    operands.append(pointers[0])
            else:
                lengths = [f"(long long)({a.length})" for a in arrays]
                length = lengths[0]
                for other in lengths[1:]:
                    length = f"(({other}) < ({length}) ? ({other}) : ({length}))"
                count = op.count if op.count in args else None
                operands.append(
                    f"::hx::tile_valid({length}, (long long)({offset}), "
                    + (f"true, (long long)({_one(args[count]).expr}))" if count else "false, 0)")
                )
        elif kind == "nbytes":
            arg = _one(given)
            operands.append(f"(long long)({arg.length}) * {arg.itemsize}")
        else:
            raise NotImplementedError(kind)
    body = [*pre, f"{symbol}({', '.join(operands)});"]
    return "{ " + " ".join(body) + " }"


def _one(arg: Arg | Sequence[Arg]) -> Arg:
    if isinstance(arg, Arg):
        return arg
    raise TypeError(f"one argument expected, got {arg!r}")


def declare(plan: Any, symbol: str) -> str:
    """The C++ declaration of `plan`'s provider entry point `symbol`."""
    return f'extern "C" int {symbol}({c_parameters(for_plan(plan).operands)});'


@dataclass
class Program:
    """One harness: the kernel's providers and callbacks, and a driver.

    Attributes
    ----------
    name : str
        For messages.
    plans : sequence of plans
        The kernel's calls (every provider the kernel compiles with).
    driver_parts : list of str
        The driver's C++ (kernel body and ``main``); it calls providers by
        the symbols :meth:`symbol` gives.
    extra : sequence of str
        Other generated units the harness compiles (each in a namespace of
        its own), e.g. a tile status's init kernel.
    """

    name: str
    plans: Sequence[Any]
    driver_parts: list[str] = field(default_factory=list)
    extra: Sequence[Any] = ()

    def __post_init__(self) -> None:
        self.unit = kernel_unit([p for p in self.plans if p is not None])

    def symbol(self, plan: Any) -> str:
        """`plan`'s entry point in the kernel's unit."""
        return self.unit.symbol(plan)

    def source(self) -> str:
        """The harness's whole C++ source."""
        unit, site = rewrite_shared(self.unit.source)
        # the unit in a namespace of its own, its includes ahead of it: the
        # types it declares at file scope (one plan's unit has them in an
        # unnamed namespace) stay out of the driver's and the callbacks' way
        lines = unit.splitlines()
        parts = [
            f"// host harness: {self.name}",
            "#include <hostexec/harness.h>",
            *(line for line in lines if line.startswith("#include ")),
            "namespace hostexec_unit {",
            *(line for line in lines if not line.startswith("#include ")),
            "}  // namespace hostexec_unit",
            corpus.definitions(self.unit.plans),
        ]
        for number, extra_source in enumerate(self.extra):
            # in a namespace of its own (its helper types keep their names), its
            # includes ahead of it
            text, site = rewrite_shared(extra_source, site)
            lines = text.splitlines()
            parts += [line for line in lines if line.startswith("#include ")]
            parts.append(f"namespace hostexec_extra_{number} {{")
            parts += [line for line in lines if not line.startswith("#include ")]
            parts.append(f"}}  // namespace hostexec_extra_{number}")
        parts.append("namespace {")
        parts += [declare(p, self.symbol(p)) for p in self.unit.plans]
        parts.append("}  // namespace")
        parts += self.driver_parts
        return "\n".join(parts) + "\n"


def run(
    builder: Builder,
    program: Program,
    buffers: Mapping[str, np.ndarray],
    params: Mapping[str, int],
    *,
    timeout: float = 120,
    counts: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Build `program` (cached), run it on `buffers` and `params`, return every buffer after.

    `counts`, when given, receives the runtime's event counts (e.g. how often
    a look-back met a partial tile).
    """
    return run_source(
        builder, program.source(), program.name, buffers, params, timeout=timeout, counts=counts
    )


def run_source(
    builder: Builder,
    source: str,
    name: str,
    buffers: Mapping[str, np.ndarray],
    params: Mapping[str, int],
    *,
    timeout: float = 120,
    counts: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Build the harness `source` (cached), run it, return every buffer after (see :func:`run`)."""
    exe = builder.build(source, name)
    with tempfile.TemporaryDirectory(prefix="hostexec-run-") as tmp:
        folder = Path(tmp)
        (folder / "params.txt").write_text(
            "".join(f"{k} {int(v)}\n" for k, v in params.items()), encoding="utf-8"
        )
        for name, array in buffers.items():
            np.ascontiguousarray(array).tofile(folder / f"{name}.bin")
        try:
            done = subprocess.run(
                [str(exe), str(folder)], capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            raise HostRunError(f"{name}: timed out after {timeout}s ({exe})") from exc
        if done.returncode == VIOLATION:
            lines = [ln for ln in done.stderr.splitlines() if "hostexec: error" in ln]
            raise HostViolationError(f"{name}: {lines[-1] if lines else done.stderr}")
        if done.returncode != 0:
            raise HostRunError(
                f"{name}: exit status {done.returncode} ({exe})\n{done.stderr[-2000:]}"
            )
        if counts is not None:
            for line in done.stdout.splitlines():
                if line.startswith("hostexec-count "):
                    _, n, event = line.split(" ", 2)
                    counts[event] = counts.get(event, 0) + int(n)
        out = {}
        for name, array in buffers.items():
            data = np.fromfile(folder / f"{name}.out", dtype=array.dtype)
            out[name] = data.reshape(array.shape)
        return out


def value_decls(value_dtype: np.dtype[Any], state_dtype: np.dtype[Any] | None = None) -> str:
    """``value_t`` (and ``state_t``) of a driver, declared as the generated code declares them."""
    from scan._codegen import value_decl

    parts = [value_decl(value_dtype)]
    if state_dtype is not None:
        parts.append(corpus.state_decl(value_dtype, state_dtype))
    return "\n".join(parts)


def array_decl(array_dtype: np.dtype[Any]) -> str:
    """``array_t``: the element type of a driver's rows (half precision, or ``value_t``'s)."""
    from scan._vocab import c_type

    if array_dtype.names is not None or array_dtype.kind == "c":
        return "using array_t = value_t;"
    return f"using array_t = {c_type(array_dtype)};"
