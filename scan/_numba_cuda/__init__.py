# SPDX-License-Identifier: Apache-2.0
"""The numba-cuda front end: everything that touches numba-cuda.

- :mod:`._typing`: typing of :mod:`scan.block` calls (binding, Numba types as
  facts, planning), the descriptor type, the local-array length rewrite;
- :mod:`._lowering`: the call of the provider, the callbacks compiled by
  Numba, the LTO-IR attached to the kernel;
- :mod:`._kernel`: ``scan.compile``, a kernel compiled and linked without a GPU;
- :mod:`._launch`: ``scan.launcher``, a compiled kernel launched with cuda.core;
- :mod:`._linkcache`: linked kernels in the persistent cache (the one place
  that reaches into numba-cuda's code library);
- :mod:`._sim`: numba's CUDA simulator running the same calls with CUB's
  observable semantics.

Everything else (plans, C++ generation, NVRTC, the cache) is shared by every
front end and imports no Numba.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from numba.core import config as _numba_config

from .._build import CallbackCompiler
from .._calls import kernel_only, set_host_backend
from .._errors import PlanError
from .._frontend import FrontEnd, Output
from ._kernel import compile_kernel

__all__ = [
    "FRONT_END",
    "SIMULATOR",
    "CompiledHost",
    "NumbaCuda",
    "compile_kernel",
    "install",
    "owns",
]

#: True when kernels run in numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``,
#: read by numba once, when it is first imported).
SIMULATOR: bool = bool(_numba_config.ENABLE_CUDASIM)


class CompiledHost:
    """Host side of compiled kernels: block primitives refuse host calls."""

    simulated = False

    def call(self, name: str, bound: Mapping[str, Any]) -> Any:
        """Refuse: block primitives run inside kernels only."""
        raise kernel_only(name)

    def default_cc(self) -> tuple[int, int]:
        """The compute capability of numba's current device."""
        from numba import cuda

        if not cuda.is_available():
            raise PlanError(
                "temp_storage: no CUDA device to take the compute capability from; "
                "pass cc=(major, minor)"
            )
        major, minor = cuda.get_current_device().compute_capability
        return (int(major), int(minor))


def owns(kernel: object) -> bool:
    """Whether `kernel` is this front end's: every kernel another front end does not own.

    numba-cuda is the default front end (``scan.compile`` asks it last).
    """
    return True


def install() -> None:
    """Register the typing and lowering of :mod:`scan.block` calls, or the simulator."""
    if SIMULATOR:
        from . import _sim

        _sim.install()
    else:
        from . import _lowering, _typing  # noqa: F401  (registering is importing)

        set_host_backend(CompiledHost())


class NumbaCuda:
    """The numba-cuda front end, as :mod:`scan` uses it (a :class:`scan._frontend.FrontEnd`)."""

    name = "numba-cuda"

    def install(self) -> None:
        """Register the typing and lowering with numba-cuda, or the simulator (:func:`install`)."""
        install()

    def owns(self, kernel: object) -> bool:
        """Every kernel: numba-cuda is the default front end (:func:`owns`)."""
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
        """``scan.compile`` for a numba-cuda kernel (:func:`compile_kernel`)."""
        return compile_kernel(kernel, signature, cc=cc, output=output, block=block)

    def callbacks(self) -> CallbackCompiler:
        """numba-cuda's callback compiler (:data:`scan._numba_cuda._lowering.CALLBACKS`)."""
        from ._lowering import CALLBACKS

        return CALLBACKS


#: The numba-cuda front end.
FRONT_END: FrontEnd = NumbaCuda()
