# SPDX-License-Identifier: Apache-2.0
"""The defaults table of docs/performance.md from two bench/matrix.py runs.

    python bench/defaults_table.py FULL.csv DEFAULTS.csv

FULL.csv measured every configuration (explicit algorithms); DEFAULTS.csv
measured the library's defaults in the cells where they changed after FULL.
For each cell the project's figure is the default's: from DEFAULTS.csv where
it has the cell, else FULL.csv's kernel written without ``algorithm=``
(``project_default``), else FULL.csv's kernel naming the default algorithms
(the same plans except where the default tile I/O is ``vectorize`` falling
back to ``warp_transpose``, which no name selects). Ratios are GB/s over the best
CUB C++ configuration and the best Triton configuration of the same run.
"""

import csv
import sys

import numpy as np

from scan._plan import default_io, default_scan_algorithm


def _rows(path, task="rowscan"):
    with open(path, newline="") as f:
        return [
            r
            for r in csv.DictReader(f)
            if r["method"] == "b2b" and r["ok"] == "1" and r["task"] == task
        ]


full = _rows(sys.argv[1])
ver = _rows(sys.argv[2])


def key(r):
    return (r["dtype"], r["rows"] + "x" + r["cols"], int(r["threads"]), int(r["items"]))


cells = {}
for r in full:
    cells.setdefault(key(r), []).append(r)
vcells = {}
for r in ver:
    vcells.setdefault(key(r), []).append(r)
misses = []
print(
    "| dtype | shape | threads x items | default (scan / tile I/O) | project GB/s "
    "| best CUB C++ (config) GB/s | ratio | best Triton GB/s | ratio | source |"
)
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for k in sorted(
    (k for k in cells if k[2]),
    key=lambda k: (k[1] != "8192x65536" and k[1] != "262144x2048", k[0], k[1], k[2], k[3]),
):
    dt, shape, t, i = k
    d = np.dtype(dt)
    sa = default_scan_algorithm((t, 1, 1), i, d)
    io, unaligned = default_io((t, 1, 1), i, d)
    shown = io if unaligned is None else f"{io}, else {unaligned}"
    src = "full run"
    rs = cells[k]
    if k in vcells:
        rs = vcells[k]
        src = "defaults run"
        proj = [r for r in rs if r["impl"] == "project_default"]
    else:
        # the kernel written without algorithm=, else the same algorithms named
        proj = [r for r in rs if r["impl"] == "project_default"]
        if not proj:
            proj = [
                r for r in rs if r["impl"] == "project" and r["scan_algo"] == sa and r["io"] == io
            ]
    if not proj:
        print("MISSING", k, sa, io)
        continue
    p = float(proj[0]["gbps"])
    cub = max((r for r in rs if r["impl"] == "cub_cpp"), key=lambda r: float(r["gbps"]))
    tri = [r for r in rs if r["impl"] == "triton_best"]
    c = float(cub["gbps"])
    ts = f"{float(tri[0]['gbps']):.0f} | {p / float(tri[0]['gbps']):.3f}" if tri else "- | -"
    ratio = p / c
    print(
        f"| {dt} | {shape} | {t} x {i} | {sa} / {shown} | {p:.0f} "
        f"| {c:.0f} ({cub['scan_algo']} / {cub['io']}) | {ratio:.3f} | {ts} | {src} |"
    )
    if ratio < 0.97:
        misses.append((k, ratio))
print("\nbelow 0.97 of the best CUB C++ configuration:", misses)
