# SPDX-License-Identifier: Apache-2.0
"""CUB block scans and tile I/O for numba-cuda kernels, with typed prefix callbacks.

Use :mod:`scan.block` inside ``@cuda.jit`` kernels::

    from scan import block

    block.load(src[row], base, items, oob_default=0)
    block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    block.store(dst[row], base, items)

Importing this package registers the typing and lowering of those calls with
numba-cuda (or, under ``NUMBA_ENABLE_CUDASIM=1``, routes them to the
simulator). C++ is generated, compiled with NVRTC and cached on first use.
:func:`compile` compiles and links such a kernel for a given compute
capability without a GPU.
"""

from __future__ import annotations

from . import block
from ._errors import (
    CacheWarning,
    CompileError,
    PlanError,
    ScanError,
    ScanTypeError,
    StateContractError,
    ToolchainError,
)
from ._numba_cuda import compile_kernel as compile
from ._numba_cuda import install as _install

_install()

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
