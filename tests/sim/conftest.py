# SPDX-License-Identifier: Apache-2.0
"""Block-semantics tests shared by the simulator and the GPU.

They run in a process started with ``NUMBA_ENABLE_CUDASIM=1`` (tools/check.py
runs ``pytest -m sim`` in its own process: numba picks the simulator when it is
first imported), and unchanged on a GPU machine with ``SCAN_TESTS_BACKEND=gpu``
(tools/gpu_suite.sh), where tests marked ``sim_only`` (Python-level behaviour
of the simulator itself) are skipped. Elsewhere they are not collected.
"""

from __future__ import annotations

import os

from hypothesis import settings

ON_GPU = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1" and not ON_GPU:
    collect_ignore_glob = ["test_*.py"]

# as many examples on a GPU as in the simulator: every new case compiles new
# kernels there, so tools/gpu_suite.sh gives the property tests a process of
# their own (or xdist workers)
settings.register_profile("scan-sim", max_examples=40)
settings.register_profile("scan-gpu", max_examples=40)
settings.load_profile("scan-gpu" if ON_GPU else "scan-sim")
