# SPDX-License-Identifier: Apache-2.0
"""The numba-cuda-mlir front end: everything that touches numba-cuda-mlir.

- :mod:`._typing`: typing of :mod:`scan.block` calls in numba-cuda-mlir
  kernels (a whole-function planner records lengths and the launch's block
  shape; templates bind, convert and plan with :mod:`scan._calls`);
- :mod:`._lowering`: the call of the provider emitted as MLIR, the LTO-IR
  registered with the kernel's link; the arrays of records numba-cuda-mlir
  cannot lower itself (local and shared arrays, indices into N-D arrays), in
  the functions that call :mod:`scan.block`;
- :mod:`._callbacks`: user callbacks compiled by numba-cuda-mlir behind the
  pointer ABI (record operands as named tuples, results as tuples);
- :mod:`._kernel`: ``scan.compile`` for numba-cuda-mlir kernels;
- :mod:`._target`: the one private setting that lets it compile without a GPU.

Nothing here is imported until numba-cuda-mlir is: :func:`install_when_imported`
registers the front end at once if ``numba_cuda_mlir`` is already imported,
and otherwise right after it is first imported. Importing :mod:`scan` never
imports numba-cuda-mlir.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from .._build import CallbackCompiler
from .._frontend import FrontEnd, Output

__all__ = [
    "FRONT_END",
    "MODULE",
    "NumbaCudaMlir",
    "available",
    "compile_kernel",
    "install",
    "install_when_imported",
    "installed",
    "owns",
]

#: The package that makes this front end.
MODULE = "numba_cuda_mlir"
_lock = threading.RLock()
_state = {"installed": False}


def available() -> bool:
    """Whether numba-cuda-mlir is installed (without importing it)."""
    return MODULE in sys.modules or importlib.util.find_spec(MODULE) is not None


def installed() -> bool:
    """Whether the typing and lowering are registered with numba-cuda-mlir."""
    return _state["installed"]


def install() -> None:
    """Register the typing and lowering of :mod:`scan.block` calls with numba-cuda-mlir."""
    with _lock:
        if _state["installed"]:
            return
        from . import _lowering, _typing  # noqa: F401  (registering is importing)

        _state["installed"] = True


class _Loader(importlib.abc.Loader):
    """numba-cuda-mlir's own loader, then :func:`install`."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # resource readers and the like
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        install()


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the loader of ``numba_cuda_mlir`` once, then leaves ``sys.meta_path``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE:
            return None
        _remove_finder()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def _remove_finder() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]


def install_when_imported() -> None:
    """Register now if numba-cuda-mlir is imported, else right after its first import."""
    if MODULE in sys.modules:
        install()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def owns(kernel: object) -> bool:
    """Whether `kernel` is a numba-cuda-mlir dispatcher (``numba_cuda_mlir.cuda.jit``)."""
    return type(kernel).__module__.split(".")[0] == MODULE


def compile_kernel(kernel: Any, signature: Any, **options: Any) -> bytes | list[bytes]:
    """``scan.compile`` for a numba-cuda-mlir kernel (see :mod:`._kernel`)."""
    install()
    from ._kernel import compile_kernel as compile_mlir_kernel

    return compile_mlir_kernel(kernel, signature, **options)


class NumbaCudaMlir:
    """The numba-cuda-mlir front end as :mod:`scan` uses it (:class:`scan._frontend.FrontEnd`)."""

    name = MODULE.replace("_", "-")

    def install(self) -> None:
        """Register now if numba-cuda-mlir is imported, else at its first import."""
        install_when_imported()

    def owns(self, kernel: object) -> bool:
        """Whether `kernel` is a numba-cuda-mlir dispatcher (:func:`owns`)."""
        return owns(kernel)

    def compile_kernel(
        self,
        kernel: Callable[..., Any],
        signature: Any,
        *,
        cc: tuple[int, int],
        output: Output = "cubin",
        block: int | tuple[int, ...] | None = None,
    ) -> bytes | list[bytes]:
        """``scan.compile`` for a numba-cuda-mlir kernel (:func:`compile_kernel`)."""
        return compile_kernel(kernel, signature, cc=cc, output=output, block=block)

    def callbacks(self) -> CallbackCompiler:
        """numba-cuda-mlir's callback compiler; imports numba-cuda-mlir."""
        install()
        from ._lowering import CALLBACKS

        return CALLBACKS


#: The numba-cuda-mlir front end.
FRONT_END: FrontEnd = NumbaCudaMlir()
