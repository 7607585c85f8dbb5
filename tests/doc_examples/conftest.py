# SPDX-License-Identifier: Apache-2.0
"""The documentation's examples run in both test processes.

``test_sim_*`` modules launch kernels in the CUDA simulator (the process with
``NUMBA_ENABLE_CUDASIM=1``); every other module compiles for ``cc=(9, 0)`` or
runs host-side code, in the process without the simulator. numba picks the
simulator when it is first imported, so each process collects only its own
modules.
"""

from __future__ import annotations

import os

if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
    collect_ignore_glob = ["test_[!s]*.py", "test_s[!i]*.py", "error_cases.py"]
else:
    collect_ignore_glob = ["test_sim_*.py"]
