# SPDX-License-Identifier: Apache-2.0
"""The defaults table of docs/performance.md from two bench/matrix.py runs.

    python bench/defaults_table.py FULL.csv [DEFAULTS.csv]

FULL.csv measured every configuration (explicit algorithms); DEFAULTS.csv, if
given and another file, measured the library's defaults in the cells where they
changed after FULL (a ``source`` column then says which run each row is from).
For each cell the project's figure is the default's: from DEFAULTS.csv where
it has the cell, else FULL.csv's kernel written without ``algorithm=``
(``project_default``), else FULL.csv's kernel naming the default algorithms
(the same plans except where the default tile I/O is ``vectorize`` falling
back to ``warp_transpose``, which no name selects). Ratios are GB/s over the best
CUB C++ configuration and the best Triton configuration of the same run.

Every figure is printed for both of bench/matrix.py's timings: ``b2b``
(CUDA events between back-to-back launches: the kernels' speed) and, in the
last three columns, ``sync`` (launch plus ``cuda.synchronize()`` timed on the
host: what a Python loop of launches sees), each against the best CUB C++
configuration under the same timing.
"""

import csv
import sys

import numpy as np

from scan._primitives.block_scan._plan import default_scan_algorithm
from scan._primitives.tile_io._plan import default_io


def _rows(path, method, task="rowscan"):
    with open(path, newline="") as f:
        return [
            r
            for r in csv.DictReader(f)
            if r["method"] == method and r["ok"] == "1" and r["task"] == task
        ]


def key(r):
    return (r["dtype"], r["rows"] + "x" + r["cols"], int(r["threads"]), int(r["items"]))


def _cells(rows):
    cells = {}
    for r in rows:
        cells.setdefault(key(r), []).append(r)
    return cells


def _project(rs, sa, io, from_defaults):
    """The cell's default kernel: written without algorithm=, else the same algorithms named."""
    proj = [r for r in rs if r["impl"] == "project_default"]
    if not proj and not from_defaults:
        proj = [r for r in rs if r["impl"] == "project" and r["scan_algo"] == sa and r["io"] == io]
    return proj


def _best_cub(rs):
    return max((r for r in rs if r["impl"] == "cub_cpp"), key=lambda r: float(r["gbps"]))


separate = len(sys.argv) > 2 and sys.argv[2] != sys.argv[1]
runs = {m: (_cells(_rows(sys.argv[1], m)), _cells(_rows(sys.argv[-1], m))) for m in ("b2b", "sync")}
cells, vcells = runs["b2b"]
if not separate:
    vcells = {}
misses = {"b2b": [], "sync": []}
added = {"project": [], "CUB C++": []}
print(
    "| dtype | shape | threads x items | default (scan / tile I/O) | project GB/s "
    "| best CUB C++ (config) GB/s | ratio | best Triton GB/s | ratio "
    "| host-synchronised: project GB/s | best CUB C++ GB/s | ratio |"
    + (" source |" if separate else "")
)
print("| --- " * (13 if separate else 12) + "|")
for k in sorted(
    (k for k in cells if k[2]),
    key=lambda k: (k[1] != "8192x65536" and k[1] != "262144x2048", k[0], k[1], k[2], k[3]),
):
    dt, shape, t, i = k
    d = np.dtype(dt)
    sa = default_scan_algorithm((t, 1, 1), i, d)
    io, unaligned = default_io((t, 1, 1), i, d)
    shown = io if unaligned is None else f"{io}, else {unaligned}"
    from_defaults = k in vcells
    src = "defaults run" if from_defaults else "full run"
    figures = {}
    for method, (full_cells, default_cells) in runs.items():
        rs = default_cells[k] if from_defaults else full_cells[k]
        proj = _project(rs, sa, io, from_defaults)
        if proj:
            figures[method] = (float(proj[0]["gbps"]), _best_cub(rs), rs, proj[0])
    if len(figures) < 2:
        print("MISSING", k, sa, io)
        continue
    p, cub, rs, pb = figures["b2b"]
    tri = [r for r in rs if r["impl"] == "triton_best"]
    c = float(cub["gbps"])
    ts = f"{float(tri[0]['gbps']):.0f} | {p / float(tri[0]['gbps']):.3f}" if tri else "- | -"
    sp, scub, _, ps = figures["sync"]
    sc = float(scub["gbps"])
    # host time a launch adds: sync median minus b2b median of the same kernel
    scub_b2b = next(r for r in rs if r["impl"] == "cub_cpp" and r["config"] == scub["config"])
    added["project"].append(float(ps["median_ms"]) - float(pb["median_ms"]))
    added["CUB C++"].append(float(scub["median_ms"]) - float(scub_b2b["median_ms"]))
    print(
        f"| {dt} | {shape} | {t} x {i} | {sa} / {shown} | {p:.0f} "
        f"| {c:.0f} ({cub['scan_algo']} / {cub['io']}) | {p / c:.3f} | {ts} "
        f"| {sp:.0f} | {sc:.0f} | {sp / sc:.3f} |" + (f" {src} |" if separate else "")
    )
    for method, ratio in (("b2b", p / c), ("sync", sp / sc)):
        if ratio < 0.97:
            misses[method].append((k, round(ratio, 3)))
n = sum(1 for k in cells if k[2])
for method, what in (("b2b", "event-timed"), ("sync", "host-synchronised")):
    print(
        f"\n{what}: {len(misses[method])} of {n} cells below 0.97 of the best CUB C++ "
        f"configuration: {misses[method]}"
    )
print(
    "\nhost-synchronised minus event-timed median, ms a launch (min / median / max over the cells):"
)
for who, ms in added.items():
    print(f"  {who}: {min(ms):.3f} / {np.median(ms):.3f} / {max(ms):.3f}")
