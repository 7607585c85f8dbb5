# SPDX-License-Identifier: Apache-2.0
"""Simulator tests run only in a process started with ``NUMBA_ENABLE_CUDASIM=1``.

numba picks the simulator when it is first imported, so these modules are not
even collected in the compiled-path run (tools/check.py runs ``pytest -m sim``
in its own process with the variable set).
"""

from __future__ import annotations

import os

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    collect_ignore_glob = ["test_*.py"]
