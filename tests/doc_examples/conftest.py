# SPDX-License-Identifier: Apache-2.0
"""The documentation's examples run in both test processes.

``test_sim_*`` modules launch kernels in the CUDA simulator (the process with
``NUMBA_ENABLE_CUDASIM=1``); every other module compiles for ``cc=(9, 0)`` or
runs host-side code, in the process without the simulator. numba picks the
simulator when it is first imported, so each process collects only its own
modules. On a GPU (``SCAN_TESTS_BACKEND=gpu``, tools/gpu_suite.sh) the
linear-recurrence example's ``test_sim_`` module runs too, on CUDA tensors.
"""

from __future__ import annotations

import os
from pathlib import Path

#: ``test_sim_`` modules that also run on a GPU, beside the compiling ones
ON_A_GPU_TOO = ("test_sim_linear_recurrence.py",)

if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
    collect_ignore_glob = ["test_[!s]*.py", "test_s[!i]*.py", "error_cases.py"]
elif os.environ.get("SCAN_TESTS_BACKEND") == "gpu":
    collect_ignore = sorted(
        p.name for p in Path(__file__).parent.glob("test_sim_*.py") if p.name not in ON_A_GPU_TOO
    )
else:
    collect_ignore_glob = ["test_sim_*.py"]
