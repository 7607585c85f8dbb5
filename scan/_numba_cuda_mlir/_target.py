# SPDX-License-Identifier: Apache-2.0
"""The compute capability numba-cuda-mlir compiles for without a GPU.

numba-cuda-mlir 0.6 asks the driver for the host's compute capability in every
compile entry point, even when ``cc=`` is given (``tools.resolve_gpu_target``),
and so fails on a machine without a GPU. It keeps the answer in the private
``numba_cuda_mlir.tools._cached_cc``; setting it first makes ``compile``,
``compile_ptx``, ``compile_mlir`` and ``compile_cubin`` work offline. This
module is the only place that touches it (``tests/scan/test_mlir_compile.py``
checks that it still works), and only where no GPU answers.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from .._target import device_cc

__all__ = ["PRIVATE_SETTING", "offline_target"]

#: The private attribute of ``numba_cuda_mlir.tools`` this module sets.
PRIVATE_SETTING = "_cached_cc"
_lock = threading.RLock()
_gpu: list[tuple[int, int] | None] = []


def _has_gpu() -> bool:
    with _lock:
        if not _gpu:
            _gpu.append(device_cc())
        return _gpu[0] is not None


@contextlib.contextmanager
def offline_target(cc: tuple[int, int]) -> Iterator[None]:
    """Compile for `cc` as if a device of that compute capability were present.

    On a machine with a GPU nothing changes (numba-cuda-mlir asks the device).
    Without one, the host's compute capability is taken to be `cc` for the
    duration, so the linker targets `cc` too.
    """
    if _has_gpu():
        yield
        return
    from numba_cuda_mlir import tools

    with _lock:
        if not hasattr(tools, PRIVATE_SETTING):
            raise RuntimeError(
                "numba_cuda_mlir.tools has no _cached_cc: this numba-cuda-mlir release compiles "
                "only on a machine with a GPU; use numba-cuda-mlir 0.6"
            )
        saved = getattr(tools, PRIVATE_SETTING)
        setattr(tools, PRIVATE_SETTING, (int(cc[0]), int(cc[1])))
        try:
            yield
        finally:
            setattr(tools, PRIVATE_SETTING, saved)
