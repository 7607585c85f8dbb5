# SPDX-License-Identifier: Apache-2.0
"""Record-valued row scans: the project against CUB C++ and Triton.

``bench/_records_cells.py`` builds the tasks' contenders and cells (its docstring
describes them and the interface ``bench/matrix.py --records`` uses); this script
times them on its own.

Standalone
----------
``python bench/records_bench.py --out DIR [--quick]`` times every contender
(CUDA events, median of 20 launches after 3 warm-ups, the contenders of a
(task, shape) interleaved round by round), checks each before and after
timing, and writes ``DIR/records.csv`` and ``DIR/records.md`` (GB/s, and per
(task, shape) the best project over the best cub_cpp and over the best
triton). Exits 1 if any check fails or a contender cannot run.

``python bench/records_bench.py --build-only [--quick] [--build-dir DIR]``
compiles the CUB units and the project kernels (``scan.compile``, sm_90) with
no GPU and prints wall times and local-memory figures.

Under ``NUMBA_ENABLE_CUDASIM=1`` the project kernels, references and checks
run in the simulator (use small ``--shape`` values); nothing is precompiled
and the CUB/Triton contenders are reported as unavailable.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
from _records_cells import (
    PROJECT_IMPLS,
    SETUP_ERRORS,
    TASKS,
    build_cells,
    build_cub,
    build_project,
    sass_stats,
)
from numba import cuda

# ---------------------------------------------------------------------------- standalone run


@dataclass
class Measured:
    """One contender's outcome in the standalone run."""

    cell: dict[str, Any]
    contender: dict[str, Any]
    ok: bool = False
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return _common.median(self.times) if self.times else float("nan")

    @property
    def gbps(self) -> float:
        ms = self.median_ms
        return self.cell["bytes"] / (ms * 1e-3) / 1e9 if ms > 0 else float("nan")


def time_interleaved(entries: list[Measured], reps: int, warmup: int) -> None:
    """Time the contenders round by round, one launch each per round, with CUDA events."""
    live = [m for m in entries if m.ok]
    for _ in range(warmup):
        for m in list(live):
            try:
                m.contender["launch"]()
            except Exception as exc:
                _common.emit_error(exc, **_record_label(m), stage="warmup")
                m.ok = False
                live.remove(m)
    events: dict[int, list[tuple[Any, Any]]] = {id(m): [] for m in live}
    for _ in range(reps):
        for m in list(live):
            start, end = cuda.event(), cuda.event()
            start.record()
            try:
                m.contender["launch"]()
            except Exception as exc:
                _common.emit_error(exc, **_record_label(m), stage="timing")
                m.ok = False
                live.remove(m)
                continue
            end.record()
            events[id(m)].append((start, end))
    cuda.synchronize()
    for m in live:
        m.times = [float(start.elapsed_time(end)) for start, end in events[id(m)]]


def _record_label(m: Measured) -> dict[str, object]:
    return {
        "task": m.cell["task"],
        "impl": m.contender["impl"],
        "rows": m.cell["rows"],
        "cols": m.cell["cols"],
        "threads": m.cell["threads"],
        "items": m.cell["items"],
        "config": m.contender["config"],
    }


def run(all_cells: list[dict[str, Any]], reps: int, warmup: int) -> list[Measured]:
    """Check, time and check again every contender, one (task, shape) at a time."""
    groups: dict[tuple[str, int, int], list[Measured]] = {}
    for cell in all_cells:
        key = (cell["task"], cell["rows"], cell["cols"])
        for contender in cell["contenders"]:
            groups.setdefault(key, []).append(Measured(cell, contender))
    everything: list[Measured] = []
    for (task, rows, cols), entries in groups.items():
        print(f"records_bench: {task} {rows}x{cols}: {len(entries)} contenders", flush=True)
        for m in entries:
            m.ok = bool(m.contender["check"]())
        time_interleaved(entries, reps, warmup)
        for m in entries:
            if m.ok:
                m.ok = bool(m.contender["check"]())
            _common.emit(
                "RESULT",
                **_record_label(m),
                median_ms=m.median_ms,
                min_ms=min(m.times) if m.times else float("nan"),
                gbps=m.gbps,
                ok=m.ok,
                reps=len(m.times),
            )
        everything.extend(entries)
    return everything


def _best(entries: Iterable[Measured], impl: str) -> Measured | None:
    candidates = [m for m in entries if m.contender["impl"] == impl and m.ok and m.times]
    return max(candidates, key=lambda m: m.gbps) if candidates else None


def write_reports(measured: list[Measured], out_dir: Path) -> None:
    """``records.csv`` (every contender) and ``records.md`` (best per implementation, ratios)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "records.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                *("task", "rows", "cols", "impl", "threads", "items", "config"),
                *("median_ms", "min_ms", "gbps", "ok", "reps"),
            ]
        )
        for m in measured:
            key = [m.cell[k] for k in ("task", "rows", "cols")] + [m.contender["impl"]]
            key += [m.cell["threads"], m.cell["items"], m.contender["config"]]
            fastest = f"{min(m.times):.5f}" if m.times else "nan"
            writer.writerow(
                [*key, f"{m.median_ms:.5f}", fastest, f"{m.gbps:.2f}", int(m.ok), len(m.times)]
            )

    lines = [
        "# Record-valued row scans",
        "",
        "GB/s = 12 bytes per element (two 4-byte inputs, one 4-byte output) / median time.",
        "Ratios are GB/s of the best correct project configuration over the best correct",
        "configuration of the other implementation (above 1: the project is faster).",
        "",
    ]
    groups: dict[tuple[str, int, int], list[Measured]] = {}
    for m in measured:
        groups.setdefault((m.cell["task"], m.cell["rows"], m.cell["cols"]), []).append(m)
    for (task, rows, cols), entries in groups.items():
        lines += [f"## {task}, {rows} x {cols}", ""]
        lines += [
            "| impl | threads x items | config | GB/s | median ms |",
            "| --- | --- | --- | --- | --- |",
        ]
        best = {impl: _best(entries, impl) for impl in (*PROJECT_IMPLS, "cub_cpp", "triton")}
        for impl, m in best.items():
            if m is None:
                lines.append(f"| {impl} | - | (none correct) | - | - |")
            else:
                lines.append(
                    f"| {impl} | {m.cell['threads']} x {m.cell['items']} | {m.contender['config']} "
                    f"| {m.gbps:.1f} | {m.median_ms:.4f} |"
                )
        lines.append("")
        for impl in PROJECT_IMPLS:
            project = best[impl]
            for other in ("cub_cpp", "triton"):
                rival = best[other]
                ratio = project.gbps / rival.gbps if project and rival else float("nan")
                lines.append(f"- {impl} / best {other}: {ratio:.3f}")
        failed = [m for m in entries if not m.ok]
        if failed:
            names = ", ".join(f"{m.contender['impl']} {m.contender['config']}" for m in failed)
            lines.append(f"- FAILED: {names}")
        lines += [
            "",
            "| impl | threads x items | config | GB/s | ok |",
            "| --- | --- | --- | --- | --- |",
        ]
        for m in sorted(entries, key=lambda m: -m.gbps if m.times else 0.0):
            lines.append(
                f"| {m.contender['impl']} | {m.cell['threads']} x {m.cell['items']} | "
                f"{m.contender['config']} | {m.gbps:.1f} | {'yes' if m.ok else 'NO'} |"
            )
        lines.append("")
    (out_dir / "records.md").write_text("\n".join(lines))


def build_only(quick: bool, build_dir: Path) -> int:
    """Compile the CUB units and the project kernels for sm_90 without a GPU."""
    started = time.perf_counter()
    cc = (9, 0)
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, quick, build_dir, cc)
        project = build_project(quick, build_dir, cc)
        units = cub_future.result()
    for unit in units:
        if not unit.ok:
            continue
        stats = sass_stats(unit.cubin)
        for cfg in unit.configs:
            symbol = cfg.symbol(unit.task)
            st = stats.get(symbol)
            sass = f"LDL={st.ldl} STL={st.stl}" if st else "no cuobjdump"
            print(f"  cub_cpp {symbol}: {unit.usage.get(symbol, '?')} {sass}", flush=True)
    wall = time.perf_counter() - started
    failed = sum(not u.ok for u in units) + sum(not p.ok for p in project.values())
    print(f"records_bench: build-only done in {wall:.1f} s wall; {failed} failures", flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="folder for records.csv and records.md")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, few configurations")
    parser.add_argument("--build-only", action="store_true", help="compile only (no GPU needed)")
    parser.add_argument("--build-dir", type=Path, help="where cubins go (default: OUT/build)")
    parser.add_argument(
        "--shape", dest="shapes", action="append", type=_common.parse_shape, metavar="ROWSxCOLS"
    )
    parser.add_argument("--task", dest="tasks", action="append", choices=TASKS)
    parser.add_argument("--reps", type=int, default=20, help="timed launches per contender")
    parser.add_argument("--warmup", type=int, default=3, help="untimed launches per contender")
    args = parser.parse_args(argv)

    build_dir = args.build_dir
    if build_dir is None:
        if args.out is None and not args.build_only:
            parser.error("--out is required (or --build-only)")
        build_dir = (
            (args.out / "build") if args.out else Path(tempfile.gettempdir()) / "records_build"
        )
    if args.build_only:
        return build_only(args.quick, build_dir)
    if args.out is None:
        parser.error("--out is required")

    warnings_filter()
    try:
        all_cells = build_cells(args.quick, build_dir, args.shapes, args.tasks or TASKS)
        measured = run(all_cells, args.reps, args.warmup)
    except Exception:
        traceback.print_exc()
        return 1
    write_reports(measured, args.out)
    failed = [m for m in measured if not m.ok]
    print(
        f"records_bench: {len(measured)} contenders, {len(failed)} failed, "
        f"{len(SETUP_ERRORS)} could not be set up; reports in {args.out}",
        flush=True,
    )
    for line in SETUP_ERRORS:
        print(f"  not set up: {line[:300]}", flush=True)
    return 1 if failed or SETUP_ERRORS or not measured else 0


def warnings_filter() -> None:
    """Small grids make numba-cuda warn about occupancy; expected here."""
    import warnings

    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")


if __name__ == "__main__":
    sys.exit(main())
