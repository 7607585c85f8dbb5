# SPDX-License-Identifier: Apache-2.0
"""CUB block scans and tile I/O for numba-cuda kernels, with typed prefix callbacks.

Use :mod:`scan.block` (and :mod:`scan.warp`) inside ``@cuda.jit`` kernels::

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

from . import _numba_cuda, _numba_cuda_mlir, block, warp
from ._errors import (
    CacheWarning,
    CompileError,
    PlanError,
    ScanError,
    ScanTypeError,
    StateContractError,
    ToolchainError,
)
from ._frontend import FrontEnd as _FrontEnd
from ._lookback import LOOKBACK as lookback  # noqa: N811 (a module-level constant, spelled as a function)
from ._lookback import Lookback
from ._numba_cuda._launch import Launcher, launcher
from ._tile_status import TileStatus, tile_status, tile_status_dtype

#: The front ends :func:`compile` dispatches to, in order: the first that owns
#: a kernel (``owns(kernel)``) compiles it (``compile_kernel``).
_FRONT_ENDS: tuple[_FrontEnd, ...] = (_numba_cuda_mlir.FRONT_END, _numba_cuda.FRONT_END)

_numba_cuda.FRONT_END.install()
_numba_cuda_mlir.FRONT_END.install()


@functools.wraps(_numba_cuda.compile_kernel)
def compile(
    kernel: Callable[..., Any],
    signature: Any,
    *,
    cc: tuple[int, int],
    output: Literal["cubin", "ltoir"] = "cubin",
    block: int | tuple[int, ...] | None = None,
) -> bytes | list[bytes]:
    # a numba_cuda_mlir dispatcher compiles with numba-cuda-mlir, anything else with numba-cuda
    front_end = next(f for f in _FRONT_ENDS if f.owns(kernel))
    try:
        compiled: bytes | list[bytes]
        compiled = front_end.compile_kernel(kernel, signature, cc=cc, output=output, block=block)
        return compiled
    except (ScanError, _statefn.StatefnError) as exc:  # named at the call: no library frames
        raise exc.with_traceback(None) from None


__all__ = [
    "CacheWarning",
    "CompileError",
    "Launcher",
    "Lookback",
    "PlanError",
    "ScanError",
    "ScanTypeError",
    "StateContractError",
    "TileStatus",
    "ToolchainError",
    "block",
    "compile",
    "launcher",
    "lookback",
    "tile_status",
    "tile_status_dtype",
    "warp",
]

__version__ = "0.1.0"
