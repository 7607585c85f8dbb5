# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the compile tests: compile kernels for a target with no GPU."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from numba import cuda

CC = (9, 0)


def compile_kernel(
    pyfunc: Callable[..., Any], argtypes: Sequence[Any], cc: tuple[int, int] = CC
) -> list[Any]:
    """LTO-IR of a kernel and every object it links, for ``cc``."""
    codes, _ = cuda.compile_all(
        pyfunc, tuple(argtypes), device=False, abi="numba", output="ltoir", cc=cc
    )
    return list(codes)


def kernel_library(
    pyfunc: Callable[..., Any], argtypes: Sequence[Any], cc: tuple[int, int] = CC, **options: Any
) -> Any:
    """The code library of a kernel as a launch builds it: compiled, marked as the entry point.

    ``library.get_cubin(cc=(9, 0, "a"))`` then links it as the first launch
    would. ``options`` go to numba-cuda's ``compile_cuda`` (e.g. ``max_registers``).
    """
    # imported here: the simulator run collects modules that import this one
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda, kernel_fixup

    cres = compile_cuda(
        pyfunc, types.void, tuple(argtypes), nvvm_options={"opt": 3}, cc=cc, lto=True, **options
    )
    kernel_fixup(cres.library.get_function(cres.fndesc.llvm_func_name), False)
    cres.library._entry_name = cres.fndesc.llvm_func_name
    return cres.library


def link_cubin(codes: Sequence[Any], cc: tuple[int, int] = CC) -> bytes:
    """Link LTO-IR objects into one cubin for ``cc`` with nvJitLink."""
    from cuda.core import Linker, LinkerOptions, ObjectCode

    objs = [ObjectCode.from_ltoir(c if isinstance(c, bytes) else c.data) for c in codes]
    opts = LinkerOptions(arch=f"sm_{cc[0]}{cc[1]}", link_time_optimization=True)
    return bytes(Linker(*objs, options=opts).link("cubin").code)


def typing_error(pyfunc: Callable[..., Any], argtypes: Sequence[Any]) -> str:
    """``Type: message`` of the rejection compiling ``pyfunc`` raises (fails if none).

    A rejection made while typing names the call's site first; this returns
    the rejection itself (``exc.rejection``), as the library made it.
    """
    try:
        compile_kernel(pyfunc, argtypes)
    except Exception as exc:
        exc = getattr(exc, "rejection", exc)
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError("the kernel compiled but was expected to be rejected")
