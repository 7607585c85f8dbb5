# SPDX-License-Identifier: Apache-2.0
"""Import the benchmarks' modules (bench/) in tests that compile their kernels without a GPU."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

#: The benchmarks' folder.
BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_bench(name: str) -> ModuleType:
    """Import ``bench/<name>.py`` by path; bench/ is on sys.path only while it loads."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCH))  # for the modules it imports at its top (_common)
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module
