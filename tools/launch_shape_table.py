# SPDX-License-Identifier: Apache-2.0
"""Write ``scan/_shape_table.py``, the measured table behind ``scan.block.launch_shape``.

Run from the repository root::

    python tools/launch_shape_table.py --check   # exit 1 with a diff when the module is stale
    python tools/launch_shape_table.py --write   # rewrite it

The figures are the event-timed (``b2b``) median GB/s of the library's default
row-scan kernel (``project_default``: a tile loop of ``block.load``,
``block.inclusive_sum`` with a stateful prefix callback and ``block.store``,
no ``algorithm=``) in every row-scan cell of one ``bench/matrix.py`` run,
:data:`RUN` (``.csv`` for the figures, ``.md`` for the device line), keyed by
(item bytes, row length) and then by (threads, items per thread). Only
correct results count (``ok`` = 1); the figures are those of the defaults
table of docs/performance.md (``bench/defaults_table.py``). Two of the run's
parts are left out: ``partial`` (rows of 65613 items, not 16-byte aligned)
times three configurations chosen to check the tile I/O's unaligned path, not
a sweep of shapes, at a row length within 0.2% of the 65536-item cells'; and
``mlir`` times the same numba-cuda kernels again as the yardstick of the
numba-cuda-mlir kernels in its own rounds.

The cross-block table (``block.launch_shape(n, dtype, cross_block=True)``)
comes from one ``bench/lookback_bench.py`` run, :data:`LOOKBACK_RUN`: the
median GB/s of the ``project`` contender (status reset and scan, one block a
tile, ``prefix_op=scan.lookback``) in the single-sequence tasks, ``cumsum``
(int32 and float32, 4-byte items) and ``recurrence`` (pairs of float32,
8-byte items), keyed by item bytes and then by (threads, items per thread).
The ``rows`` task (16 sequences) is left out: it repeats the int32 cumsum's
shapes on shorter sequences.

``tests/scan/test_launch_shape.py`` fails when the committed module is not
:func:`render`'s text of :func:`derive`'s and :func:`derive_lookback`'s tables.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
#: The run the table comes from, relative to the repository root (without suffix).
RUN = "docs/results/h200_2026-12-03_v10b_matrix"
#: The look-back run the cross-block table comes from (without suffix).
LOOKBACK_RUN = "docs/results/h100_2026-12-06b_lookback_sweep"
#: The look-back tasks that count, and their items' dtypes' sizes in bytes.
LOOKBACK_ITEM_BYTES = {"int32": 4, "float32": 4, "float32x2": 8}
#: The generated module.
MODULE = ROOT / "scan" / "_shape_table.py"
#: The bench/matrix.py parts that are left out (see the module docstring).
EXCLUDED_PARTS = ("partial", "mlir")

#: {(item bytes, row length): {(threads, items per thread): {dtype name: GB/s}}}
Table = dict[tuple[int, int], dict[tuple[int, int], dict[str, float]]]


def derive(run: str = RUN) -> tuple[Table, str]:
    """The table and the device line of the run `run` (a path without suffix, from the root)."""
    table: Table = {}
    with (ROOT / f"{run}.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            if (
                row["task"] != "rowscan"
                or row["impl"] != "project_default"
                or row["method"] != "b2b"
                or row["ok"] != "1"
                or row["part"].split()[0] in EXCLUDED_PARTS
            ):
                continue
            cell = (np.dtype(row["dtype"]).itemsize, int(row["cols"]))
            shape = (int(row["threads"]), int(row["items"]))
            figures = table.setdefault(cell, {}).setdefault(shape, {})
            if row["dtype"] in figures:
                raise ValueError(f"{run}.csv: two results for {row['dtype']} {cell} {shape}")
            figures[row["dtype"]] = float(row["gbps"])
    if not table:
        raise ValueError(f"{run}.csv: no project_default b2b row-scan results")
    for cell, shapes in table.items():
        dtypes = {frozenset(figures) for figures in shapes.values()}
        if len(dtypes) != 1:
            raise ValueError(f"{run}.csv: cell {cell} has shapes measured for different dtypes")
    return table, _device(run, "- device: ")


def _device(run: str, prefix: str) -> str:
    """The device a run's report names on its one line starting with `prefix`."""
    device = [
        line.removeprefix(prefix).removesuffix(".")
        for line in (ROOT / f"{run}.md").read_text().splitlines()
        if line.startswith(prefix)
    ]
    if len(device) != 1:
        raise ValueError(f"{run}.md: expected one {prefix!r} line, found {len(device)}")
    return device[0]


#: {item bytes: {(threads, items per thread): {dtype name: GB/s}}}
LookbackTable = dict[int, dict[tuple[int, int], dict[str, float]]]


def derive_lookback(run: str = LOOKBACK_RUN) -> tuple[LookbackTable, str]:
    """The cross-block table and the device line of the look-back run `run`."""
    table: LookbackTable = {}
    with (ROOT / f"{run}.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            if (
                row["task"] not in ("cumsum", "recurrence")
                or row["impl"] != "project"
                or row["ok"] != "1"
            ):
                continue
            size = LOOKBACK_ITEM_BYTES[row["dtype"]]
            shape = (int(row["threads"]), int(row["items"]))
            figures = table.setdefault(size, {}).setdefault(shape, {})
            if row["dtype"] in figures:
                raise ValueError(f"{run}.csv: two results for {row['dtype']} {shape}")
            figures[row["dtype"]] = float(row["gbps"])
    if not table:
        raise ValueError(f"{run}.csv: no project look-back results")
    return table, _device(run, "Device: ")


def _entries(table: Mapping[Any, Mapping[tuple[int, int], Mapping[str, float]]]) -> list[str]:
    """A table's entries, key by key, then shape by shape, and its closing brace."""
    lines = []
    for key in sorted(table):
        lines.append(f"    {key!r}: {{")
        for shape in sorted(table[key]):
            figures = table[key][shape]
            inner = ", ".join(f'"{d}": {figures[d]!r}' for d in sorted(figures))
            lines.append(f"        {shape!r}: {{{inner}}},")
        lines.append("    },")
    return [*lines, "}"]


def render(
    table: Table,
    device: str,
    lookback: LookbackTable,
    lookback_device: str,
    run: str = RUN,
    lookback_run: str = LOOKBACK_RUN,
) -> str:
    """The text of ``scan/_shape_table.py`` (laid out as ``ruff format`` keeps it)."""
    lines = [
        "# SPDX-License-Identifier: Apache-2.0",
        "# Generated by `python tools/launch_shape_table.py --write`; do not edit.",
        '"""Measured GB/s of the default row-scan kernel, for ``scan.block.launch_shape``.',
        "",
        "The library's default kernel (``project_default``: ``block.load``,",
        "``block.inclusive_sum`` with a stateful prefix callback and ``block.store`` in a",
        "tile loop, one block per row, no ``algorithm=``), event-timed medians of one",
        "``bench/matrix.py`` run (:data:`SOURCE`), by (item bytes, row length), then",
        "(threads, items per thread), then dtype. ``tools/launch_shape_table.py`` says",
        "which results count; ``tests/scan/test_launch_shape.py`` re-derives this table",
        "from the run. :data:`LOOKBACK_GBPS`: the cross-block look-back scan's, one",
        "``bench/lookback_bench.py`` run (:data:`LOOKBACK_SOURCE`), by item bytes, then",
        "(threads, items per thread), then dtype.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "__all__ = [",
        '    "DEVICE",',
        '    "GBPS",',
        '    "LOOKBACK_DEVICE",',
        '    "LOOKBACK_GBPS",',
        '    "LOOKBACK_SOURCE",',
        '    "SOURCE",',
        "]",
        "",
        "#: The run the figures come from (relative to the repository root).",
        f'SOURCE = "{run}.csv"',
        "#: The device of the run.",
        f'DEVICE = "{device}"',
        "",
        "#: {(item bytes, row length): {(threads, items per thread): {dtype: GB/s}}}.",
        "GBPS: dict[tuple[int, int], dict[tuple[int, int], dict[str, float]]] = {",
    ]
    lines += _entries(table)
    lines += [
        "",
        "#: The look-back run the cross-block figures come from.",
        f'LOOKBACK_SOURCE = "{lookback_run}.csv"',
        "#: The device of that run.",
        f'LOOKBACK_DEVICE = "{lookback_device}"',
        "",
        "#: {item bytes: {(threads, items per thread): {dtype: GB/s}}}.",
        "LOOKBACK_GBPS: dict[int, dict[tuple[int, int], dict[str, float]]] = {",
    ]
    lines += _entries(lookback)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1 when the module is stale")
    action.add_argument("--write", action="store_true", help="rewrite the module")
    args = parser.parse_args(argv)
    text = render(*derive(), *derive_lookback())
    current = MODULE.read_text() if MODULE.exists() else ""
    label = str(MODULE.relative_to(ROOT))
    if args.write:
        if current != text:
            MODULE.write_text(text)
            print(f"wrote {label}")
        else:
            print(f"{label} is up to date")
        return 0
    if current == text:
        print(f"{label} is up to date")
        return 0
    sys.stdout.writelines(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=label,
            tofile=f"{label} (generated)",
        )
    )
    print(f"{label} is stale: run python tools/launch_shape_table.py --write", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
