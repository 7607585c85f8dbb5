# SPDX-License-Identifier: Apache-2.0
"""Generate ``scan/block.pyi`` and ``scan/warp.pyi`` from declarations, and check them.

Run from the repository root::

    python -m scan._stubgen --check   # exit 1 with a unified diff when a stub is stale
    python -m scan._stubgen --write   # rewrite the stubs

Where each part of the stub comes from:

- every entry point's parameters (names, order, defaults, keyword-only flags):
  :data:`scan._calls.CALLS`; the host helpers' (``temp_storage``,
  ``tile_size``, ``tiles``, ``launch_shape``; ``scan.warp``'s ``tile_size`` and
  ``tiles``): ``inspect.signature`` of the functions in
  :mod:`scan.block`;
- each overload's types (one :class:`~scan._primitives._stubs_common.Arg` per
  parameter: its type and whether the overload requires it), the comments
  between overloads and their order: the tables of
  :mod:`scan._primitives.tile_io._stubs` and :mod:`scan._primitives.block_scan._stubs`;
- the preamble (the notes, imports, type variables, aliases, marker types) and
  the helpers' types: :mod:`scan._primitives._stubs_common`, with
  ``__all__`` from :mod:`scan.block` (sorted), and the value dtypes, modes and
  algorithms from :mod:`scan._vocab`; the fields of the named tuples
  (``TempStorageLayout``, ``LaunchShape``): the classes in :mod:`scan.block`.

An overload that names a parameter the signature lacks, misses one, orders
them differently, or leaves optional a parameter without a default is refused
with a :class:`StubTableError` naming the function, the overload and the
parameter. The text is laid out as ``ruff format`` lays out a stub (a
signature on one line when it fits in 100 columns, else its parameters on one
indented line when they fit, else one per line), so the generated file passes
``ruff format --check``. ``tests/typing/test_stubs_generated.py`` fails when
the committed ``block.pyi`` is not :func:`render`'s output, or ``warp.pyi``
not :func:`render_warp`'s: the warp scans' overload tables
(:data:`scan._primitives.block_scan._stubs.WARP_FUNCTIONS`) after a preamble that
imports ``block.pyi``'s type variables and aliases
(:data:`~scan._primitives._stubs_common.WARP_DECLARATIONS`).
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import string
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ForwardRef

from . import _vocab, block, warp
from ._primitives import PRIMITIVES, module_calls
from ._primitives._stubs_common import (
    DECLARATIONS,
    HEADER,
    HELPERS,
    NAMED_TUPLES,
    WARP_DECLARATIONS,
    WARP_HEADER,
    WARP_HELPERS,
    Comment,
    Overload,
    StubFunction,
)
from ._primitives.warp_io import ALGORITHMS as WARP_IO_ALGORITHMS

__all__ = [
    "ENTRY_POINTS",
    "STUB_PATH",
    "WARP_ENTRY_POINTS",
    "WARP_STUB_PATH",
    "StubTableError",
    "diff",
    "main",
    "render",
    "render_warp",
]

#: The committed stub files.
STUB_PATH = Path(__file__).resolve().with_name("block.pyi")
WARP_STUB_PATH = Path(__file__).resolve().with_name("warp.pyi")
#: The overload tables of scan.block's entry points, in file order.
ENTRY_POINTS: tuple[StubFunction, ...] = tuple(
    f for spec in PRIMITIVES if spec.calls[0].module == "block" for f in spec.stubs
)
#: The overload tables of scan.warp's entry points, in file order.
WARP_ENTRY_POINTS: tuple[StubFunction, ...] = tuple(
    f for spec in PRIMITIVES if spec.calls[0].module == "warp" for f in spec.stubs
)

_LINE_LENGTH = 100  # pyproject.toml's [tool.ruff] line-length
_INDENT = "    "
#: The ``Literal`` aliases whose strings are the vocabulary's.
_VOCABULARY_LITERALS = {
    "_ModeCodes": _vocab.MODES,
    "_ScanAlgorithmCodes": _vocab.SCAN_ALGORITHMS,
    "_TileAlgorithmCodes": _vocab.IO_ALGORITHMS,
}
_LABEL = "scan/block.pyi"

#: The entry points of scan.block and scan.warp, by name (block.pyi and warp.pyi type them).
_BLOCK = module_calls("block")
_WARP = module_calls("warp")


class StubTableError(ValueError):
    """An overload table that disagrees with the signature it types."""


def render(entry_points: Sequence[StubFunction] = ENTRY_POINTS) -> str:
    """The text of ``scan/block.pyi``.

    Parameters
    ----------
    entry_points : sequence of StubFunction
        The overload tables, one per entry point of :data:`scan._calls.CALLS`,
        in file order (default: :data:`ENTRY_POINTS`).

    Raises
    ------
    StubTableError
        When a table disagrees with the call table (see the module docstring).
    """
    stubbed = {*NAMED_TUPLES, *(h.name for h in HELPERS)}
    _check_coverage(entry_points, _BLOCK, "scan.block", set(block.__all__), stubbed)
    named_tuples = "\n".join(_named_tuple(name) for name in NAMED_TUPLES)
    parts = [HEADER, "\n", _declarations(), named_tuples, "\n"]
    for helper in HELPERS:
        signature = inspect.signature(getattr(block, helper.name))
        parts.append(_render_function(helper, signature, f"scan.block.{helper.name}"))
    for function in entry_points:
        source = f"scan._calls.CALLS[{function.name!r}]"
        parts.append(_render_function(function, _BLOCK[function.name].signature, source))
    return "".join(parts)


def render_warp(entry_points: Sequence[StubFunction] = WARP_ENTRY_POINTS) -> str:
    """The text of ``scan/warp.pyi`` (`entry_points` as in :func:`render`, for scan.warp)."""
    helpers = {h.name for h in WARP_HELPERS}
    _check_coverage(entry_points, _WARP, "scan.warp", set(warp.__all__), helpers)
    derived = {
        "all": _list_statement("__all__", sorted(warp.__all__)),
        "_WarpIOAlgorithmCodes": _literal_alias("_WarpIOAlgorithmCodes", WARP_IO_ALGORITHMS),
    }
    try:
        declarations = string.Template(WARP_DECLARATIONS).substitute(derived)
    except (KeyError, ValueError) as exc:
        raise StubTableError(
            f"WARP_DECLARATIONS: unknown or malformed placeholder: {exc}"
        ) from None
    parts = [WARP_HEADER, "\n", declarations, "\n"]
    for helper in WARP_HELPERS:
        signature = inspect.signature(getattr(warp, helper.name))
        parts.append(_render_function(helper, signature, f"scan.warp.{helper.name}"))
    for function in entry_points:
        source = f"scan._calls.CALLS['warp.{function.name}']"
        parts.append(_render_function(function, _WARP[function.name].signature, source))
    return "".join(parts)


def diff(path: Path = STUB_PATH, *, module: str = "block") -> str:
    """A unified diff from the file at `path` to the text of `module`'s stub; empty when equal."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    default = STUB_PATH if module == "block" else WARP_STUB_PATH
    label = f"scan/{module}.pyi" if path == default else str(path)
    text = render() if module == "block" else render_warp()
    return "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=label,
            tofile=f"{label} (generated)",
        )
    )


def main(
    argv: Sequence[str] | None = None,
    *,
    path: Path = STUB_PATH,
    warp_path: Path = WARP_STUB_PATH,
) -> int:
    """``python -m scan._stubgen --check|--write``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m scan._stubgen",
        description="Generate scan/block.pyi and scan/warp.pyi from the call table and the "
        "overload tables.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--check", action="store_true", help="exit 1 with a diff when a file is stale"
    )
    action.add_argument("--write", action="store_true", help="rewrite the files")
    args = parser.parse_args(argv)
    status = 0
    for module, target, default in (
        ("block", path, STUB_PATH),
        ("warp", warp_path, WARP_STUB_PATH),
    ):
        label = f"scan/{module}.pyi" if target == default else str(target)
        if args.write:
            text = render() if module == "block" else render_warp()
            if target.exists() and target.read_text(encoding="utf-8") == text:
                print(f"{label} is up to date")
            else:
                with target.open("w", encoding="utf-8", newline="\n") as f:
                    f.write(text)
                print(f"wrote {label}")
            continue
        changes = diff(target, module=module)
        if not changes:
            print(f"{label} is up to date")
            continue
        sys.stdout.write(changes)
        print(f"{label} is stale: run python -m scan._stubgen --write", file=sys.stderr)
        status = 1
    return status


# ---------------------------------------------------------------------------
# checks


def _check_coverage(
    entry_points: Sequence[StubFunction],
    calls: Mapping[str, Any],
    module: str,
    exports: set[str],
    others: set[str] | None = None,
) -> None:
    """Each of `module`'s entry points (`calls`) has one table, and the stub declares its
    exports (the tables' functions and `others`)."""
    names = [f.name for f in entry_points]
    for name in names:
        if name not in calls:
            raise StubTableError(f"{name}: not an entry point of {module} in scan._calls.CALLS")
        if names.count(name) > 1:
            raise StubTableError(f"{name}: more than one overload table")
    for name in calls:
        if name not in names:
            raise StubTableError(
                f"{name}: an entry point of {module} in scan._calls.CALLS without overloads"
            )
    stubbed = {*(others or set()), *names}
    if stubbed != exports:
        raise StubTableError(
            f"the stub declares {sorted(stubbed)}, {module} exports {sorted(exports)}"
        )


def _check_overload(
    overload: Overload, signature: inspect.Signature, where: str, source: str
) -> None:
    names = [a.name for a in overload.args]
    expected = list(signature.parameters)
    for name in names:
        if names.count(name) > 1:
            raise StubTableError(f"{where}: parameter {name!r} is listed more than once")
        if name not in expected:
            raise StubTableError(f"{where}: parameter {name!r} is not a parameter of {source}")
    for name in expected:
        if name not in names:
            raise StubTableError(f"{where}: parameter {name!r} of {source} is missing")
    for position, (name, want) in enumerate(zip(names, expected, strict=True)):
        if name != want:
            raise StubTableError(
                f"{where}: parameter {name!r} is out of order: {source} has {want!r} "
                f"at position {position} (order {', '.join(expected)})"
            )
    optional_positional = None
    for arg, param in zip(overload.args, signature.parameters.values(), strict=True):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise StubTableError(f"{where}: parameter {arg.name!r} is {param.kind.description}")
        if not arg.required and param.default is param.empty:
            raise StubTableError(
                f"{where}: parameter {arg.name!r} has no default in {source}; "
                "the overload must require it"
            )
        if param.kind is param.POSITIONAL_OR_KEYWORD:
            if arg.required and optional_positional is not None:
                raise StubTableError(
                    f"{where}: parameter {arg.name!r} is required after the optional "
                    f"positional parameter {optional_positional!r}"
                )
            if not arg.required:
                optional_positional = arg.name


# ---------------------------------------------------------------------------
# text


def _render_function(function: StubFunction, signature: inspect.Signature, source: str) -> str:
    overloads = function.overloads
    if not overloads:
        raise StubTableError(f"{function.name}: no overloads")
    lines = []
    for entry in function.entries:
        if isinstance(entry, Comment):
            for line in entry.text.splitlines():
                if not line.startswith("#"):
                    raise StubTableError(f"{function.name}: comment line {line!r} lacks '#'")
            lines.append("\n" + entry.text + "\n" + ("\n" if entry.blank_after else ""))
            continue
        where = f"{function.name}, overload {overloads.index(entry) + 1} of {len(overloads)}"
        _check_overload(entry, signature, where, source)
        decorator = "@overload\n" if len(overloads) > 1 else ""
        lines.append(decorator + _render_def(function.name, entry, signature, where) + "\n")
    return "".join(lines)


def _render_def(name: str, overload: Overload, signature: inspect.Signature, where: str) -> str:
    params: list[str] = []
    for arg, param in zip(overload.args, signature.parameters.values(), strict=True):
        if param.kind is param.KEYWORD_ONLY and "*" not in params:
            params.append("*")
        text = f"{arg.name}: {arg.type}"
        if not arg.required:
            text += f" = {_default(param.default, arg.name, where)}"
        params.append(text)
    close = f") -> {overload.returns}: ..."
    ignore = f"  # type: ignore[{overload.ignore}]" if overload.ignore else ""
    flat = f"def {name}({', '.join(params)}{close}"
    if len(flat) <= _LINE_LENGTH and not ignore:
        return flat
    hugged = _INDENT + ", ".join(params)
    if len(hugged) <= _LINE_LENGTH and len(close) <= _LINE_LENGTH:
        return f"def {name}({ignore}\n{hugged}\n{close}"
    exploded = [f"def {name}({ignore}", *(f"{_INDENT}{p}," for p in params), close]
    for line in exploded:
        if len(line) > _LINE_LENGTH:
            raise StubTableError(
                f"{where}: {line.strip()!r} is longer than {_LINE_LENGTH} columns "
                "(name the type with an alias in the preamble)"
            )
    return "\n".join(exploded)


def _default(value: Any, name: str, where: str) -> str:
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, str) and value.isprintable() and not set(value) & {'"', "\\"}:
        return f'"{value}"'
    raise StubTableError(f"{where}: cannot write the default of {name!r} ({value!r})")


def _declarations() -> str:
    derived = {
        "all": _list_statement("__all__", sorted(block.__all__)),
        "value_types": _value_types(),
        **{name: _literal_alias(name, values) for name, values in _VOCABULARY_LITERALS.items()},
        "_PrimitiveCodes": _literal_alias(
            "_PrimitiveCodes", [n for spec in PRIMITIVES for n in spec.layout_names]
        ),
        "families": "".join(
            "".join(_literal_alias(n, v) + "\n" for n, v in spec.stub_literals.items())
            + spec.stub_declarations
            for spec in PRIMITIVES
        ),
    }
    try:
        return string.Template(DECLARATIONS).substitute(derived)
    except (KeyError, ValueError) as exc:
        raise StubTableError(f"DECLARATIONS: unknown or malformed placeholder: {exc}") from None


def _quoted(values: Iterable[str]) -> list[str]:
    return [f'"{v}"' for v in values]


def _list_statement(name: str, values: Iterable[str]) -> str:
    items = _quoted(values)
    flat = f"{name} = [{', '.join(items)}]"
    if len(flat) <= _LINE_LENGTH:
        return flat
    return "\n".join([f"{name} = [", *(f"{_INDENT}{item}," for item in items), "]"])


def _literal_alias(name: str, values: Iterable[str]) -> str:
    items = _quoted(values)
    head = f"{name}: TypeAlias = Literal["
    flat = f"{head}{', '.join(items)}]"
    if len(flat) <= _LINE_LENGTH:
        return flat
    hugged = _INDENT + ", ".join(items)
    if len(hugged) <= _LINE_LENGTH:
        return f"{head}\n{hugged}\n]"
    return "\n".join([head, *(f"{_INDENT}{item}," for item in items), "]"])


def _value_types() -> str:
    """The value dtypes as TypeVar constraints, one line per kind (signed, unsigned, float,
    complex), and bfloat16 (``ml_dtypes.bfloat16``) last."""
    kinds: dict[str, list[str]] = {}
    for dtype in _vocab.VALUE_DTYPES:
        kinds.setdefault(dtype.kind, []).append(f"np.{dtype.name},")
    kinds["bfloat16"] = ["ml_dtypes.bfloat16,"]
    return "\n".join(_INDENT + " ".join(names) for names in kinds.values())


def _named_tuple(name: str) -> str:
    cls = getattr(block, name)
    lines = [f"class {cls.__name__}(NamedTuple):"]
    for field in cls._fields:
        annotation = cls.__annotations__[field]
        if isinstance(annotation, ForwardRef):
            annotation = annotation.__forward_arg__
        if not isinstance(annotation, str):
            raise StubTableError(f"{cls.__name__}.{field}: annotation {annotation!r} is not text")
        lines.append(f"{_INDENT}{field}: {annotation}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
