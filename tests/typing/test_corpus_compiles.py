# SPDX-License-Identifier: Apache-2.0
"""Every kernel of the pass corpus compiles (no GPU needed): the stubs never drift from what works.

Each ``pass/*.py`` file exposes ``KERNELS``, a list of ``(python_function, argtypes)``
pairs (``kernel.py_func`` for ``@cuda.jit`` kernels; argtypes are
``numba.cuda.types``). A file whose kernels cannot be compiled without a GPU
(for example, kernels calling a ``@cuda.jit(device=True)`` helper: compiling
that dispatcher asks the current device for its compute capability) sets
``COMPILE_SKIP`` to the reason instead, as a top-level string literal: it is read
from the source without importing the file, because importing a file whose
kernels carry signature strings already compiles them for the current device.
Those files define ``check()`` instead, and the GPU suite compiles their kernels
for the device, launches them through ``check()`` and compares the results.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

PASS_DIR = Path(__file__).parent / "pass"
PASS_FILES = sorted(PASS_DIR.glob("*.py"))
CC = (9, 0)

pytestmark = pytest.mark.nvrtc


def _compile_skip(path: Path) -> str | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILE_SKIP" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, str), f"{path.name}: COMPILE_SKIP must be a string literal"
            return value
    return None


def _load(path: Path) -> ModuleType:
    name = f"_typing_pass_corpus_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", PASS_FILES, ids=[p.stem for p in PASS_FILES])
def test_pass_corpus_kernels_compile(path: Path) -> None:
    from numba import cuda

    skip = _compile_skip(path)
    if skip is not None:
        pytest.skip(skip)
    module = _load(path)
    kernels: list[tuple[Any, tuple[Any, ...]]] = module.KERNELS
    assert kernels, f"{path.name}: KERNELS is empty; list (kernel.py_func, argtypes) pairs"
    for pyfunc, argtypes in kernels:
        codes, _ = cuda.compile_all(
            pyfunc, argtypes, device=False, abi="numba", output="ltoir", cc=CC
        )
        assert codes, f"{path.name}: {pyfunc.__name__} produced no code"


DEVICE_FILES = [p for p in PASS_FILES if _compile_skip(p) is not None]


@pytest.mark.gpu
@pytest.mark.parametrize("path", DEVICE_FILES, ids=[p.stem for p in DEVICE_FILES])
def test_device_corpus_kernels_compile_and_run(path: Path) -> None:
    from numba import cuda

    module = _load(path)
    cc = cuda.get_current_device().compute_capability
    for pyfunc, argtypes in module.KERNELS:
        codes, _ = cuda.compile_all(
            pyfunc, argtypes, device=False, abi="numba", output="ltoir", cc=cc
        )
        assert codes, f"{path.name}: {pyfunc.__name__} produced no code"
    assert hasattr(module, "check"), f"{path.name}: COMPILE_SKIP files define check()"
    pairs = module.check()
    assert pairs, f"{path.name}: check() compared nothing"
    for got, want in pairs:
        np.testing.assert_array_equal(got, want, strict=True)


def test_device_corpus_files_exist() -> None:
    # the GPU test above covers these; an empty list would make it vacuous
    assert {p.stem for p in DEVICE_FILES} >= {"eager_signatures", "device_helper"}
