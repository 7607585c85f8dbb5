# SPDX-License-Identifier: Apache-2.0
"""Processes that need the same artifact at once build it once (a per-key file lock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scan import _cache

pytestmark = pytest.mark.nvrtc

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    import numpy as np
    from scan import _cache, block
    go = sys.argv[1]
    while not os.path.exists(go):  # start together
        time.sleep(0.005)
    t0 = time.perf_counter()
    layout = block.temp_storage("scan", np.int16, 160, 3, algorithm="warp_scans", cc=(9, 0))
    print(json.dumps({"layout": list(layout), "stats": _cache.stats(),
                      "seconds": time.perf_counter() - t0}))
    """
)


def test_processes_started_together_compile_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    go = tmp_path / "go"
    env = {**os.environ, _cache.ENV_CACHE_DIR: str(cache), "NUMBA_ENABLE_CUDASIM": "0"}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(go)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(0.5)  # let them import before they race
    go.touch()
    results = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        results.append(json.loads(out))
    builds = [r["stats"].get("builds:provider", 0) for r in results]
    assert sorted(builds) == [0, 0, 0, 1]  # one compiled, three waited and read it
    assert sum(r["stats"].get("disk_hits", 0) for r in results) == 3
    assert len({tuple(r["layout"]) for r in results}) == 1
    assert not list(cache.glob(".*.lock"))  # the builder removed its lock file
