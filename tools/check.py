# SPDX-License-Identifier: Apache-2.0
"""Run every check CI runs, in order, and print one closing count line.

Steps: ruff, mypy --strict, the compile/link test suite (no GPU needed), the
simulator suite (its own process: the simulator is chosen when numba is first
imported), and a packaging check that installs the built wheel into a fresh
virtual environment outside the source tree.

The compile/link suite also checks the generated code against CCCL 3.0, the
CCCL of the GPU machine's CUDA 13.0 toolkit: its headers come from a pinned
wheel (tests/helpers/cccl.py names it), downloaded once into the user's cache
folder. When that fails, those checks are skipped and the closing lines say so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
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


def _cccl_3_0() -> tuple[dict[str, str], str | None]:
    """Environment that gives the tests CCCL 3.0 headers, and why not when it cannot."""
    spec = importlib.util.spec_from_file_location("_cccl", ROOT / "tests" / "helpers" / "cccl.py")
    assert spec is not None
    assert spec.loader is not None
    cccl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cccl)
    if cccl.toolkit_cccl() is not None:
        return {}, None
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "statefn-scan-tests"
    folder = cache / "-".join(w.replace("==", "-") for w in cccl.PINNED_WHEELS)
    include = folder / cccl.WHEEL_INCLUDE
    members = getattr(cccl, "PINNED_MEMBERS", tuple(cccl.PINNED_WHEELS.values()))
    # a folder unpacked before a member was added lacks it: unpacked again
    if not include.is_dir() or not all(any(folder.glob(m + "*")) for m in members):
        wheels = list(cccl.PINNED_WHEELS)
        print(f"\n=== CCCL 3.0 headers: downloading {' '.join(wheels)}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            argv = [PY, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"]
            try:
                subprocess.run([*argv, "-d", tmp, *wheels], check=True, timeout=300)
                unpacked = Path(tmp) / "unpacked"
                for wheel in Path(tmp).glob("*.whl"):
                    with zipfile.ZipFile(wheel) as z:
                        z.extractall(unpacked, [n for n in z.namelist() if n.startswith(members)])
                folder.parent.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(folder, ignore_errors=True)
                shutil.move(str(unpacked), folder)
            except (OSError, ValueError, subprocess.SubprocessError, zipfile.BadZipFile) as exc:
                return {}, f"could not fetch {' '.join(wheels)}: {type(exc).__name__}: {exc}"
    env = {cccl.ENV: str(include)}
    os.environ.update(env)  # toolkit_cccl() reads it
    if cccl.toolkit_cccl() is None:
        return {}, cccl.skip_reason()
    return env, None


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

    cccl_env, cccl_skipped = _cccl_3_0()
    if cccl_skipped:
        print(f"!!!!! the CCCL 3.0 checks will be skipped: {cccl_skipped}", flush=True)
    cache = tempfile.mkdtemp(prefix="scan-cache-")
    base_env = {"STATEFN_SCAN_CACHE_DIR": cache}
    for title, args, env_extra in [
        (
            "tests",
            ["-m", "not sim", *extra],
            {**base_env, **cccl_env, "NUMBA_ENABLE_CUDASIM": "0"},
        ),
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
    if cccl_skipped:
        print(f"!!!!! skipped: the CCCL 3.0 checks ({cccl_skipped})")
    if failures:
        print("failed steps: " + ", ".join(failures))
    print(
        f"check: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
