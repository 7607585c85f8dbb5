# SPDX-License-Identifier: Apache-2.0
"""Run every check CI runs, in order, and print one closing count line.

Steps: ruff, mypy --strict, the compile/link test suite (no GPU needed), the
simulator suite (its own process: the simulator is chosen when numba is first
imported), and a packaging check that installs the built wheel into a fresh
virtual environment outside the source tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def _run(title: str, argv: list[str], env: dict[str, str] | None = None) -> int:
    print(f"\n=== {title}: {' '.join(argv)}", flush=True)
    t0 = time.perf_counter()
    rc = subprocess.call(argv, cwd=ROOT, env=env)
    print(f"=== {title}: rc={rc} in {time.perf_counter() - t0:.1f}s", flush=True)
    return rc


def _pytest(title: str, args: list[str], env_extra: dict[str, str]) -> tuple[int, dict[str, int]]:
    env = dict(os.environ)
    env.update(env_extra)
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        rc = _run(title, [PY, "-m", "pytest", *args, f"--junitxml={junit}"], env)
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        if junit.exists():
            for suite in ET.parse(junit).getroot().iter("testsuite"):
                tests = int(suite.get("tests", 0))
                failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
                skipped = int(suite.get("skipped", 0))
                counts["failed"] += failed
                counts["skipped"] += skipped
                counts["passed"] += tests - failed - skipped
    # pytest exits 5 when it collected nothing; that is a failure here too
    return rc, counts


def main() -> int:
    failures: list[str] = []
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    extra = sys.argv[1:]

    if _run("ruff", [PY, "-m", "ruff", "check", "."]) != 0:
        failures.append("ruff")
    if _run("ruff format", [PY, "-m", "ruff", "format", "--check", "statefn", "scan"]) != 0:
        failures.append("ruff format")
    if _run("mypy", [PY, "-m", "mypy"]) != 0:
        failures.append("mypy")

    cache = tempfile.mkdtemp(prefix="scan-cache-")
    base_env = {"STATEFN_SCAN_CACHE_DIR": cache}
    for title, args, env_extra in [
        ("tests", ["-m", "not sim", *extra], {**base_env, "NUMBA_ENABLE_CUDASIM": "0"}),
        ("simulator tests", ["-m", "sim", *extra], {**base_env, "NUMBA_ENABLE_CUDASIM": "1"}),
    ]:
        rc, counts = _pytest(title, args, env_extra)
        for k in totals:
            totals[k] += counts[k]
        if rc not in (0,):
            failures.append(title)

    if _run("packaging", [PY, str(ROOT / "tools" / "check_wheel.py")]) != 0:
        failures.append("packaging")

    print()
    if failures:
        print("failed steps: " + ", ".join(failures))
    print(
        f"check: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
