# SPDX-License-Identifier: Apache-2.0
"""Find CCCL 3.0 headers (those of the GPU machine's CUDA 13.0 toolkit) for the CCCL 3.0 checks.

Looked up in order: ``SCAN_TEST_CCCL_3_0`` (an include folder; tools/check.py
sets it to the headers of the pinned wheels :data:`PINNED_WHEELS`, which it
downloads and lays out as a toolkit's include folder: ``cccl/`` beside
``cuda_fp16.h``), then a local CUDA 13.0 toolkit. :func:`skip_reason` says why the
checks cannot run when neither is there; tools/check.py prints it loudly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENV = "SCAN_TEST_CCCL_3_0"
#: CUDA 13.0's wheels and the members taken from each: CCCL 3.0.1, and the FP16
#: header the library finds beside the CCCL folder (without it, CCCL 3.0's float
#: sums take a path that ends in a device-side assert).
PINNED_WHEELS = {
    "nvidia-cuda-cccl==13.0.85": "nvidia/cu13/include/cccl/",
    "nvidia-cuda-runtime==13.0.96": "nvidia/cu13/include/cuda_fp16.h",
}
#: The members taken from the wheels beyond :data:`PINNED_WHEELS`' (each a name
#: prefix): the bfloat16 header the units of bfloat16 values include.
PINNED_MEMBERS = (*PINNED_WHEELS.values(), "nvidia/cu13/include/cuda_bf16.h")
#: The CCCL include folder in the unpacked wheels.
WHEEL_INCLUDE = "nvidia/cu13/include/cccl"

CANDIDATES = [
    Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include" / "cccl",
    Path("/usr/local/cuda-13.0/include/cccl"),
]


def _is_cccl_3_0(path: Path) -> bool:
    header = path / "cuda" / "std" / "__cccl" / "version.h"
    if not header.is_file():
        return False
    for line in header.read_text(errors="replace").splitlines():
        parts = line.split()
        if parts[:2] == ["#define", "CCCL_VERSION"] and parts[2].isdigit():
            return int(parts[2]) // 1000 == 3000
    return False


def toolkit_cccl() -> Path | None:
    """A CCCL 3.0.x include folder: ``SCAN_TEST_CCCL_3_0``'s, else a CUDA 13.0 toolkit's."""
    given = os.environ.get(ENV)
    candidates = [Path(given)] if given else []
    for path in [*candidates, *CANDIDATES]:
        if _is_cccl_3_0(path):
            return path
    return None


def skip_reason() -> str:
    """Why the CCCL 3.0 checks cannot run here."""
    given = os.environ.get(ENV)
    if given:
        return f"{ENV}={given} holds no CCCL 3.0 headers (cuda/std/__cccl/version.h)"
    return (
        f"no CCCL 3.0 headers: {ENV} is unset and no CUDA 13.0 toolkit is installed; "
        f"tools/check.py sets it from the pinned wheels {', '.join(PINNED_WHEELS)}"
    )


def run_with_cccl_3_0(code: str, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run Python `code` (with `args`) in a child compiling against :func:`toolkit_cccl`'s headers.

    The child imports the repository's ``scan`` and the tests' helpers, keeps its
    cache in `cache`, and runs without the simulator.
    """
    root = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ,
        STATEFN_SCAN_CCCL_INCLUDE=str(toolkit_cccl()),
        STATEFN_SCAN_CACHE_DIR=str(cache),
        PYTHONPATH=os.pathsep.join([str(root), str(root / "tests")]),
    )
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


#: A child compiling every provider a test module lists: its ``_VARIANTS``, each
#: rendered by its ``variant_source(*variant)``; prints ``ok <count>``.
_VARIANTS_CHILD = """
import importlib.util, sys
from scan._compile import compile_provider
spec = importlib.util.spec_from_file_location("variants", sys.argv[1])
tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tests)
for variant in tests._VARIANTS:
    compile_provider("variant", tests.variant_source(*variant), cc=(9, 0))
print("ok", len(tests._VARIANTS))
"""


def compile_variants_with_cccl_3_0(test_file: str, cache: Path) -> str:
    """Compile `test_file`'s ``_VARIANTS`` against CCCL 3.0; the child's output, or raise."""
    out = run_with_cccl_3_0(_VARIANTS_CHILD, cache, test_file)
    if out.returncode != 0:
        raise AssertionError(out.stderr[-3000:])
    return out.stdout.strip()
