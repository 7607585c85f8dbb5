# SPDX-License-Identifier: Apache-2.0
"""Importing statefn touches no CUDA; the façade is complete and typed."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import statefn

ROOT = Path(__file__).resolve().parents[2]


def test_import_loads_no_numba_or_cuda() -> None:
    code = (
        "import sys, statefn\n"
        "bad = sorted(m for m in sys.modules if m == 'numba' or m.startswith(('numba.', 'cuda'))"
        " or m == 'llvmlite' or m.startswith('llvmlite.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_all_resolves_and_is_documented() -> None:
    docs = (ROOT / "docs" / "callbacks.md").read_text()
    for name in statefn.__all__:
        obj = getattr(statefn, name)
        if isinstance(obj, type) or inspect.isfunction(obj):
            assert obj.__doc__, name
        else:  # type aliases, type variables and constants are described in the docs
            assert f"`{name}`" in docs, name


def test_all_is_sorted_and_has_no_private_names() -> None:
    assert all(not name.startswith("_") for name in statefn.__all__)
    assert len(set(statefn.__all__)) == len(statefn.__all__)


def test_py_typed_present() -> None:
    assert (Path(statefn.__file__).parent / "py.typed").is_file()
