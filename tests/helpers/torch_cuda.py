# SPDX-License-Identifier: Apache-2.0
"""torch for the GPU tests that pass torch tensors: skipped where it or its CUDA is missing."""

from __future__ import annotations

from typing import Any

import pytest


def cuda_torch() -> Any:
    """The torch module, or skip the test: torch not installed, or no CUDA device for it."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch
