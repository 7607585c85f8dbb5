# SPDX-License-Identifier: Apache-2.0
"""Find a local CUDA 13.0 toolkit's CCCL 3.0 headers (those of the GPU machine)."""

from __future__ import annotations

import os
from pathlib import Path

CANDIDATES = [
    Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include" / "cccl",
    Path("/usr/local/cuda-13.0/include/cccl"),
]


def toolkit_cccl() -> Path | None:
    """A local CCCL 3.0.x include folder, if a CUDA 13.0 toolkit is installed."""
    for path in CANDIDATES:
        header = path / "cuda" / "std" / "__cccl" / "version.h"
        if not header.is_file():
            continue
        for line in header.read_text(errors="replace").splitlines():
            parts = line.split()
            if (
                parts[:2] == ["#define", "CCCL_VERSION"]
                and parts[2].isdigit()
                and int(parts[2]) // 1000 == 3000
            ):
                return path
    return None
