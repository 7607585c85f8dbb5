# SPDX-License-Identifier: Apache-2.0
"""The benchmarks' layout: shared modules, one case script per family, no sideways imports.

``bench/`` holds shared modules (a leading underscore: ``_harness``, ``_common``,
``_toolchain``, ...) and case scripts (the rest: ``rowscan``, ``reduce_bench``,
``run_all``, ...). A module of ``bench/`` imports shared modules, the library and
third-party packages, never a case script other than itself: what two scripts
share lives in a shared module. The imports are read from the source, those inside
functions included, and so are the ``import`` lines of the child-process sources a
script holds as strings (a child runs with ``bench/`` on its path). ``run_all``
runs the case scripts in subprocesses, by path.

``bench/`` (Python and CUDA C++) stays no larger than the library (``scan/`` and
``statefn/``, Python).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
MODULES = sorted(p.stem for p in BENCH.glob("*.py"))
CASES = [m for m in MODULES if not m.startswith("_")]

#: ``import a, b`` / ``from a import b`` lines inside a string (a child's source)
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w., ]+))", re.M)


def _imported(path: Path) -> set[str]:
    """Top-level names of every module `path` imports, in code or in child sources."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for found in _IMPORT_LINE.finditer(node.value):
                if found.group(1):
                    names.add(found.group(1).split(".")[0])
                else:
                    for part in found.group(2).split(","):
                        words = part.split()
                        if words:
                            names.add(words[0].split(".")[0])
    return names


def test_bench_has_cases_and_shared_modules() -> None:
    assert "run_all" in CASES
    assert {"_harness", "_common", "_toolchain", "_report"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_no_module_imports_another_case_script(module: str) -> None:
    sideways = sorted((_imported(BENCH / f"{module}.py") & set(CASES)) - {module})
    assert not sideways, (
        f"bench/{module}.py imports the case script(s) {sideways}: move what it uses "
        "into a shared module (bench/_*.py)"
    )


def _lines(paths: list[Path]) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def test_bench_is_no_larger_than_the_library() -> None:
    bench = _lines([p for p in BENCH.iterdir() if p.suffix in (".py", ".cu", ".cuh")])
    library = _lines(
        [*ROOT.joinpath("scan").rglob("*.py"), *ROOT.joinpath("statefn").rglob("*.py")]
    )
    assert bench <= library, f"bench/ has {bench} lines, scan/ + statefn/ {library}"
