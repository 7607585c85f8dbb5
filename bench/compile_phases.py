# SPDX-License-Identifier: Apache-2.0
"""Where a cold compile of the README kernel spends its time, without a GPU.

Runs ``bench/compile_times.py``'s scan child in fresh processes on empty cache
folders, with timers around the library's NVRTC run and its reading of the
temp-storage layouts, and the time at which the kernel's first call asks for
its unit (the end of Numba's typing of the kernel). Then compiles the kernel's
unit again, and a unit that only includes CUB's block headers, with NVRTC's
``--time`` report (front end and optimizer):

    python bench/compile_phases.py [--repeats 3]

``--concurrent N`` instead starts N such processes at once on one empty cache
folder and prints each one's phases, with the CPU time its compile and link
took and when its compile started after the first process's did: where the
time of processes compiling the same kernel at once goes.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _compile_timing import CHILD, TIMED, run_together

INSTRUMENT = (
    TIMED
    + """
from scan import _build as _b, _compile as _c
from scan._numba_cuda import _lowering as _lw

_c._nvrtc = _timed(_c._nvrtc, "nvrtc")
_c._read_layouts = _timed(_c._read_layouts, "layouts")
_first_build = _lw.build

def _build(*args, **kwargs):
    PHASES.setdefault("first_call_at", _time.perf_counter() - t1)
    result = _first_build(*args, **kwargs)
    PHASES.setdefault("first_unit_done_at", _time.perf_counter() - t1)
    return result

_lw.build = _build
"""
)


def _child() -> str:
    clocks = "_cpu1 = time.process_time()\n_wall1 = time.time()\n"
    child = CHILD.replace(
        "t1 = time.perf_counter()", "t1 = time.perf_counter()\n" + clocks + INSTRUMENT, 1
    )
    return child.replace(
        '"stats": _cache.stats()',
        '"phases": PHASES, "cpu": time.process_time() - _cpu1, "start": _wall1, '
        '"builds": _cache.stats()',
        1,
    )


def _concurrent(n: int) -> None:
    """`n` instrumented cold processes at once on one cache folder, one row each."""
    with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
        rows: list[dict[str, Any]] = [dict(r) for r in run_together(n, cache, _child())]
    first = min(r["start"] for r in rows)
    print(
        "| process | import (s) | compile starts at (s) | typing to first call (s) "
        "| NVRTC (s) | unit in hand at (s) | compile (s) | link (s) | CPU in compile and link (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for i, r in enumerate(rows):
        p = r["phases"]
        print(
            f"| {i + 1} | {r['import']:.2f} | {r['start'] - first:.2f} | {p['first_call_at']:.2f} "
            f"| {p.get('nvrtc', 0.0):.2f} | {p['first_unit_done_at']:.2f} "
            f"| {r['compile']:.2f} | {r['link']:.2f} | {r['cpu']:.2f} |"
        )


def _nvrtc_report(source: str, include_dirs: list[str], options: list[str]) -> dict[str, float]:
    """NVRTC's own ``--time`` report of compiling `source` (ms per phase)."""
    from cuda.bindings import nvrtc

    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "time.csv"
        flags = [*options, *(f"-I{d}" for d in include_dirs), f"--time={report}"]
        _, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"unit.cu", 0, [], [])
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(flags), [f.encode() for f in flags])
        nvrtc.nvrtcDestroyProgram(prog)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC failed: {result}")
        phases = {}
        with open(report, newline="") as f:
            for row in csv.reader(f):
                if len(row) == 4 and row[3].strip() == "ms":
                    phases[row[1].strip()] = float(row[2])
        return phases


def main(argv: list[str] | None = None) -> int:
    """Print each process's phases, then NVRTC's report of the unit and of the headers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=0, help="processes at once")
    args = parser.parse_args(argv)
    if args.concurrent:
        for _ in range(args.repeats):
            _concurrent(args.concurrent)
            print()
        return 0
    child = _child()
    print(
        "| process | typing to first call (s) | NVRTC (s) | layouts (s) | unit built at (s) "
        "| compile (s) | link (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    dump = tempfile.mkdtemp(prefix="scan-units-")
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
            env = dict(os.environ, STATEFN_SCAN_CACHE_DIR=cache, STATEFN_SCAN_DUMP_DIR=dump)
            env.pop("NUMBA_ENABLE_CUDASIM", None)
            out = subprocess.run(
                [sys.executable, "-c", child, "scan"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            r = json.loads(out.strip().splitlines()[-1])
            p = r["phases"]
            print(
                f"| cold {i + 1} | {p['first_call_at']:.2f} | {p['nvrtc']:.2f} "
                f"| {p.get('layouts', 0.0):.2f} | {p['first_unit_done_at']:.2f} "
                f"| {r['compile']:.2f} | {r['link']:.2f} |"
            )
    from scan._compile import include_dirs, nvrtc_flags, nvrtc_options

    options = nvrtc_flags(nvrtc_options((9, 0)), include_paths=False)
    unit = sorted(Path(dump).glob("*.cu"))[0].read_text()
    headers = "".join(line + "\n" for line in unit.splitlines() if line.startswith("#include"))
    print()
    print("| NVRTC --time (ms) | CUDA C++ front end | NVVM optimizer | wall (s) |")
    print("| --- | --- | --- | --- |")
    for name, source in (("the kernel's unit", unit), ("its #include lines only", headers)):
        start = time.perf_counter()
        report = _nvrtc_report(source, list(include_dirs()), options)
        wall = time.perf_counter() - start
        print(
            f"| {name} | {report.get('CUDA C++ Frontend', float('nan')):.0f} "
            f"| {report.get('NVVM Optimizer', float('nan')):.0f} | {wall:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
