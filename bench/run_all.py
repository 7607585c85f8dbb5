# SPDX-License-Identifier: Apache-2.0
"""Run every row-scan benchmark in one go and write the report.

Parts, each in its own process (a crash or a lost CUDA context in one part
does not cost the others), in priority order:

``project_int32``   the project's kernels, int32 (``rowscan.py``), with SASS
``cub``             the hand-written CUDA C++ / CUB kernel (built here with nvcc,
                    in the background while the first part runs)
``reduce``          block reduce (``block.sum`` / ``block.reduce``) against CUB C++
                    ``BlockReduce`` in the same configurations (``reduce_bench.py``)
``reverse``         reverse row scans (``reverse=True``: int32 suffix sums, a backward
                    recurrence) against CUB C++ and Triton (``reverse_bench.py``)
``warp``            per-warp row scans (``scan.warp`` with a prefix callback, one row
                    per warp) against CUB C++ ``WarpScan`` (``warp_bench.py``)
``lookback``        cross-block single-pass scans (``prefix_op=scan.lookback``: a whole
                    array, or every row, in one launch) against CUB C++ ``DeviceScan``
                    (``lookback_bench.py``)
``bf16_rowscan``    bfloat16 rows scanned in float32 with a carried prefix, bfloat16 out,
                    against CUB C++, ``torch.cumsum`` and Triton (``bf16_rowscan.py``; its
                    table, CSV and timed samples go to ``--out`` too)
``neighbours``      row-wise adjacent differences and run heads with a carried item
                    against the same CUB calls in C++ (``neighbours_bench.py``; its
                    table, CSV and timed samples go to ``--out`` too)
``triton``          the Triton kernel (``triton_rowscan.py``)
``peers``           copy, torch.cumsum, cupy.cumsum (``peers.py --which basic``)
``first_launch``    time to first launch, cold and warm cache (``rowscan.py --first-launch``)
``launch``          host time of a launch through kernel[...], scan.launcher and cuda.core
                    (``launch_overhead.py``)
``tiles``           the default row kernel with its loop written as ``block.tiles(n,
                    items)`` against the same kernel with the ``range`` loop, in the
                    same interleaved rounds (``matrix.py --tiles``, default
                    algorithms only, no other contenders)
``project_float32`` the project's kernels, float32
``inductor``        torch.compile(torch.cumsum) (``peers.py --which compile``)
``cub_sass``        SASS statistics of the C++ kernels (``cuobjdump``, no GPU)

A part that fails, times out or is skipped for lack of time is reported loudly
and in the report; the rest still run. After every part the report is rewritten
into ``--out``: ``bench.csv``, ``bench.md``, ``bench.png``, ``sass.txt`` and
``summary.txt``, so a run cut short still leaves what it measured.

The exit status is 0 when every part ran and every result was correct, else 1.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as _dt
import importlib.metadata
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import _common
from _report import fmt, md_table
from _toolchain import find_cuda_home, find_tool

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

#: the project's kernels must reach this fraction of the best of CUB C++ and Triton
SPEED_TARGET = 0.97
#: time(prefix_op) / time(hand_carried) must stay below this
CALLBACK_TARGET = 1.02
#: warm first launch / plain Numba first launch must stay at or below this
FIRST_LAUNCH_TARGET = 1.2
#: process start to first result with an empty cache, against plain Numba
FIRST_LAUNCH_COLD_TARGET = 1.3
#: a new configuration's compile + launch in a warm process, against plain Numba
NEW_CONFIG_TARGET = 4.0
#: block reduce: CUB time / project time in the same configuration must reach this
REDUCE_TARGET = 0.98
#: look-back scans: best CUB DeviceScan time / best project time (reset + scan) must reach this
LOOKBACK_TARGET = 0.95
#: look-back scans of 16 rows: one-block-per-row time / look-back time must reach this
LOOKBACK_ONE_BLOCK_TARGET = 5.0
#: bfloat16 row scans: best CUB C++ time / best project time must reach this
BF16_TARGET = 0.98

PART_NAMES = (
    "project_int32",
    "cub",
    "reduce",
    "reverse",
    "warp",
    "lookback",
    "bf16_rowscan",
    "neighbours",
    "triton",
    "peers",
    "first_launch",
    "launch",
    "tiles",
    "project_float32",
    "inductor",
    "cub_sass",
)

# ---------------------------------------------------------------------------- state


@dataclass
class PartOutcome:
    """How one part ended."""

    name: str
    status: str  # "ok", "failed (rc=N)", "timed out", "skipped: ..."
    seconds: float = 0.0


@dataclass
class Report:
    """Everything collected so far."""

    records: list[dict[str, str]] = field(default_factory=list)
    #: the block-reduce part's RESULT records (``bench=reduce``), kept apart from the scans'
    reduce: list[dict[str, str]] = field(default_factory=list)
    #: the reverse-scan part's RESULT records (``bench=reverse``)
    reverse: list[dict[str, str]] = field(default_factory=list)
    #: the per-warp scan part's RESULT records (``bench=warp``)
    warp: list[dict[str, str]] = field(default_factory=list)
    #: the look-back scan part's RESULT records (``bench=lookback``)
    lookback: list[dict[str, str]] = field(default_factory=list)
    #: the bfloat16 row-scan part's RESULT records (``bench=bf16_rowscan``)
    bf16: list[dict[str, str]] = field(default_factory=list)
    parts: list[PartOutcome] = field(default_factory=list)
    project_sass: str = ""
    #: the ``tiles`` part's table (``matrix.md``'s section (g)), as Markdown lines
    tiles: list[str] = field(default_factory=list)
    cub_sass_text: str = ""
    cub_sass: dict[str, _common.SassStats] = field(default_factory=dict)
    header: dict[str, str] = field(default_factory=dict)

    def by_tag(self, tag: str) -> list[dict[str, str]]:
        """Records with the given tag."""
        return [r for r in self.records if r["tag"] == tag]


# ---------------------------------------------------------------------------- processes


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """End the process group this script started for ``proc`` (TERM, then KILL)."""
    for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run_streaming(
    name: str, argv: Sequence[str], timeout_s: float, env: dict[str, str] | None = None
) -> tuple[int | None, list[str]]:
    """Run ``argv``, echoing its output prefixed with ``[name]``; return (rc or None, lines).

    ``rc`` is None when the process was stopped at ``timeout_s``.
    """
    print(f"\n===== {name}: {' '.join(argv)} (limit {timeout_s:.0f} s)", flush=True)
    lines: list[str] = []
    proc = subprocess.Popen(
        list(argv),
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
        start_new_session=True,
    )

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            print(f"[{name}] {line}", end="", flush=True)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        rc: int | None = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        print(f"!!!!! {name}: still running after {timeout_s:.0f} s; stopping it", flush=True)
        _kill_group(proc)
        rc = None
    reader.join(timeout=10)
    return rc, lines


def _python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    paths = [str(BENCH), str(REPO)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def start_build(build_dir: Path, arch: str) -> tuple[subprocess.Popen[str] | None, Path, str]:
    """Start compiling ``cub_rowscan.cu`` in the background; return (process, binary, log path)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    binary = build_dir / "cub_rowscan"
    log = build_dir / "nvcc.log"
    nvcc = find_tool("nvcc")
    if nvcc is None:
        log.write_text("nvcc not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin\n")
        return None, binary, str(log)
    argv = [nvcc, "-O3", "-std=c++17", f"-arch={arch}", "-lineinfo"]
    home = find_cuda_home()
    if home is not None and (home / "include" / "cccl").is_dir():
        argv.append(f"-I{home / 'include' / 'cccl'}")
    argv += ["-o", str(binary), str(BENCH / "cub_rowscan.cu")]
    print(f"===== cub build (background): {' '.join(argv)}", flush=True)
    handle = log.open("w")
    proc = subprocess.Popen(
        argv, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    handle.close()
    return proc, binary, str(log)


# ---------------------------------------------------------------------------- analysis


def _f(record: dict[str, str], key: str, default: float = float("nan")) -> float:
    try:
        return float(record[key])
    except (KeyError, ValueError):
        return default


def _ok(record: dict[str, str]) -> bool:
    return record.get("ok") == "1"


def _shape(record: dict[str, str]) -> str:
    return f"{record.get('rows', '?')}x{record.get('cols', '?')}"


def _group_key(record: dict[str, str]) -> tuple[str, str]:
    return _shape(record), record.get("dtype", "?")


def _best(records: Iterable[dict[str, str]], impl: str) -> dict[str, dict[str, str]]:
    """Fastest correct record of ``impl`` per (shape, dtype), keyed ``"shape|dtype"``."""
    best: dict[str, dict[str, str]] = {}
    for r in records:
        if r.get("impl") != impl or not _ok(r):
            continue
        key = "|".join(_group_key(r))
        if key not in best or _f(r, "gbps") > _f(best[key], "gbps"):
            best[key] = r
    return best


@dataclass
class Baselines:
    """Per (shape, dtype) reference speeds in GB/s."""

    cub: dict[str, dict[str, str]]
    triton: dict[str, dict[str, str]]
    copy: dict[str, dict[str, str]]

    def ratio(self, r: dict[str, str], which: str) -> float:
        """Record speed over the baseline ``which`` ("cub", "ref", "copy")."""
        key = "|".join(_group_key(r))
        if which == "ref":
            refs = [_f(d[key], "gbps") for d in (self.cub, self.triton) if key in d]
            base = max(refs) if refs else float("nan")
        else:
            table = {"cub": self.cub, "copy": self.copy}[which]
            base = _f(table[key], "gbps") if key in table else float("nan")
        return _f(r, "gbps") / base if base == base and base > 0 else float("nan")


def _timing_records(report: Report) -> list[dict[str, str]]:
    def order(r: dict[str, str]) -> tuple[int, str, float]:
        return (int(r.get("rows", 0) or 0), r.get("dtype", ""), -_f(r, "gbps", 0.0))

    return sorted(report.by_tag("RESULT"), key=order)


def _impl_label(r: dict[str, str]) -> str:
    impl = r.get("impl", "?")
    state = r.get("state", "-")
    if impl == "scan_prefix_op" and state not in ("", "-"):
        return f"{impl} ({state} state)"
    return impl


# ---------------------------------------------------------------------------- writers


def write_csv(report: Report, path: Path) -> None:
    """All timing records with ratios, one row each."""
    base = _baselines(report)
    columns = [
        "impl",
        "dtype",
        "rows",
        "cols",
        "config",
        "state",
        "median_ms",
        "min_ms",
        "gbps",
        "ok",
        "reps",
        "vs_best_cub",
        "vs_best_cub_triton",
        "vs_copy",
        "first_launch_s",
        "bench",
        "task",
        "speed_vs_cub_same_config",
    ]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for r in _timing_records(report):
            row = [r.get(c, "") for c in columns[:11]]
            row += [fmt(base.ratio(r, w), 4) for w in ("cub", "ref", "copy")]
            row += [r.get("first_launch_s", ""), "rowscan", "", ""]
            writer.writerow(row)
        # block reduce: vs_best_cub against the fastest correct CUB configuration of the
        # same task and shape; the same configuration's ratio in the last column
        best_cub = _reduce_best(report, "cub_cpp")
        for r in report.reduce:
            best = best_cub.get(_reduce_key(r))
            vs_best = _f(r, "gbps") / _f(best, "gbps") if best else float("nan")
            row = [r.get(c, "") for c in columns[:11]]
            row += [fmt(vs_best, 4), "", "", "", "reduce", r.get("task", "")]
            row.append(fmt(_f(r, "speed_ratio"), 4) if r.get("impl") == "project" else "")
            writer.writerow(row)
        # reverse scans: vs_best_cub and vs_best_cub_triton of the project's records, the
        # same configuration's CUB ratio in the last column
        for r in report.reverse:
            row = [r.get(c, "") for c in columns[:11]]
            project = r.get("impl") == "project"
            # the faster of CUB and Triton: the smaller of the two ratios
            both = [_f(r, "vs_best_cub"), _f(r, "vs_best_triton")]
            both = [v for v in both if v == v]
            row += [fmt(_f(r, "vs_best_cub"), 4) if project else ""]
            row += [fmt(min(both), 4) if project and both else "", "", ""]
            row += ["reverse", r.get("task", "")]
            row.append(fmt(_f(r, "speed_ratio"), 4) if project else "")
            writer.writerow(row)
        # per-warp scans: vs_best_cub, the same configuration's CUB ratio in the last column
        for r in report.warp:
            project = r.get("impl") == "project"
            row = [r.get(c, "") for c in columns[:11]]
            row += [fmt(_f(r, "vs_best_cub"), 4) if project else "", "", "", ""]
            row += ["warp", r.get("task", "")]
            row.append(fmt(_f(r, "speed_ratio"), 4) if project else "")
            writer.writerow(row)
        # look-back scans: vs_best_cub of every record (no same-configuration CUB kernel)
        for r in report.lookback:
            row = [r.get(c, "") for c in columns[:11]]
            row += [fmt(_f(r, "vs_best_cub"), 4), "", "", ""]
            row += ["lookback", r.get("task", ""), ""]
            writer.writerow(row)


def _baselines(report: Report) -> Baselines:
    results = report.by_tag("RESULT")
    return Baselines(_best(results, "cub_cpp"), _best(results, "triton"), _best(results, "copy"))


def _headline_rows(report: Report) -> list[list[object]]:
    results = report.by_tag("RESULT")
    base = _baselines(report)
    project = _best(results, "scan_prefix_op")
    others = {
        name: _best(results, name)
        for name in ("scan_hand_carried", "torch.compile", "torch.cumsum", "cupy.cumsum")
    }
    keys = sorted(
        {"|".join(_group_key(r)) for r in results},
        key=lambda k: (int(k.split("x")[0]) if k[0].isdigit() else 0, k),
    )
    rows: list[list[object]] = []
    for key in keys:
        shape, dtype = key.split("|")
        p = project.get(key)
        cub = base.cub.get(key)
        tri = base.triton.get(key)
        ratio = base.ratio(p, "ref") if p else float("nan")
        verdict = "-" if ratio != ratio else ("PASS" if ratio >= SPEED_TARGET else "FAIL")
        rows.append(
            [
                shape,
                dtype,
                f"{fmt(_f(p, 'gbps'), 0)} ({p['config']})" if p else "-",
                f"{fmt(_f(cub, 'gbps'), 0)} ({cub['config']})" if cub else "-",
                f"{fmt(_f(tri, 'gbps'), 0)} ({tri['config']})" if tri else "-",
                fmt(_f(base.copy[key], "gbps"), 0) if key in base.copy else "-",
                *(fmt(_f(d[key], "gbps"), 0) if key in d else "-" for d in others.values()),
                fmt(ratio),
                verdict,
            ]
        )
    return rows


def _overhead_rows(report: Report) -> list[list[object]]:
    results = [r for r in report.by_tag("RESULT") if _ok(r)]
    hand = {
        (_shape(r), r["dtype"], r["config"], r.get("state")): r
        for r in results
        if r.get("impl") == "scan_hand_carried"
    }
    rows: list[list[object]] = []
    for r in results:
        if r.get("impl") != "scan_prefix_op":
            continue
        h = hand.get((_shape(r), r["dtype"], r["config"], r.get("state")))
        if h is None:
            continue
        ratio = _f(r, "median_ms") / _f(h, "median_ms")
        verdict = "PASS" if ratio < CALLBACK_TARGET else "FAIL"
        rows.append(
            [
                _shape(r),
                r["dtype"],
                r["config"],
                r.get("state", "-"),
                fmt(_f(r, "median_ms"), 4),
                fmt(_f(h, "median_ms"), 4),
                fmt(ratio, 4),
                verdict,
            ]
        )
    return rows


def _same_config_rows(report: Report) -> list[list[object]]:
    results = [r for r in report.by_tag("RESULT") if _ok(r)]
    cub = {(_shape(r), r["dtype"], r["config"]): r for r in results if r["impl"] == "cub_cpp"}
    rows: list[list[object]] = []
    for r in results:
        if r.get("impl") != "scan_prefix_op":
            continue
        c = cub.get((_shape(r), r["dtype"], r["config"]))
        if c is None:
            continue
        rows.append(
            [
                _shape(r),
                r["dtype"],
                r["config"],
                r.get("state", "-"),
                fmt(_f(c, "gbps"), 0),
                fmt(_f(r, "gbps"), 0),
                fmt(_f(r, "gbps") / _f(c, "gbps")),
            ]
        )
    return rows


def _reduce_key(r: dict[str, str]) -> tuple[str, str]:
    return r.get("task", "?"), _shape(r)


def _reduce_best(report: Report, impl: str) -> dict[tuple[str, str], dict[str, str]]:
    """Fastest correct block-reduce record of ``impl`` per (task, shape)."""
    best: dict[tuple[str, str], dict[str, str]] = {}
    for r in report.reduce:
        if r.get("impl") != impl or not _ok(r):
            continue
        key = _reduce_key(r)
        if key not in best or _f(r, "median_ms") < _f(best[key], "median_ms"):
            best[key] = r
    return best


def _reduce_rows(report: Report) -> list[list[object]]:
    """One row per block-reduce configuration: CUB and the project side by side."""
    cub = {
        (*_reduce_key(r), r.get("config")): r for r in report.reduce if r.get("impl") == "cub_cpp"
    }
    rows: list[list[object]] = []
    for r in report.reduce:
        if r.get("impl") != "project":
            continue
        c = cub.get((*_reduce_key(r), r.get("config")))
        speed = _f(r, "speed_ratio")
        if not _ok(r) or (c is not None and not _ok(c)):
            verdict = "WRONG"
        else:
            verdict = "-" if speed != speed else ("PASS" if speed >= REDUCE_TARGET else "FAIL")
        rows.append(
            [
                r.get("task", "?"),
                r.get("dtype", "?"),
                _shape(r),
                f"{r.get('threads', '?')} x {r.get('items', '?')}",
                r.get("io", "?"),
                r.get("algo", "?"),
                fmt(_f(c, "median_ms"), 4) if c else "-",
                fmt(_f(r, "median_ms"), 4),
                fmt(_f(r, "time_ratio")),
                fmt(speed),
                verdict,
            ]
        )
    return rows


def _reduce_notes(report: Report) -> list[str]:
    """Per (task, shape): the fastest of each side; then the worst same-configuration ratio."""
    notes: list[str] = []
    project, cub = _reduce_best(report, "project"), _reduce_best(report, "cub_cpp")
    for key in sorted(set(project) | set(cub)):
        p, c = project.get(key), cub.get(key)
        ratio = _f(c, "median_ms") / _f(p, "median_ms") if p and c else float("nan")
        notes.append(
            f"- reduce {key[0]} {key[1]}: best project "
            + (f"{fmt(_f(p, 'median_ms'), 4)} ms ({p.get('config')})" if p else "-")
            + " | best CUB "
            + (f"{fmt(_f(c, 'median_ms'), 4)} ms ({c.get('config')})" if c else "-")
            + f" | speed {fmt(ratio)}"
        )
    speeds = [
        (_f(r, "speed_ratio"), f"{r.get('task')} {_shape(r)} {r.get('config')}")
        for r in report.reduce
        if r.get("impl") == "project" and _f(r, "speed_ratio") == _f(r, "speed_ratio")
    ]
    if speeds:
        worst, name = min(speeds)
        below = sum(1 for s, _ in speeds if s < REDUCE_TARGET)
        notes.append(
            f"- reduce, same configuration: worst speed {worst:.3f} ({name}); {below} of "
            f"{len(speeds)} below {REDUCE_TARGET}"
        )
    return notes


def _launch_summary(report: Report) -> list[list[object]]:
    """``bench/launch_overhead.py``'s rows: host microseconds a launch."""
    return [
        [
            r.get("kernel", "?"),
            r.get("how", "?"),
            fmt(_f(r, "enqueue_us"), 2),
            fmt(_f(r, "sync_us"), 1) if r.get("sync_us") else "-",
            "ok" if r.get("ok") == "1" else "WRONG",
        ]
        for r in report.by_tag("LAUNCH")
    ]


def _first_launch_summary(report: Report) -> tuple[list[list[object]], list[str]]:
    records = [r for r in report.by_tag("FIRST_LAUNCH") if _ok(r)]
    rows: list[list[object]] = [
        [
            r.get("mode", "?"),
            r.get("cache", "?"),
            fmt(_f(r, "import_s")),
            fmt(_f(r, "setup_s")),
            fmt(_f(r, "first_launch_s")),
            fmt(_f(r, "to_first_launch_s")),
            fmt(_f(r, "process_s")),
            r.get("new_config_s", ""),
        ]
        for r in records
    ]
    groups: dict[str, list[dict[str, str]]] = {}
    for r in records:
        groups.setdefault(f"{r.get('mode')}/{r.get('cache')}", []).append(r)

    def med(group: str, key: str) -> float:
        values = [_f(r, key) for r in groups.get(group, [])]
        return _common.median(values) if values else float("nan")

    notes: list[str] = []
    plain = med("plain/none", "first_launch_s")
    for cache in ("warm", "cold"):
        scan = med(f"scan/{cache}", "first_launch_s")
        if scan == scan and plain == plain and plain > 0:
            ratio = scan / plain
            verdict = ""
            if cache == "warm":
                verdict = " PASS" if ratio <= FIRST_LAUNCH_TARGET else " FAIL"
            notes.append(
                f"- first launch, scan ({cache} cache) / plain Numba: {scan:.3f} s / "
                f"{plain:.3f} s = **{ratio:.2f}x**{verdict} (target for warm: <= "
                f"{FIRST_LAUNCH_TARGET}x)"
            )
    plain_total = med("plain/none", "to_first_launch_s")
    cold_processes = len(groups.get("scan/cold", []))
    for what, key, target in (
        (
            "process start to first result, empty cache",
            "to_first_launch_s",
            FIRST_LAUNCH_COLD_TARGET,
        ),
        (
            "a new configuration in a warm process (compile + launch; median over "
            f"{cold_processes} cold processes of each one's median of 4 configurations)",
            "new_config_median_s",
            NEW_CONFIG_TARGET,
        ),
    ):
        scan, plain = med("scan/cold", key), med("plain/none", key)
        if scan == scan and plain == plain and plain > 0:
            ratio = scan / plain
            notes.append(
                f"- {what}: scan {scan:.3f} s, plain {plain:.3f} s = **{ratio:.2f}x**"
                f"{' PASS' if ratio <= target else ' FAIL'} (target <= {target}x)"
            )
    warm_total = med("scan/warm", "to_first_launch_s")
    if plain_total == plain_total and warm_total == warm_total and plain_total > 0:
        notes.append(
            f"- including imports (process start to first result): warm scan {warm_total:.3f} s, "
            f"plain {plain_total:.3f} s = {warm_total / plain_total:.2f}x"
        )
    return rows, notes


_SASS_HEAD = (
    "impl",
    "dtype",
    "config",
    "state",
    "regs",
    "local",
    "LDL",
    "STL",
    "LDS",
    "STS",
    "instr",
)


def _sass_rows(report: Report) -> list[list[object]]:
    rows: list[list[object]] = []
    for r in report.by_tag("SASS"):
        rows.append(
            [
                r.get("impl", "?"),
                r.get("dtype", "?"),
                r.get("config", "?"),
                r.get("state", "-"),
                r.get("regs", "?"),
                r.get("local_bytes", "?"),
                r.get("ldl", "?"),
                r.get("stl", "?"),
                r.get("lds", "?"),
                r.get("sts", "?"),
                r.get("instructions", "?"),
            ]
        )
    for k in report.by_tag("KERNEL"):
        stats = report.cub_sass.get(k.get("symbol", ""))
        rows.append(
            [
                "cub_cpp",
                k.get("dtype", "?"),
                k.get("config", "?"),
                "-",
                k.get("regs", "?"),
                k.get("local_bytes", "?"),
                stats.ldl if stats else "?",
                stats.stl if stats else "?",
                stats.lds if stats else "?",
                stats.sts if stats else "?",
                stats.instructions if stats else "?",
            ]
        )
    return rows


def _reverse_best(report: Report, impl: str) -> dict[tuple[str, str], dict[str, str]]:
    """Fastest correct reverse-scan record of ``impl`` per (task, shape)."""
    best: dict[tuple[str, str], dict[str, str]] = {}
    for r in report.reverse:
        if r.get("impl") != impl or not _ok(r):
            continue
        key = _reduce_key(r)
        if key not in best or _f(r, "median_ms") < _f(best[key], "median_ms"):
            best[key] = r
    return best


def _reverse_rows(report: Report) -> list[list[object]]:
    """Per (task, shape): the fastest project, CUB and Triton, and the speed ratios."""
    best = {impl: _reverse_best(report, impl) for impl in ("project", "cub_cpp", "triton")}
    keys = sorted(set().union(*(set(b) for b in best.values())))
    rows: list[list[object]] = []
    for key in keys:
        p, c, t = (best[impl].get(key) for impl in ("project", "cub_cpp", "triton"))

        def cell(r: dict[str, str] | None) -> str:
            return f"{fmt(_f(r, 'median_ms'), 4)} ({r.get('config')})" if r else "-"

        p_ms = _f(p, "median_ms") if p else float("nan")
        rows.append(
            [
                key[0],
                key[1],
                cell(p),
                cell(c),
                cell(t),
                fmt(_f(c, "median_ms") / p_ms) if c else "-",
                fmt(_f(t, "median_ms") / p_ms) if t else "-",
            ]
        )
    return rows


def _reverse_notes(report: Report) -> list[str]:
    """One line per (task, shape): best project against best CUB and best Triton."""
    return [
        f"- reverse {row[0]} {row[1]}: project {row[2]} | CUB {row[3]} | Triton {row[4]} | "
        f"speed vs CUB {row[5]}, vs Triton {row[6]}"
        for row in _reverse_rows(report)
    ]


def _bf16_rows(report: Report) -> list[list[object]]:
    """Per shape: the fastest project (any, and with every default), CUB, torch and Triton."""
    defaults = Report(reverse=[r for r in report.bf16 if r.get("algo") == "default"])
    best = {impl: _reverse_best(Report(reverse=report.bf16), impl) for impl in _BF16_IMPLS}
    best["default"] = _reverse_best(defaults, "project")
    rows: list[list[object]] = []

    def cell(r: dict[str, str] | None) -> str:
        return f"{fmt(_f(r, 'median_ms'), 4)} ({r.get('config')})" if r else "-"

    def ratio(mine: dict[str, str] | None, other: dict[str, str] | None) -> float:
        return _f(other, "median_ms") / _f(mine, "median_ms") if mine and other else float("nan")

    def speed(mine: dict[str, str] | None, other: dict[str, str] | None) -> str:
        return fmt(ratio(mine, other)) if mine and other else "-"

    for key in sorted(set().union(*(set(b) for b in best.values()))):
        found = {impl: b.get(key) for impl, b in best.items()}
        project, cub = found["project"], found["cub_cpp"]
        rows.append(
            [
                key[1],
                cell(project),
                fmt(_f(project, "gbps"), 0) if project else "-",
                cell(found["default"]),
                cell(cub),
                cell(found["torch"]),
                cell(found["triton"]),
                speed(project, cub),
                _verdict(ratio(project, cub), BF16_TARGET),
                speed(found["default"], cub),
                speed(project, found["torch"]),
                speed(project, found["triton"]),
            ]
        )
    return rows


_BF16_IMPLS = ("project", "cub_cpp", "torch", "triton")


def _verdict(ratio: float, goal: float) -> str:
    return "-" if ratio != ratio else ("PASS" if ratio >= goal else "FAIL")


def _bf16_notes(report: Report) -> list[str]:
    """One line per shape: the bests and their speed ratios."""
    return [
        f"- bf16 rows {r[0]}: project {r[1]} {r[2]} GB/s | defaults {r[3]} | CUB {r[4]} | "
        f"torch {r[5]} | Triton {r[6]} | speed vs CUB {r[7]} {r[8]} (defaults {r[9]}), vs "
        f"torch {r[10]}, vs Triton {r[11]}"
        for r in _bf16_rows(report)
    ]


def _warp_rows(report: Report) -> list[list[object]]:
    """Per shape: the fastest project and CUB per-warp scans (the reverse part's table)."""
    return [row[:4] + row[5:6] for row in _reverse_rows(Report(reverse=report.warp))]


def _lookback_best(report: Report, impl: str) -> dict[tuple[str, str, str], dict[str, str]]:
    """Fastest correct look-back-part record of ``impl`` per (task, dtype, shape)."""
    best: dict[tuple[str, str, str], dict[str, str]] = {}
    for r in report.lookback:
        if r.get("impl") != impl or not _ok(r):
            continue
        key = (r.get("task", "?"), r.get("dtype", "?"), _shape(r))
        if key not in best or _f(r, "median_ms") < _f(best[key], "median_ms"):
            best[key] = r
    return best


def _lookback_rows(report: Report) -> list[list[object]]:
    """Per (task, dtype, shape): the fastest project (reset + scan) against the fastest CUB
    DeviceScan and, for the rows task, against the one-block-per-row kernel."""
    impls = ("project", "cub_cpp", "project_block")
    best = {impl: _lookback_best(report, impl) for impl in impls}
    keys = sorted(set().union(*(set(b) for b in best.values())))
    rows: list[list[object]] = []
    for key in keys:
        p, c, b = (best[impl].get(key) for impl in impls)

        def cell(r: dict[str, str] | None) -> str:
            return f"{fmt(_f(r, 'gbps'), 0)} ({r.get('config')})" if r else "-"

        def verdict(ratio: float, goal: float) -> str:
            return "-" if ratio != ratio else ("PASS" if ratio >= goal else "FAIL")

        p_ms = _f(p, "median_ms") if p else float("nan")
        vs_cub = _f(c, "median_ms") / p_ms if c else float("nan")
        vs_block = _f(b, "median_ms") / p_ms if b else float("nan")
        rows.append(
            [
                *key,
                cell(p),
                cell(c),
                fmt(vs_cub),
                verdict(vs_cub, LOOKBACK_TARGET),
                cell(b),
                fmt(vs_block),
                verdict(vs_block, LOOKBACK_ONE_BLOCK_TARGET) if b else "-",
            ]
        )
    return rows


def _problems(report: Report) -> list[str]:
    lines = [f"- part `{p.name}`: {p.status}" for p in report.parts if p.status != "ok"]
    for r in report.records:
        if r["tag"] in ("ERROR", "MISMATCH"):
            detail = " ".join(f"{k}={v}" for k, v in r.items() if k != "tag")
            lines.append(f"- {r['tag']}: {detail[:500]}")
        elif r["tag"] == "RESULT" and not _ok(r):
            lines.append(f"- wrong result: {_impl_label(r)} {r['dtype']} {_shape(r)} {r['config']}")
    for r in report.reduce:
        if not _ok(r):
            lines.append(
                f"- wrong result: reduce {r.get('impl')} {r.get('task')} {_shape(r)} "
                f"{r.get('config')}"
            )
    for r in report.reverse:
        if not _ok(r):
            lines.append(
                f"- wrong result: reverse {r.get('impl')} {r.get('task')} {_shape(r)} "
                f"{r.get('config')}"
            )
    lines += [
        f"- wrong result: warp {r.get('impl')} {_shape(r)} {r.get('config')}"
        for r in report.warp
        if not _ok(r)
    ]
    lines += [
        f"- wrong result: lookback {r.get('impl')} {r.get('task')} {r.get('dtype')} "
        f"{_shape(r)} {r.get('config')}"
        for r in report.lookback
        if not _ok(r)
    ]
    lines += [
        f"- wrong result: bf16 rows {r.get('impl')} {_shape(r)} {r.get('config')}"
        for r in report.bf16
        if not _ok(r)
    ]
    return lines


def write_markdown(report: Report, path: Path) -> list[str]:
    """Write ``bench.md``; return the summary lines."""
    base = _baselines(report)
    out: list[str] = ["# Row-wise inclusive sum: benchmark report", ""]
    out += [f"- {k}: {v}" for k, v in report.header.items()]
    out += [
        "",
        "GB/s count bytes read + written (2 x rows x cols x itemsize) over the median of the "
        "timed launches. Ratios compare GB/s with the fastest correct CUB C++ configuration, "
        "the fastest of CUB C++ and Triton, and the device copy, for the same shape and dtype. "
        "Method: docs/performance.md.",
        "",
        "## Headline (fastest correct configuration of each)",
        "",
    ]
    out += md_table(
        [
            "shape",
            "dtype",
            "project prefix_op GB/s",
            "CUB C++",
            "Triton",
            "copy",
            "hand-carried",
            "torch.compile",
            "torch.cumsum",
            "cupy.cumsum",
            "project / best(CUB, Triton)",
            f">= {SPEED_TARGET}",
        ],
        _headline_rows(report),
    )
    out += ["", "## Same configuration: project vs CUB C++", ""]
    out += md_table(
        ["shape", "dtype", "config", "state", "CUB C++ GB/s", "project GB/s", "ratio"],
        _same_config_rows(report),
    )
    out += [
        "",
        "## Block reduce: project vs CUB C++ BlockReduce (same configuration)",
        "",
        "`bench/reduce_bench.py`: one block per row, a tile load and a block reduce a tile; "
        "median ms of interleaved launches; speed = CUB ms / project ms, target >= "
        f"{REDUCE_TARGET}.",
        "",
    ]
    out += md_table(
        [
            "task",
            "dtype",
            "shape",
            "threads x items",
            "io",
            "algo",
            "CUB ms",
            "project ms",
            "project / CUB time",
            "speed",
            f">= {REDUCE_TARGET}",
        ],
        _reduce_rows(report),
    )
    out += ["", *_reduce_notes(report)]
    out += [
        "",
        "## Reverse row scans: project vs CUB C++ and Triton (fastest correct of each)",
        "",
        "`bench/reverse_bench.py`: one block (program) per row walked from its end; median ms "
        "of interleaved launches; speed = other ms / project ms. Every configuration: "
        "the part's table in bench.log.",
        "",
    ]
    out += md_table(
        ["task", "shape", "project ms", "CUB ms", "Triton ms", "speed vs CUB", "speed vs Triton"],
        _reverse_rows(report),
    )
    out += [
        "",
        "## Per-warp row scans: project vs CUB C++ WarpScan (fastest correct of each)",
        "",
        "`bench/warp_bench.py`: one row per warp, a running total carried by `scan.warp`'s "
        "prefix callback (CUB: in a register); speed = CUB ms / project ms. Every "
        "configuration: the part's table in bench.log.",
        "",
    ]
    out += md_table(["task", "shape", "project ms", "CUB ms", "speed vs CUB"], _warp_rows(report))
    out += [
        "",
        "## bfloat16 rows, float32 scan with a carried prefix: project vs CUB C++, torch, Triton",
        "",
        "`bench/bf16_rowscan.py`: bfloat16 in, float32 running sums, bfloat16 out; GB/s counts "
        f"2 + 2 bytes an item; speed = other ms / project ms (target vs CUB: {BF16_TARGET}). "
        "Every configuration: bf16_rowscan.md, .csv and the timed samples beside this file.",
        "",
    ]
    out += md_table(
        [
            "shape",
            "project ms",
            "GB/s",
            "defaults ms",
            "CUB ms",
            "torch ms",
            "Triton ms",
            "vs CUB",
            f">= {BF16_TARGET}",
            "defaults vs CUB",
            "vs torch",
            "vs Triton",
        ],
        _bf16_rows(report),
    )
    out += [
        "",
        "## Cross-block look-back scans: project vs CUB C++ DeviceScan (fastest correct of each)",
        "",
        "`bench/lookback_bench.py`: one launch scans the whole array (or each of 16 rows) with "
        "`prefix_op=scan.lookback`; project = status reset + scan (DeviceScan times its init "
        "kernel too); ratios = other ms / project ms. Every contender: the part's table in "
        "bench.log.",
        "",
    ]
    out += md_table(
        [
            "task",
            "dtype",
            "shape",
            "project GB/s",
            "CUB DeviceScan GB/s",
            "vs CUB",
            f">= {LOOKBACK_TARGET}",
            "one block per row GB/s",
            "vs one block",
            f">= {LOOKBACK_ONE_BLOCK_TARGET}",
        ],
        _lookback_rows(report),
    )
    out += ["", f"## Cost of the prefix callback (time ratio, target < {CALLBACK_TARGET})", ""]
    out += md_table(
        [
            "shape",
            "dtype",
            "config",
            "state",
            "prefix_op ms",
            "hand-carried ms",
            "prefix_op / hand-carried",
            "verdict",
        ],
        _overhead_rows(report),
    )
    fl_rows, fl_notes = _first_launch_summary(report)
    out += ["", "## Time to first launch (seconds; definitions in docs/performance.md)", ""]
    out += md_table(
        [
            "kernel",
            "cache",
            "import",
            "setup",
            "first launch",
            "start to result",
            "process",
            "new configurations (each)",
        ],
        fl_rows,
    )
    out += ["", *fl_notes]
    if report.tiles:
        out += [
            "",
            "## Tile iterators: block.tiles against the range loop (bench/matrix.py --tiles)",
            "",
            *report.tiles,
        ]
    launch_rows = _launch_summary(report)
    if launch_rows:
        out += ["", "## Host time of a launch (microseconds; bench/launch_overhead.py)", ""]
        out += md_table(
            ["kernel", "launched through", "enqueued, a launch", "synchronised", "output"],
            launch_rows,
        )
    out += ["", "## SASS (target: no LDL/STL in the project's kernels)", ""]
    out += md_table(
        [
            "impl",
            "dtype",
            "config",
            "state",
            "regs",
            "local B",
            "LDL",
            "STL",
            "LDS",
            "STS",
            "instr",
        ],
        _sass_rows(report),
    )
    out += ["", "## All results", ""]
    table = []
    for r in _timing_records(report):
        table.append(
            [
                _impl_label(r),
                r.get("dtype", "?"),
                _shape(r),
                r.get("config", "?"),
                fmt(_f(r, "gbps"), 1),
                fmt(_f(r, "median_ms"), 4),
                "yes" if _ok(r) else "**NO**",
                fmt(base.ratio(r, "cub")),
                fmt(base.ratio(r, "ref")),
                fmt(base.ratio(r, "copy")),
            ]
        )
    out += md_table(
        [
            "impl",
            "dtype",
            "shape",
            "config",
            "GB/s",
            "median ms",
            "correct",
            "vs best CUB",
            "vs best(CUB, Triton)",
            "vs copy",
        ],
        table,
    )
    problems = _problems(report)
    out += ["", "## Problems", ""]
    out += problems or ["none"]
    out += ["", "## Parts", ""]
    out += md_table(
        ["part", "status", "seconds"],
        [[p.name, p.status, f"{p.seconds:.1f}"] for p in report.parts],
    )
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return _summary_lines(report, problems, fl_notes)


def _summary_lines(report: Report, problems: list[str], fl_notes: list[str]) -> list[str]:
    lines = []
    for row in _headline_rows(report):
        lines.append(
            f"speed {row[0]} {row[1]}: project {row[2]} | CUB {row[3]} | Triton {row[4]} | "
            f"copy {row[5]} | ratio {row[-2]} {row[-1]}"
        )
    overhead = _overhead_rows(report)
    if overhead:
        worst = max(overhead, key=lambda r: float(str(r[6])))
        fails = sum(1 for r in overhead if r[7] == "FAIL")
        lines.append(
            f"callback cost: worst {worst[6]} ({worst[0]} {worst[1]} {worst[2]}); "
            f"{fails}/{len(overhead)} over {CALLBACK_TARGET}"
        )
    lines += [n.lstrip("- ").replace("**", "") for n in fl_notes]
    lines += [n.lstrip("- ") for n in _reduce_notes(report)]
    lines += [n.lstrip("- ") for n in _reverse_notes(report)]
    warp = _warp_rows(report)
    lines += [f"warp {r[1]}: project {r[2]} | CUB {r[3]} | speed {r[4]}" for r in warp]
    lines += [n.lstrip("- ") for n in _bf16_notes(report)]
    for r in _lookback_rows(report):
        line = f"lookback {r[0]} {r[1]} {r[2]}: project {r[3]} | CUB {r[4]} | vs CUB {r[5]} {r[6]}"
        if r[7] != "-":
            line += f" | one block {r[7]} | vs one block {r[8]} {r[9]}"
        lines.append(line)
    sass = report.by_tag("SASS")
    if sass:
        local = [r for r in sass if r.get("ldl") != "0" or r.get("stl") != "0"]
        lines.append(
            f"SASS: {len(sass)} project kernels, {len(local)} with LDL/STL"
            + (": " + ", ".join(f"{r['dtype']} {r['config']} {r['impl']}" for r in local))
            if local
            else f"SASS: {len(sass)} project kernels, none with LDL/STL"
        )
    n_results = len(report.by_tag("RESULT"))
    lines.append(f"results: {n_results} timings, problems: {len(problems)}")
    lines += [p.lstrip("- ") for p in problems[:20]]
    return lines


def write_sass(report: Report, path: Path) -> None:
    """Statistics table plus the full SASS of the headline kernels."""
    head = list(_SASS_HEAD)
    table: list[list[object]] = [list(head), *_sass_rows(report)]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(head))]
    lines = ["SASS statistics (LDL/STL: local memory; LDS/STS: shared memory)", ""]
    for row in table:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)))
    lines += ["", report.project_sass, report.cub_sass_text]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_plot(report: Report, path: Path) -> None:
    """Bar chart: fastest correct configuration of each implementation, per shape and dtype."""
    import matplotlib  # type: ignore[import-not-found, unused-ignore]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]

    results = [r for r in report.by_tag("RESULT") if _ok(r)]
    if not results:
        return
    keys = sorted({_group_key(r) for r in results}, key=lambda k: (int(k[0].split("x")[0]), k[1]))
    impls = [
        "copy",
        "cub_cpp",
        "triton",
        "scan_prefix_op",
        "scan_hand_carried",
        "torch.compile",
        "torch.cumsum",
        "cupy.cumsum",
    ]
    colors = {
        "copy": "#888888",
        "cub_cpp": "#1f77b4",
        "triton": "#ff7f0e",
        "scan_prefix_op": "#2ca02c",
        "scan_hand_carried": "#98df8a",
        "torch.compile": "#9467bd",
        "torch.cumsum": "#c5b0d5",
        "cupy.cumsum": "#d62728",
    }
    ncols = min(2, len(keys))
    nrows = (len(keys) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(7 * ncols, 3.6 * nrows), squeeze=False)
    base = _baselines(report)
    for ax, (shape, dtype) in zip(axes.flat, keys, strict=False):
        names: list[str] = []
        values: list[float] = []
        for impl in impls:
            best = _best(results, impl).get(f"{shape}|{dtype}")
            if best is not None:
                names.append(f"{impl}\n{best['config']}")
                values.append(_f(best, "gbps"))
        ypos = list(range(len(names)))
        ax.barh(ypos, values, color=[colors[n.split("\n")[0]] for n in names])
        ax.set_yticks(ypos, names, fontsize=7)
        ax.invert_yaxis()
        for y, v in zip(ypos, values, strict=False):
            ax.text(v, y, f" {v:.0f}", va="center", fontsize=7)
        refs = [
            _f(d[f"{shape}|{dtype}"], "gbps")
            for d in (base.cub, base.triton)
            if f"{shape}|{dtype}" in d
        ]
        if refs:
            ax.axvline(
                SPEED_TARGET * max(refs), color="k", linestyle="--", linewidth=0.8, label="target"
            )
            ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"{dtype}, {shape}", fontsize=9)
        ax.set_xlabel("GB/s (read + write)", fontsize=8)
        ax.set_xlim(0, max(values) * 1.15 if values else 1)
    for ax in list(axes.flat)[len(keys) :]:
        ax.axis("off")
    fig.suptitle("Row-wise inclusive sum, fastest correct configuration per implementation")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render(report: Report, out_dir: Path) -> list[str]:
    """Rewrite every output file; return the summary lines. Never raises."""
    summary: list[str] = []
    writers: tuple[tuple[str, Callable[[Path], object]], ...] = (
        ("bench.csv", lambda p: write_csv(report, p)),
        ("bench.md", lambda p: summary.extend(write_markdown(report, p))),
        ("sass.txt", lambda p: write_sass(report, p)),
        ("bench.png", lambda p: write_plot(report, p)),
    )
    for name, writer in writers:
        try:
            writer(out_dir / name)
        except Exception as exc:
            print(f"!!!!! could not write {name}: {type(exc).__name__}: {exc}", flush=True)
    try:
        (out_dir / "summary.txt").write_text("\n".join(summary) + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"!!!!! could not write summary.txt: {exc}", flush=True)
    return summary


# ---------------------------------------------------------------------------- the run


def _versions() -> dict[str, str]:
    info = {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "host": platform.node(),
    }
    packages = ["numba", "numba-cuda", "numpy", "cuda-core", "cuda-bindings"]
    packages += ["nvidia-cuda-nvrtc", "torch", "triton", "cupy-cuda13x"]
    found = []
    for name in packages:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    info["packages"] = ", ".join(found)
    nvcc = find_tool("nvcc")
    if nvcc:
        with contextlib.suppress(Exception):
            text = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
            info["nvcc"] = text.strip().splitlines()[-1]
    return info


def _collect(report: Report, lines: Iterable[str]) -> None:
    for line in lines:
        record = _common.parse_record(line)
        if record is None:
            continue
        if record["tag"] == "DEVICE":
            if "name" in record:
                report.header.setdefault("device", record["name"])
            continue
        if record["tag"] == "RESULT" and record.get("bench") == "reduce":
            report.reduce.append(record)
            continue
        if record["tag"] == "RESULT" and record.get("bench") == "reverse":
            report.reverse.append(record)
            continue
        if record["tag"] == "RESULT" and record.get("bench") == "warp":
            report.warp.append(record)
            continue
        if record["tag"] == "RESULT" and record.get("bench") == "lookback":
            report.lookback.append(record)
            continue
        if record["tag"] == "RESULT" and record.get("bench") == "bf16_rowscan":
            report.bf16.append(record)
            continue
        report.records.append(record)


def _status(rc: int | None, lines: Sequence[str]) -> str:
    if rc is None:
        return "timed out"
    bad = sum(1 for line in lines if line.startswith(("ERROR", "MISMATCH")))
    if rc == 0 and not bad:
        return "ok"
    return f"failed (rc={rc}, {bad} ERROR/MISMATCH lines)"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(
        description="Run every row-scan benchmark and write bench.{csv,md,png}, sass.txt, "
        "summary.txt.",
        epilog="Parts: " + ", ".join(PART_NAMES),
    )
    parser.add_argument("--out", default="results", help="output folder (default: results/)")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, few repetitions")
    parser.add_argument("--reps", type=int, default=30, help="timed launches per configuration")
    parser.add_argument("--warmup", type=int, default=3, help="untimed launches first")
    parser.add_argument(
        "--parts",
        default=",".join(PART_NAMES),
        help="comma-separated subset of the parts to run, in the order above",
    )
    parser.add_argument(
        "--budget-s",
        type=float,
        default=420.0,
        help="wall-clock budget for the whole run; parts that would not fit are cut or skipped",
    )
    parser.add_argument("--arch", default="sm_90", help="nvcc -arch for the C++ kernel")
    parser.add_argument(
        "--build-dir",
        default=None,
        help="where to build the C++ benchmark (default: a temporary folder)",
    )
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PART_NAMES))
    if unknown:
        parser.error(f"unknown parts {unknown}; expected a subset of {list(PART_NAMES)}")

    started = time.monotonic()
    deadline = started + args.budget_s
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rowscan-bench-"))
    build_dir = Path(args.build_dir) if args.build_dir else work / "build"
    report = Report()
    report.header.update(_versions())
    report.header["command"] = " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])])
    print("\n".join(f"{k}: {v}" for k, v in report.header.items()), flush=True)

    if args.quick:
        args.reps = min(args.reps, 5)
        args.warmup = min(args.warmup, 1)
    py = sys.executable
    env = _python_env()
    common = ["--reps", str(args.reps), "--warmup", str(args.warmup)]
    if args.quick:
        common.append("--quick")
    shapes = _common.QUICK_SHAPES if args.quick else _common.SHAPES
    shape_args = [a for rows, cols in shapes for a in ("--shape", f"{rows}x{cols}")]
    project_sass = work / "project_sass.txt"

    build: subprocess.Popen[str] | None = None
    binary = build_dir / "cub_rowscan"
    build_log = str(build_dir / "nvcc.log")
    if "cub" in parts or "cub_sass" in parts:
        build, binary, build_log = start_build(build_dir, args.arch)

    def rowscan(dtype: str) -> list[str]:
        return [py, str(BENCH / "rowscan.py"), "--dtype", dtype, "--sass-file", str(project_sass)]

    commands: dict[str, tuple[list[str], float]] = {
        "project_int32": ([*rowscan("int32"), *common, *shape_args], 200),
        "cub": (
            [str(binary), "--reps", str(args.reps), "--warmup", str(args.warmup), *shape_args],
            120,
        ),
        "reduce": (
            [py, str(BENCH / "reduce_bench.py"), *common, "--build-dir", str(work / "reduce")],
            240,
        ),
        "reverse": (
            [py, str(BENCH / "reverse_bench.py"), *common, "--build-dir", str(work / "reverse")],
            300,
        ),
        "warp": (
            [py, str(BENCH / "warp_bench.py"), *common, "--build-dir", str(work / "warp")],
            240,
        ),
        "lookback": (
            [py, str(BENCH / "lookback_bench.py"), *common, "--build-dir", str(work / "lookback")],
            360,
        ),
        "bf16_rowscan": (
            [
                *(py, str(BENCH / "bf16_rowscan.py"), *common),
                *("--build-dir", str(work / "bf16"), "--out", str(out_dir)),
            ],
            180,
        ),
        "neighbours": (
            [
                *(py, str(BENCH / "neighbours_bench.py")),
                *(["--quick"] if args.quick else []),
                *("--build-dir", str(work / "neighbours"), "--out", str(out_dir)),
            ],
            180,
        ),
        "triton": ([py, str(BENCH / "triton_rowscan.py"), *common, *shape_args], 150),
        "peers": ([py, str(BENCH / "peers.py"), "--which", "basic", *common, *shape_args], 120),
        "first_launch": (
            [py, str(BENCH / "rowscan.py"), "--first-launch", *(["--quick"] if args.quick else [])],
            150,
        ),
        "launch": ([py, str(BENCH / "launch_overhead.py")], 90),
        "tiles": (
            [
                py,
                str(BENCH / "matrix.py"),
                "--tiles",
                "--project-configs",
                "default",
                "--no-cub",
                "--no-triton",
                "--no-mlir",
                "--no-records",
                "--no-shape-cells",
                "--threads",
                "128,256",
                "--items",
                "4,8",
                "--rounds",
                "15",
                "--sync-rounds",
                "3",
                "--budget-s",
                "170",
                *(["--quick"] if args.quick else shape_args),
                "--out",
                str(work / "tiles"),
            ],
            200,
        ),
        "project_float32": ([*rowscan("float32"), *common, *shape_args], 200),
        "inductor": (
            [py, str(BENCH / "peers.py"), "--which", "compile", *common, *shape_args],
            180,
        ),
    }

    failed = False
    for name in parts:
        part_started = time.monotonic()
        remaining = deadline - part_started
        status = "ok"
        try:
            if name in ("cub", "cub_sass"):
                ready = _wait_build(build, binary, build_log, max(5.0, remaining - 30))
                if not ready:
                    status = "failed: C++ build did not produce a binary (log above)"
                    failed = True
                    continue
                build = None
            if name == "cub_sass":
                status = _cub_sass(report, binary)
                continue
            argv_part, limit = commands[name]
            timeout = min(limit, remaining - 15)
            if timeout < 20:
                status = f"skipped: only {remaining:.0f} s of the budget left"
                print(f"!!!!! {name}: {status}", flush=True)
                failed = True
                continue
            run_env = env
            if name.startswith("project") or name in (
                "first_launch",
                "launch",
                "tiles",
                "reduce",
                "reverse",
                "warp",
                "lookback",
                "bf16_rowscan",
                "neighbours",
            ):
                run_env = dict(env)
                run_env.setdefault("STATEFN_SCAN_CACHE_DIR", str(work / "scan-cache"))
            rc, lines = run_streaming(name, argv_part, timeout, run_env)
            _collect(report, lines)
            status = _status(rc, lines)
            if name == "tiles":
                report.tiles = _tiles_table(work / "tiles" / "matrix.md")
        except Exception as exc:
            status = f"failed: {type(exc).__name__}: {exc}"
        finally:
            if status != "ok":
                failed = True
                print(f"!!!!! part {name}: {status}", flush=True)
            report.parts.append(PartOutcome(name, status, time.monotonic() - part_started))
            if project_sass.exists():
                report.project_sass = project_sass.read_text(encoding="utf-8", errors="replace")
            render(report, out_dir)

    if build is not None and build.poll() is None:
        _kill_group(build)
    summary = render(report, out_dir)
    print("\n===== summary (also in summary.txt)", flush=True)
    print("\n".join(summary), flush=True)
    print(f"===== run_all finished in {time.monotonic() - started:.0f} s; outputs in {out_dir}")
    shutil.rmtree(work, ignore_errors=True)
    bad_results = any(
        r["tag"] in ("ERROR", "MISMATCH") or (r["tag"] == "RESULT" and not _ok(r))
        for r in report.records
    ) or any(not _ok(r) for r in report.reduce)
    # a wrong Triton reverse variant is reported, not failing (reverse_bench.py's docstring)
    bad_results = bad_results or any(
        not _ok(r) for r in report.reverse if r.get("impl") != "triton"
    )
    bad_results = bad_results or any(not _ok(r) for r in report.warp)
    bad_results = bad_results or any(not _ok(r) for r in report.lookback)
    # a wrong torch or Triton result is reported, not failing (bf16_rowscan.py's docstring)
    bad_results = bad_results or any(
        not _ok(r) for r in report.bf16 if r.get("impl") in ("project", "cub_cpp")
    )
    return 1 if failed or bad_results else 0


def _tiles_table(path: Path) -> list[str]:
    """Section (g) of a ``matrix.py --tiles`` run's ``matrix.md`` (its table), or nothing."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## (g)")), None)
    if start is None:
        return []
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        table.append(line)
    return [line for line in table if line.strip()]


def _wait_build(
    build: subprocess.Popen[str] | None, binary: Path, log: str, timeout_s: float
) -> bool:
    if build is not None:
        print(f"===== waiting for the C++ build (up to {timeout_s:.0f} s)", flush=True)
        try:
            rc = build.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(build)
            rc = -1
        text = Path(log).read_text(errors="replace") if Path(log).exists() else ""
        if text.strip():
            print(f"[cub build] {text.strip()}", flush=True)
        print(f"===== C++ build finished with rc={rc}", flush=True)
        if rc != 0:
            return False
    return binary.exists()


def _cub_sass(report: Report, binary: Path) -> str:
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        return "failed: cuobjdump not found"
    sass = subprocess.run(
        [cuobjdump, "-sass", str(binary)], capture_output=True, text=True, timeout=120
    )
    usage = subprocess.run(
        [cuobjdump, "-res-usage", str(binary)], capture_output=True, text=True, timeout=120
    )
    if sass.returncode != 0:
        return f"failed: cuobjdump rc={sass.returncode}: {sass.stderr[-300:]}"
    stats = _common.parse_sass(sass.stdout)
    _common.parse_res_usage(usage.stdout, stats)
    report.cub_sass = stats
    # full SASS of the C++ headline kernels (int32 and float32, 256 x 8 warp_transpose)
    wanted = {
        k["symbol"]
        for k in report.by_tag("KERNEL")
        if k.get("config") == "b256_i8_warp_transpose_warp_scans"
    }
    if wanted:
        report.cub_sass_text = _extract_functions(sass.stdout, wanted)
    return "ok"


def _extract_functions(text: str, symbols: set[str]) -> str:
    """The SASS listing of the named functions out of a whole ``cuobjdump -sass`` output."""
    out: list[str] = []
    keep = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Function :"):
            name = stripped.split(":", 1)[1].strip()
            keep = name in symbols
            if keep:
                out.append(f"\n==== cub_cpp {name} ====")
        elif stripped.startswith(("code for sm_", "Fatbin ")):
            keep = False
        if keep:
            out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
