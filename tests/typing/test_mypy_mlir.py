# SPDX-License-Identifier: Apache-2.0
"""The typing corpus under numba-cuda-mlir: the same kernels, ``from numba_cuda_mlir import cuda``.

Every pass and fail file is copied with its ``from numba import cuda`` line
swapped for ``from numba_cuda_mlir import cuda`` and checked by
``test_mypy.py``'s rules: the pass copies are clean under ``mypy --strict``
and each fail copy reports its expected error on its marked line. The types
come from ``typing_stubs/numba_cuda_mlir-stubs`` (no numba-cuda-mlir install
is needed to check kernels).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_corpus_mypy", HERE / "test_mypy.py")
assert _spec is not None
assert _spec.loader is not None
corpus: Any = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = corpus  # dataclasses look their module up
_spec.loader.exec_module(corpus)

IMPORT = "from numba import cuda\n"
MLIR_IMPORT = "from numba_cuda_mlir import cuda\n"


def _copies(files: list[Path], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if IMPORT not in text:
            continue
        copy = folder / path.name
        copy.write_text(text.replace(IMPORT, MLIR_IMPORT), encoding="utf-8")
        out.append(copy)
    return out


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # inside the repository: mypy resolves statefn and scan from the working directory
    root = tmp_path_factory.mktemp("mlir-corpus")
    _copies(corpus.PASS_FILES, root / "pass")
    _copies(corpus.FAIL_FILES, root / "fail")
    return root


@pytest.fixture(scope="module")
def reports(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    files = sorted(str(p) for p in corpus_dir.rglob("*.py"))
    return corpus._run_mypy(files, tmp_path_factory.mktemp("mypy-cache-mlir"))  # type: ignore[no-any-return]


def test_every_corpus_file_has_a_copy(corpus_dir: Path) -> None:
    assert len(list((corpus_dir / "pass").glob("*.py"))) >= 15
    assert len(list((corpus_dir / "fail").glob("*.py"))) >= 20


@pytest.mark.parametrize("name", [p.name for p in corpus.PASS_FILES])
def test_pass_copy_is_clean(name: str, corpus_dir: Path, reports: list[Any]) -> None:
    path = corpus_dir / "pass" / name
    if not path.exists():
        pytest.skip("no `from numba import cuda` line to swap")
    errors = corpus._errors_in(reports, path)
    assert not errors, "\n".join(f"{name}:{e.line}: {e.message} [{e.code}]" for e in errors)


@pytest.mark.parametrize("name", [p.name for p in corpus.FAIL_FILES])
def test_fail_copy_reports_expected_error(name: str, corpus_dir: Path, reports: list[Any]) -> None:
    path = corpus_dir / "fail" / name
    if not path.exists():
        pytest.skip("no `from numba import cuda` line to swap")
    text = path.read_text(encoding="utf-8")
    if corpus._XFAIL.search(text):
        pytest.xfail("xfail under numba-cuda too")
    expected = {
        n: (m["code"], m["fragment"])
        for n, line in enumerate(text.splitlines(), start=1)
        if (m := corpus._EXPECT.search(line)) is not None
    }
    errors = corpus._errors_in(reports, path)
    shown = "\n".join(f"  {e.line}: {e.message} [{e.code}]" for e in errors) or "  (none)"
    for line, (code, fragment) in expected.items():
        hits = [e for e in errors if e.line == line and e.code == code and fragment in e.message]
        assert hits, f"{name}:{line}: expected [{code}] {fragment!r}; mypy said:\n{shown}"
    stray = [e for e in errors if e.line not in expected]
    assert not stray, f"{name}: errors on lines without an expectation:\n{shown}"
