# SPDX-License-Identifier: Apache-2.0
"""The documentation's example modules compiled by numba-cuda-mlir instead of numba-cuda."""

from __future__ import annotations

import importlib
import types
from pathlib import Path


def doc_programs(name: str) -> types.ModuleType:
    """``doc_examples.examples.<name>`` with ``cuda`` bound to numba-cuda-mlir's.

    The same source, executed again in a module of its own, so its kernels
    and device functions are numba-cuda-mlir's.
    """
    example = importlib.import_module(f"doc_examples.examples.{name}")
    path = example.__file__
    assert path is not None
    source = Path(path).read_text()
    source = source.replace("from numba import cuda\n", "from numba_cuda_mlir import cuda\n")
    module = types.ModuleType(f"{name}_mlir")
    exec(compile(source, path, "exec"), module.__dict__)
    return module
