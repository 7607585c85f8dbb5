# SPDX-License-Identifier: Apache-2.0
"""Shared test configuration.

Markers: ``gpu`` (needs a CUDA device: skipped elsewhere), ``nvrtc`` (compiles
CUB with NVRTC: slow), ``sim`` (runs under ``NUMBA_ENABLE_CUDASIM=1`` in its
own pytest process, see tools/check.py). Compiles without a GPU always name the
target explicitly: :data:`CC`.
"""

from __future__ import annotations

import os

import pytest

#: The compute capability CPU-side compile tests target (the H200's).
CC = (9, 0)

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _has_gpu() -> bool:
    if SIMULATOR:
        return False
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    from numba import cuda

    return bool(cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    have_gpu = None
    for item in items:
        if "gpu" in item.keywords:
            if have_gpu is None:
                have_gpu = _has_gpu()
            if not have_gpu:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA device"))
        if "sim" in item.keywords and not SIMULATOR:
            item.add_marker(
                pytest.mark.skip(reason="simulator tests run with NUMBA_ENABLE_CUDASIM=1")
            )
