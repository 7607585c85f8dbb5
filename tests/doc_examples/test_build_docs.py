# SPDX-License-Identifier: Apache-2.0
"""The documentation site builds with every Sphinx warning treated as an error.

Also checks that the offline intersphinx inventories in docs/_inventories/
match the script that writes them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_inventories_are_up_to_date():
    inv = _load(ROOT / "docs" / "_inventories" / "make_inventories.py", "_doc_inventories")
    for project in inv.INVENTORIES:
        assert inv.path_for(project).read_bytes() == inv.render(project), (
            f"{inv.path_for(project)} is stale: run python docs/_inventories/make_inventories.py"
        )


def test_docs_build_without_warnings(tmp_path):
    if (
        importlib.util.find_spec("sphinx") is None
        or importlib.util.find_spec("myst_parser") is None
    ):
        pytest.skip("sphinx and myst-parser are not installed (pip install -e '.[docs]')")
    build_docs = _load(ROOT / "tools" / "build_docs.py", "_build_docs")
    proc = build_docs.build(tmp_path, quiet=True)
    assert proc.returncode == 0, f"sphinx -W failed:\n{proc.stdout}\n{proc.stderr}"
    html = tmp_path / "html"
    for page in ("index", "quickstart", "state-contract", "errors", "api"):
        assert (html / f"{page}.html").is_file()
    assert "running_total" in (html / "quickstart.html").read_text()
