# SPDX-License-Identifier: Apache-2.0
"""Static typing: the pass corpus is clean under ``mypy --strict``, each fail file fails as written.

mypy runs in this process (``mypy.api.run``), once over ``pass/`` and once over
``fail/``, with ``mypy.ini`` beside this file and one cache directory for the
session.

Expected errors are written in the fail files, at the end of the line mypy
reports, as ``# E: <error-code>: <message fragment>``: that line must carry an
error with that code whose message contains the fragment, and no other line
may carry an error. Each fail file holds exactly one mistake. A fail file whose
header has a line ``# xfail: <reason>`` is expected not to fail yet (strict
xfail: delete the line once the reason is gone).

The stubs are found as an installed PEP 561 stub package would be: if no
``numba-stubs`` directory is on the module search path (the wheel installs one
into site-packages), ``typing_stubs/`` is appended to ``sys.path`` for the
duration of the mypy call, which is where mypy looks for stub packages.
"""

from __future__ import annotations

import ast
import inspect
import re
import site
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STUBS_ROOT = ROOT / "typing_stubs"
STUB_PACKAGE = STUBS_ROOT / "numba-stubs"
CONFIG = HERE / "mypy.ini"
PASS_FILES = sorted((HERE / "pass").glob("*.py"))
FAIL_FILES = sorted((HERE / "fail").glob("*.py"))

_EXPECT = re.compile(r"#\s*E:\s*(?P<code>[a-z0-9-]+):\s*(?P<fragment>.+?)\s*$")
_XFAIL = re.compile(r"^#\s*xfail:\s*(?P<reason>.+?)\s*$", re.MULTILINE)
_REPORT = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)


@dataclass(frozen=True)
class Report:
    """One mypy diagnostic."""

    path: Path
    line: int
    severity: str
    message: str
    code: str | None


def _stub_dirs_on_path() -> list[Path]:
    dirs = [*sys.path, *site.getsitepackages()]
    return [
        Path(d) / "numba-stubs"
        for d in dirs
        if d
        and Path(d).resolve() != STUBS_ROOT
        and (Path(d) / "numba-stubs" / "py.typed").is_file()
    ]


@contextmanager
def _search_path(*, with_stubs: bool) -> Iterator[None]:
    from mypy import modulefinder

    added = with_stubs and not _stub_dirs_on_path()
    if added:
        # appended, not prepended: mypy drops sys.path[0] (the script directory)
        sys.path.append(str(STUBS_ROOT))
    modulefinder.get_search_dirs.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(ROOT)  # mypy finds statefn/ and scan/ from the working directory
            yield
    finally:
        if added:
            sys.path.remove(str(STUBS_ROOT))
        modulefinder.get_search_dirs.cache_clear()


def _run_mypy(args: list[str], cache_dir: Path, *, with_stubs: bool = True) -> list[Report]:
    from mypy import api

    with _search_path(with_stubs=with_stubs):
        stdout, stderr, status = api.run(
            ["--config-file", str(CONFIG), "--cache-dir", str(cache_dir), *args]
        )
    assert status in (0, 1), f"mypy did not run (exit {status}):\n{stderr}\n{stdout}"
    reports = []
    for raw in stdout.splitlines():
        m = _REPORT.match(raw)
        if m is not None:
            reports.append(
                Report(
                    path=(ROOT / m["path"]).resolve(),
                    line=int(m["line"]),
                    severity=m["severity"],
                    message=m["message"],
                    code=m["code"],
                )
            )
    return reports


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture(scope="session")
def pass_reports(mypy_cache: Path) -> list[Report]:
    return _run_mypy([str(p) for p in PASS_FILES], mypy_cache)


@pytest.fixture(scope="session")
def fail_reports(mypy_cache: Path) -> list[Report]:
    return _run_mypy([str(p) for p in FAIL_FILES], mypy_cache)


def _errors_in(reports: list[Report], path: Path) -> list[Report]:
    return [r for r in reports if r.path == path.resolve() and r.severity == "error"]


def _fail_params() -> list[object]:
    params: list[object] = []
    for path in FAIL_FILES:
        m = _XFAIL.search(path.read_text(encoding="utf-8"))
        marks = [pytest.mark.xfail(reason=m["reason"], strict=True)] if m else []
        params.append(pytest.param(path, marks=marks, id=path.stem))
    return params


def test_corpus_sizes() -> None:
    assert len(PASS_FILES) >= 15
    assert len(FAIL_FILES) >= 20


@pytest.mark.parametrize("path", PASS_FILES, ids=[p.stem for p in PASS_FILES])
def test_pass_file_is_clean(path: Path, pass_reports: list[Report]) -> None:
    errors = _errors_in(pass_reports, path)
    assert not errors, "\n".join(f"{path.name}:{e.line}: {e.message} [{e.code}]" for e in errors)


@pytest.mark.parametrize("path", _fail_params())
def test_fail_file_reports_expected_error(path: Path, fail_reports: list[Report]) -> None:
    expected: dict[int, tuple[str, str]] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = _EXPECT.search(text)
        if m is not None:
            expected[number] = (m["code"], m["fragment"])
    assert len(expected) == 1, (
        f"{path.name}: a fail file holds one mistake, marked by one '# E: <code>: <fragment>' "
        f"comment; found {len(expected)}"
    )
    errors = _errors_in(fail_reports, path)
    shown = "\n".join(f"  {e.line}: {e.message} [{e.code}]" for e in errors) or "  (none)"
    for line, (code, fragment) in expected.items():
        hits = [e for e in errors if e.line == line and e.code == code and fragment in e.message]
        assert hits, (
            f"{path.name}:{line}: expected a [{code}] error containing {fragment!r}; mypy said:\n"
            f"{shown}"
        )
    stray = [e for e in errors if e.line not in expected]
    assert not stray, f"{path.name}: errors on lines without an expectation:\n{shown}"


# The commonest mistakes get one error line naming the argument, and no
# "Possible overload variants" dump (scan/block.pyi explains how).
ONE_LINE = (
    "block_aggregate_with_prefix",
    "exclusive_scan_without_seed",
    "integer_state_float_values",
    "load_items_dtype",
    "out_dtype_mismatch",
    "prefix_op_with_initial_value",
    "records_exclusive_sum",
    "records_inclusive_sum",
    "records_state_for_numeric_callback",
    "scalar_prefix_state",
    "state_dtype_mismatch",
    "state_element_prefix_state",
    "stateful_without_prefix_state",
    "stateless_with_prefix_state",
    "structured_state",
    "two_dimensional_local_state",
    "two_dimensional_state",
    "unknown_algorithm",
)


@pytest.mark.parametrize("stem", ONE_LINE)
def test_common_mistakes_get_one_line(stem: str, fail_reports: list[Report]) -> None:
    path = HERE / "fail" / f"{stem}.py"
    reports = [r for r in fail_reports if r.path == path.resolve()]
    assert [r.severity for r in reports] == ["error"], "\n".join(r.message for r in reports)
    assert len(reports[0].message) < 400, reports[0].message


_REVEAL = """\
import numpy as np
from numba import cuda
reveal_type(cuda.grid(1))
reveal_type(cuda.local.array(4, np.int32))
"""


def test_stubs_win_over_bundled_numba_cuda(mypy_cache: Path) -> None:
    reports = _run_mypy(["-c", _REVEAL], mypy_cache)
    assert [r for r in reports if r.severity == "error"] == []
    revealed = [r.message for r in reports if r.severity == "note"]
    assert revealed == [
        'Revealed type is "int"',
        'Revealed type is "numba.cuda._ShapedNDArray[tuple[int], '
        'numpy.dtype[numpy.signedinteger[numpy._typing._nbit_base._32Bit]]]"',
    ]


def test_without_stubs_mypy_sees_the_stale_numba_cuda(tmp_path: Path) -> None:
    # the control for the test above: numba's own stale numba/cuda copy is what
    # mypy resolves when the stubs are absent
    if _stub_dirs_on_path():
        pytest.skip("numba-stubs is installed; it cannot be hidden from mypy here")
    reports = _run_mypy(["-c", _REVEAL], tmp_path, with_stubs=False)
    messages = [r.message for r in reports]
    assert 'Revealed type is "int"' not in messages
    assert any('has no attribute "grid"' in m or '"ndim"' in m for m in messages), messages


def test_stub_package_is_partial_and_typed(mypy_cache: Path) -> None:
    assert (STUB_PACKAGE / "py.typed").read_text(encoding="utf-8") == "partial\n"
    assert (STUB_PACKAGE / "cuda" / "__init__.pyi").is_file()
    # the rest of numba is typed by numba itself
    assert not (STUB_PACKAGE / "__init__.pyi").exists()
    stubs = sorted(str(p.relative_to(ROOT)) for p in STUB_PACKAGE.rglob("*.pyi"))
    with _search_path(with_stubs=True):
        from mypy import api

        stdout, _, status = api.run(["--strict", "--cache-dir", str(mypy_cache), *stubs])
    assert status == 0, stdout


def _overload_parameters(tree: ast.Module) -> dict[str, list[list[tuple[str, str]]]]:
    found: dict[str, list[list[tuple[str, str]]]] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        a = node.args
        params = [(p.arg, "POSITIONAL_ONLY") for p in a.posonlyargs]
        params += [(p.arg, "POSITIONAL_OR_KEYWORD") for p in a.args]
        params += [(p.arg, "KEYWORD_ONLY") for p in a.kwonlyargs]
        found.setdefault(node.name, []).append(params)
    return found


def test_block_stub_matches_runtime_signatures() -> None:
    from scan import block

    tree = ast.parse((ROOT / "scan" / "block.pyi").read_text(encoding="utf-8"))
    stubbed = _overload_parameters(tree)
    stub_all = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
    )
    assert sorted(stub_all) == sorted(block.__all__)
    for name in block.__all__:
        runtime = getattr(block, name)
        if inspect.isclass(runtime):
            continue
        # a runtime **kwargs only exists to reject unknown keywords with a clear
        # message; the stub leaves it out so that they are static errors
        want = [
            (p.name, p.kind.name)
            for p in inspect.signature(runtime).parameters.values()
            if p.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        assert name in stubbed, f"scan/block.pyi does not declare {name}"
        for params in stubbed[name]:
            assert params == want, f"{name}: stub parameters {params} != runtime {want}"
