# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the compile tests: compile kernels for a target with no GPU."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
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

    objs = [ObjectCode.from_ltoir(_ltoir(c)) for c in codes]
    opts = LinkerOptions(arch=f"sm_{cc[0]}{cc[1]}", link_time_optimization=True)
    return bytes(Linker(*objs, options=opts).link("cubin").code)


def _ltoir(code: Any) -> bytes:
    """The bytes of a link input: numba-cuda's ``LTOIR`` (``.data``) or cuda.core's
    ``ObjectCode`` (``.code``: numba-cuda's C++ helpers, compiled for the kernel)."""
    if isinstance(code, bytes):
        return code
    data = getattr(code, "data", None)
    return bytes(code.code if data is None else data)


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


def linked_ptx(codes: Sequence[Any], cc: tuple[int, int] = CC) -> str:
    """The PTX nvJitLink makes of LTO-IR objects (a stack frame shows as ``__local_depot``)."""
    from cuda.core import Linker, LinkerOptions, ObjectCode

    objs = [ObjectCode.from_ltoir(c if isinstance(c, bytes) else c.data) for c in codes]
    opts = LinkerOptions(arch=f"sm_{cc[0]}{cc[1]}", link_time_optimization=True, ptx=True)
    ptx = Linker(*objs, options=opts).link("ptx").code
    return ptx.decode() if isinstance(ptx, bytes) else str(ptx)


def sass(cubin: bytes, tmp_path: Path) -> str | None:
    """A cubin's SASS from ``cuobjdump -sass``, or None where no cuobjdump (and nvdisasm) is
    installed."""
    tool = shutil.which("cuobjdump") or next(
        (str(p) for p in Path("/usr/local").glob("cuda*/bin/cuobjdump")), None
    )
    if tool is None:
        return None
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    code = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True).stdout
    # without nvdisasm beside it, cuobjdump prints no instructions: nothing to check
    return code if re.search(r"/\*[0-9a-f]{4}\*/", code) else None


def assert_links_without_local_memory(
    kernel: Any, argtypes: Sequence[Any], threads: int, tmp_path: Path
) -> None:
    """`kernel` (a ``cuda.jit`` dispatcher) links for sm_90 with no stack frame and no spills.

    The linked PTX has no ``__local_depot``, and its SASS (where a cuobjdump
    is installed) no LDL or STL.
    """
    import scan

    cubin = scan.compile(kernel, tuple(argtypes), cc=CC, block=threads)
    assert cubin[:4] == b"\x7fELF"
    ptx = linked_ptx(scan.compile(kernel, tuple(argtypes), cc=CC, block=threads, output="ltoir"))
    assert "__local_depot" not in ptx
    code = sass(cubin, tmp_path)
    if code is not None:
        assert not re.search(r"\b(LDL|STL)\b", code)
