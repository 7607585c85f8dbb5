# SPDX-License-Identifier: Apache-2.0
"""CUB block scans and tile I/O for numba-cuda kernels, with typed prefix callbacks.

Use :mod:`scan.block` inside ``@cuda.jit`` kernels::

    from scan import block

    block.load(src[row], base, items, oob_default=0)
    block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    block.store(dst[row], base, items)

Importing this package registers the typing and lowering of those calls with
numba-cuda (or, under ``NUMBA_ENABLE_CUDASIM=1``, routes them to the
simulator), and with numba-cuda-mlir once that is imported (``from
numba_cuda_mlir import cuda``). C++ is generated, compiled with NVRTC and cached on first use.
:func:`compile` compiles and links such a kernel for a given compute
capability without a GPU.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

import statefn as _statefn

from . import _numba_cuda_mlir, block
from ._errors import (
    CacheWarning,
    CompileError,
    PlanError,
    ScanError,
    ScanTypeError,
    StateContractError,
    ToolchainError,
)
from ._numba_cuda import compile_kernel as _compile_numba_cuda
from ._numba_cuda import install as _install

_install()
_numba_cuda_mlir.install_when_imported()


@functools.wraps(_compile_numba_cuda)
def compile(
    kernel: Callable[..., Any],
    signature: Any,
    *,
    cc: tuple[int, int],
    output: Literal["cubin", "ltoir"] = "cubin",
    block: int | tuple[int, ...] | None = None,
) -> bytes | list[bytes]:
    # a numba_cuda_mlir dispatcher compiles with numba-cuda-mlir, anything else with numba-cuda
    options = {"cc": cc, "output": output, "block": block}
    try:
        if _numba_cuda_mlir.owns(kernel):
            return _numba_cuda_mlir.compile_kernel(kernel, signature, **options)
        return _compile_numba_cuda(kernel, signature, **options)  # type: ignore[arg-type]
    except (ScanError, _statefn.StatefnError) as exc:  # named at the call: no library frames
        raise exc.with_traceback(None) from None


__all__ = [
    "CacheWarning",
    "CompileError",
    "PlanError",
    "ScanError",
    "ScanTypeError",
    "StateContractError",
    "ToolchainError",
    "block",
    "compile",
]

__version__ = "0.1.0"
