# SPDX-License-Identifier: Apache-2.0
"""Row-wise inclusive sums, every configuration, timed in one process in interleaved rounds.

A *cell* is one problem: a dtype, a shape, and for the block scans a block
size (threads) and items per thread. Each cell has *contenders*, each a launch
closure and a result check:

``project``         the project's row kernel (``_matrix_kernels``: the loop of
                    ``rk.make_prefix_kernel``, ``block.load`` /
                    ``block.inclusive_sum(prefix_op=running_total, prefix_state=state)``
                    / ``block.store``, with ``oob_default=0`` on the load so that a
                    partial last tile is right) for every scan algorithm (``raking``,
                    ``warp_scans``, ``raking_memoize`` where asked) and tile I/O
                    (``warp_transpose``, ``vectorize``, ``direct``); state int64 for
                    int32 data, else the data's dtype
``project_default`` the same loop written with no ``algorithm=`` anywhere: whatever
                    the library's defaults are
``project_tiles``   ``project_default`` with its loop ``for base in block.tiles(n,
                    items)`` instead of the ``range`` written by hand (``--tiles``;
                    the same machine code is expected, so the same speed)
``cub_cpp``         the CUB C++ kernel of ``cub_rowscan_kernel.cuh`` for every
                    ``BLOCK_SCAN_*`` x ``BLOCK_LOAD/STORE_*`` pair, its running total
                    of the project's state dtype, compiled by nvcc into cubins
                    (``extern "C"`` wrappers generated here) and launched with
                    ``cuda.core`` on the legacy default stream
``triton``          ``_matrix_triton.row_cumsum`` over its configuration space, tuned
                    per (dtype, shape) in a cell of its own; its fastest configuration
                    runs in every block-scan cell of that (dtype, shape) as
                    ``triton_best``
``project_mlir``    the project's kernel written with numba-cuda-mlir (``--mlir``)

plus the cells of ``bench/_records_cells.py`` (those of ``bench/records_bench.py``) when
that module imports (``--records``).

Cells: every (dtype, shape, threads, items) of the main matrix; a Triton cell
per (dtype, shape); shape cells with the first shape's rows and 77 more
columns (a partial last tile) and with int64 and float64 data. The input is
the benchmark's integer-valued data in [-3, 3] (``_common.element_value``,
generated on the device), so every float32 sum is exact.

Timing, per cell: every contender is checked (its output poisoned, one launch,
every element checked on the device and four rows against a host reference
computed once per shape and dtype), launched a
few times to warm up, then timed in rounds; each round launches every contender
once, in an order rotated from round to round. Method ``b2b``: CUDA events on
the legacy default stream around each launch, no host synchronisation inside a
round (one untimed launch first keeps the device busy while the host enqueues
the round). Method ``sync``: host wall time from before the launch call to after
``cuda.synchronize()``, which is what a Python loop of launches sees, dispatch
overhead included. Every contender is checked again after its timed launches;
ok=1 only if both checks pass.

Compilation comes first and runs in parallel: the project kernels through
``scan.compile`` in a process pool (which fills the library's on-disk cache,
``STATEFN_SCAN_CACHE_DIR``; one task per (dtype, threads, items) compiles that
group's kernels in the order this process then compiles them, so the provider
units it forms are the ones found here), the CUB sources with nvcc in a thread
pool, and Triton's configurations in a second process pool that launches each
on a tiny array (filling ``TRITON_CACHE_DIR``). This process then compiles the
project kernels at their first launch, one group as soon as its task is done,
reading the providers from the cache.

Output in ``--out``, rewritten after every cell so that a run cut short keeps
what it measured: ``matrix.csv`` (one row per cell, contender and method),
``matrix.md`` (tables), ``samples.json.gz`` (every sample), ``summary.txt``.
The exit status is 0 only when every contender's check passed and no part
failed. ``--budget-s`` bounds the wall time: parts that would start after it
are skipped and reported, and rounds shrink when time runs short.

The cell protocol (``_records_cells.cells(quick, build_dir)`` returns such
cells; this script's own cells have the same form)::

    {"task": str, "dtype": str, "rows": int, "cols": int, "threads": int,
     "items": int, "bytes": int,             # bytes moved per launch
     "contenders": [{"impl": str, "config": str,
                     "launch": () -> None,   # enqueues one launch, legacy default stream
                     "check": () -> bool,    # verifies the output (see below)
                     "meta": dict[str, str]}]}

The harness calls ``launch()``, waits for the device, then calls ``check()``;
a check should poison the outputs, launch once more and verify, so that a
result left by another contender cannot pass. ``meta`` keys ``scan_algo``,
``io``, ``triton_config``, ``regs``, ``ldl_stl`` fill the csv columns of those
names; the others go to its ``notes`` column.

Usage::

    python bench/matrix.py --out results/matrix --budget-s 450
    python bench/matrix.py --quick --out /tmp/matrix
    python bench/matrix.py --build-only --dtype int32 --threads 256 --items 8
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import csv
import dataclasses
import datetime as _dt
import gzip
import importlib.metadata
import importlib.util
import json
import math
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
if importlib.util.find_spec("scan") is None and str(REPO) not in sys.path:
    sys.path.append(str(REPO))

import _common  # noqa: E402
from _cub_rowscan import STATE, CubSpec, cub_source, nvcc_argv  # noqa: E402
from _report import fmt, md_table  # noqa: E402
from _toolchain import cccl_include, find_tool  # noqa: E402

_T0 = time.perf_counter()

# ---------------------------------------------------------------------------- the matrix

DTYPES = ("int32", "float32")
EXTRA_DTYPES = ("int64", "float64")
SHAPES: tuple[tuple[int, int], ...] = ((8192, 65536), (262144, 2048))
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 16384), (1024, 2048))
THREADS = (128, 256, 512)
ITEMS = (4, 8, 16)
QUICK_THREADS = (256,)
QUICK_ITEMS = (4, 8)
#: (threads, items) of the shape cells (partial last tile, 8-byte dtypes)
EXTRA_CONFIGS: tuple[tuple[int, int], ...] = ((256, 8), (128, 16), (256, 4))
QUICK_EXTRA_CONFIGS: tuple[tuple[int, int], ...] = ((256, 8),)
#: columns added to the first shape's rows for the partial-last-tile cells
PARTIAL_EXTRA_COLS = 77
#: scan algorithms and tile I/O, in the order kernels are compiled
SCANS = ("raking", "warp_scans", "raking_memoize")
IOS = ("warp_transpose", "vectorize", "direct")
#: seconds the records part needs at least (``_records_cells.cells`` compiles its kernels first)
RECORDS_MIN_S = 90.0
#: the fewest kernels a generated CUB source holds (when there are that many)
CUB_MIN_PER_FILE = 6

TRITON_BLOCKS = (256, 512, 1024, 2048, 4096)
TRITON_WARPS = (2, 4, 8, 16)
TRITON_STAGES = (1, 2, 3)
#: the most items per thread a Triton configuration may have (BLOCK / (32 * num_warps))
TRITON_MAX_ITEMS = 32

METHODS = ("b2b", "sync")
CSV_COLUMNS = (
    "part",
    "task",
    "dtype",
    "rows",
    "cols",
    "threads",
    "items",
    "impl",
    "config",
    "scan_algo",
    "io",
    "triton_config",
    "method",
    "median_ms",
    "p10_ms",
    "p90_ms",
    "min_ms",
    "n",
    "gbps",
    "ok",
    "regs",
    "ldl_stl",
    "notes",
)


class Contender(TypedDict):
    """One contender of a cell (see the module docstring)."""

    impl: str
    config: str
    launch: Callable[[], None]
    check: Callable[[], bool]
    meta: dict[str, str]


class Cell(TypedDict):
    """One cell: a problem and its contenders (see the module docstring)."""

    task: str
    dtype: str
    rows: int
    cols: int
    threads: int
    items: int
    bytes: int
    contenders: list[Contender]
    part: NotRequired[str]


def log(message: str) -> None:
    """Print a progress line with the time since start."""
    print(f"[{time.perf_counter() - _T0:7.1f}s] {message}", flush=True)


# ---------------------------------------------------------------------------- specifications


@dataclass(frozen=True)
class ProjectSpec:
    """One project kernel: front end, dtype, block size, items, algorithms.

    ``algo`` and ``io`` None is the kernel written without ``algorithm=``.
    """

    frontend: str  # "numba" (numba-cuda) or "mlir" (numba-cuda-mlir)
    dtype: str
    threads: int
    items: int
    algo: str | None
    io: str | None
    launch_bounds: bool = False
    loop: str = "range"  # "tiles": the loop is block.tiles(n, items)

    @property
    def impl(self) -> str:
        """Contender name."""
        if self.frontend == "mlir":
            return "project_mlir"
        if self.loop == "tiles":
            return "project_tiles"
        return "project_default" if self.algo is None else "project"

    @property
    def config(self) -> str:
        """Configuration label: ``default`` or ``<scan>/<io>`` (``/lb``: launch bounds)."""
        if self.algo is None:
            return "default"
        return f"{self.algo}/{self.io}" + ("/lb" if self.launch_bounds else "")

    @property
    def group(self) -> tuple[str, str, int, int]:
        """Kernels of one group share CUB providers; no two groups share any."""
        return (self.frontend, self.dtype, self.threads, self.items)

    def order(self) -> tuple[int, int, int, int]:
        """Compile order in a group: explicit kernels, the default one, its iterator twin."""
        if self.loop == "tiles":
            return (2, 0, 0, 0)
        if self.algo is None:
            return (1, 0, 0, int(self.launch_bounds))
        return (0, SCANS.index(self.algo), IOS.index(self.io or ""), int(self.launch_bounds))


@dataclass(frozen=True)
class TritonConfig:
    """One point of the Triton kernel's configuration space."""

    block: int
    warps: int
    stages: int
    assoc: bool

    @property
    def name(self) -> str:
        """Configuration label."""
        scan = "assoc" if self.assoc else "cumsum"
        return f"B{self.block}_w{self.warps}_s{self.stages}_{scan}"


def triton_space(cols: int, quick: bool, small: bool) -> list[TritonConfig]:
    """The Triton configurations worth timing for rows of ``cols`` elements.

    Pruned: fewer than one item per thread (``BLOCK < 32 * num_warps``), more
    than :data:`TRITON_MAX_ITEMS` per thread, and tiles longer than the row
    (above 1024).
    """
    blocks: tuple[int, ...] = TRITON_BLOCKS
    warps: tuple[int, ...] = TRITON_WARPS
    stages: tuple[int, ...] = TRITON_STAGES
    if quick or small:
        blocks, warps, stages = (256, 1024, 4096), (4, 8), (1, 2)
    out = []
    for block in blocks:
        if block > max(cols, 1024):
            continue
        for w in warps:
            per_thread = block / (32 * w)
            if per_thread < 1 or per_thread > TRITON_MAX_ITEMS:
                continue
            for s in stages:
                for assoc in (False, True):
                    out.append(TritonConfig(block, w, s, assoc))
    return out


TritonKey = tuple[str, TritonConfig, bool, bool]


def triton_key(dtype: str, cols: int, cfg: TritonConfig) -> TritonKey:
    """What a compiled Triton kernel depends on here: dtype, configuration, ``EVEN``, and
    Triton's specialisation of ``cols`` (divisible by 16 or not)."""
    return (dtype, cfg, cols % cfg.block == 0, cols % 16 == 0)


# ---------------------------------------------------------------------------- plan


@dataclass
class CellPlan:
    """What one block-scan cell runs."""

    kind: str  # "main", "partial", "wide" or "mlir"
    dtype: str
    rows: int
    cols: int
    threads: int
    items: int
    project: list[ProjectSpec]
    cub: list[CubSpec]
    triton_best: bool

    @property
    def weight(self) -> float:
        """Contenders in the cell (the unit of the time budget)."""
        return float(len(self.project) + len(self.cub) + int(self.triton_best))


@dataclass
class PartPlan:
    """Cells that share one pair of arrays (or the records cells)."""

    name: str
    kind: str  # "rowscan", "shapes", "mlir" or "records"
    dtype: str = ""
    rows: int = 0
    cols: int = 0
    cells: list[CellPlan] = field(default_factory=list)
    triton: list[TritonConfig] = field(default_factory=list)
    weight_hint: float = 0.0

    def weight(self, triton_share: float) -> float:
        """Budget weight of the part."""
        return (
            sum(c.weight for c in self.cells) + len(self.triton) * triton_share + self.weight_hint
        )


@dataclass
class Plan:
    """Every part, and every kernel they need."""

    parts: list[PartPlan]
    project: list[ProjectSpec]
    cub: list[CubSpec]

    def groups(self, frontend: str) -> list[list[ProjectSpec]]:
        """Project kernels by group, in first-use order, each group in compile order."""
        found: dict[tuple[str, str, int, int], set[ProjectSpec]] = {}
        for spec in self.project:
            if spec.frontend == frontend:
                found.setdefault(spec.group, set()).add(spec)
        return [sorted(specs, key=ProjectSpec.order) for specs in found.values()]

    def triton_jobs(self) -> list[tuple[str, int, TritonConfig]]:
        """(dtype, cols, config) to compile: one per distinct Triton specialisation."""
        seen: set[TritonKey] = set()
        jobs = []
        for part in self.parts:
            for cfg in part.triton:
                key = triton_key(part.dtype, part.cols, cfg)
                if key not in seen:
                    seen.add(key)
                    jobs.append((part.dtype, part.cols, cfg))
        return jobs


def _parse_pairs(text: str) -> list[tuple[int, int]]:
    pairs = []
    for item in text.split(","):
        if item.strip():
            a, _, b = item.strip().lower().partition("x")
            pairs.append((int(a), int(b)))
    return pairs


def build_plan(args: argparse.Namespace) -> Plan:
    """Every part and kernel the arguments ask for."""
    lbs = {"off": (False,), "on": (True,), "both": (False, True)}[args.launch_bounds]
    memo_configs = set(_parse_pairs(args.memoize_configs))

    def project_specs(
        frontend: str, dtype: str, threads: int, items: int, memoize: bool, configs: str = "all"
    ) -> list[ProjectSpec]:
        specs = [ProjectSpec(frontend, dtype, threads, items, None, None)]
        if args.tiles and frontend == "numba":
            specs.append(ProjectSpec(frontend, dtype, threads, items, None, None, loop="tiles"))
        if configs == "default":
            return specs
        scans = [s for s in SCANS if s != "raking_memoize" or memoize]
        ios = IOS if configs == "all" else ("warp_transpose", "vectorize")
        for algo in scans:
            for io in ios:
                for lb in lbs if frontend == "numba" else (False,):
                    specs.append(ProjectSpec(frontend, dtype, threads, items, algo, io, lb))
        return specs

    def cub_specs(dtype: str, threads: int, items: int) -> list[CubSpec]:
        if not args.cub:
            return []
        kinds = {"on": (True,), "off": (False,), "both": (True, False)}[args.cub_restrict]
        return [
            CubSpec(dtype, threads, items, a, io, r) for r in kinds for a in SCANS for io in IOS
        ]

    def memoize_here(threads: int, items: int, first_shape: bool) -> bool:
        if args.memoize == "all":
            return True
        return args.memoize == "cells" and first_shape and (threads, items) in memo_configs

    parts: list[PartPlan] = []
    shapes = args.shapes
    configs = [(t, i) for t in args.threads for i in args.items]
    for dtype in args.dtypes:
        for k, (rows, cols) in enumerate(shapes):
            part = PartPlan(f"rowscan {dtype} {rows}x{cols}", "rowscan", dtype, rows, cols)
            if args.triton:
                part.triton = triton_space(cols, args.quick, args.triton_space == "small")
            for threads, items in configs:
                memo = memoize_here(threads, items, k == 0)
                project = project_specs("numba", dtype, threads, items, memo, args.project_configs)
                cub = cub_specs(dtype, threads, items)
                part.cells.append(
                    CellPlan("main", dtype, rows, cols, threads, items, project, cub, args.triton)
                )
            parts.append(part)
    if args.shape_cells and shapes:
        rows, cols = shapes[0]
        extra = QUICK_EXTRA_CONFIGS if args.quick else EXTRA_CONFIGS
        for dtype in args.dtypes:
            pcols = cols + PARTIAL_EXTRA_COLS
            part = PartPlan(f"partial {dtype} {rows}x{pcols}", "shapes", dtype, rows, pcols)
            for threads, items in extra:
                project = project_specs("numba", dtype, threads, items, False)
                cub = cub_specs(dtype, threads, items)
                part.cells.append(
                    CellPlan("partial", dtype, rows, pcols, threads, items, project, cub, True)
                )
            parts.append(part)
        for dtype in EXTRA_DTYPES:
            part = PartPlan(f"wide {dtype} {rows}x{cols}", "shapes", dtype, rows, cols)
            for threads, items in extra:
                project = project_specs("numba", dtype, threads, items, False)
                cub = cub_specs(dtype, threads, items)
                part.cells.append(
                    CellPlan("wide", dtype, rows, cols, threads, items, project, cub, False)
                )
            parts.append(part)
    if args.records:
        parts.append(PartPlan("records", "records", weight_hint=20.0))
    if args.mlir:
        for dtype in args.dtypes:
            for rows, cols in shapes:
                part = PartPlan(f"mlir {dtype} {rows}x{cols}", "mlir", dtype, rows, cols)
                for threads, items in configs:
                    mlir = project_specs("mlir", dtype, threads, items, False, args.mlir_configs)
                    # the numba-cuda kernels of the same configurations, in the same cell
                    same = [dataclasses.replace(s, frontend="numba") for s in mlir]
                    part.cells.append(
                        CellPlan("mlir", dtype, rows, cols, threads, items, mlir + same, [], False)
                    )
                parts.append(part)
    kernels: dict[ProjectSpec, None] = {}
    cubs: dict[CubSpec, None] = {}
    for part in parts:
        for cell in part.cells:
            kernels.update(dict.fromkeys(cell.project))
            cubs.update(dict.fromkeys(cell.cub))
    return Plan(parts, list(kernels), list(cubs))


# ---------------------------------------------------------------------------- kernels


def build_project_kernel(spec: ProjectSpec) -> Any:
    """The dispatcher of one project kernel (``_matrix_kernels``; not compiled yet)."""
    import _matrix_kernels as mk

    if spec.frontend == "mlir":
        return mk.make_mlir_kernel(spec.dtype, spec.threads, spec.items, spec.algo, spec.io)
    if spec.algo is None:
        return mk.make_default_kernel(
            spec.dtype, spec.threads, spec.items, tiles=spec.loop == "tiles"
        )
    return mk.make_explicit_kernel(
        spec.dtype,
        spec.threads,
        spec.items,
        spec.algo,
        spec.io or "",
        launch_bounds=spec.launch_bounds,
    )


# ---------------------------------------------------------------------------- worker processes


def _quiet_warnings() -> None:
    # small grids make numba-cuda warn about occupancy; expected here
    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba_cuda_mlir.*")


#: compiler messages of a configuration that exceeds a hardware limit (not a bug to flag)
RESOURCE_LIMIT_MESSAGES = (
    "too much shared data",
    "uses too much",
    "too many resources",
    "OutOfResources",
    "out of resource",
)


def resource_limit(message: str) -> bool:
    """Whether a compile error says the configuration exceeds a hardware limit."""
    return any(m.lower() in message.lower() for m in RESOURCE_LIMIT_MESSAGES)


def _ptxas_reason(message: str) -> str:
    """The ptxas sentence of a long nvJitLink message (the mangled name dropped)."""
    found = re.search(r"uses too much [^|]*", message)
    return f"ptxas: kernel {found.group(0).strip()}" if found else message[:300]


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".replace("\n", " | ")[:800]


def project_group_job(specs: list[ProjectSpec], cc: tuple[int, int]) -> dict[str, Any]:
    """Compile one group's kernels with ``scan.compile`` (worker process; no GPU needed).

    The kernels compile in the order the timing process compiles them, so that
    the CUB provider units formed here are the ones that process looks up.
    """
    started = time.perf_counter()
    _quiet_warnings()
    done: list[tuple[str, float, int]] = []
    errors: list[tuple[ProjectSpec, str]] = []
    try:
        import scan

        if specs[0].frontend == "mlir":
            from numba_cuda_mlir.numba_cuda import types
        else:
            from numba import types
        arr = types.Array(getattr(types, specs[0].dtype), 2, "C")
    except Exception as exc:
        return {
            "specs": specs,
            "done": done,
            "errors": [(s, _short(exc)) for s in specs],
            "seconds": time.perf_counter() - started,
            "pid": os.getpid(),
        }
    for spec in specs:
        t = time.perf_counter()
        try:
            kernel = build_project_kernel(spec)
            cubin = scan.compile(kernel, (arr, arr), cc=cc, block=spec.threads)
            done.append((spec.config, time.perf_counter() - t, len(cubin)))
        except Exception as exc:
            errors.append((spec, _short(exc)))
    return {
        "specs": specs,
        "done": done,
        "errors": errors,
        "seconds": time.perf_counter() - started,
        "pid": os.getpid(),
    }


def triton_job(jobs: list[tuple[str, int, TritonConfig]]) -> list[dict[str, Any]]:
    """Compile Triton configurations by launching each on a one-row array (worker process).

    The array has the real row length, so the specialisation (and the cache
    key) is the one the timing process asks for.
    """
    _quiet_warnings()
    out: list[dict[str, Any]] = []
    try:
        import _matrix_triton
        import torch  # type: ignore[import-not-found, unused-ignore]
    except Exception as exc:
        return [{"job": j, "ok": False, "seconds": 0.0, "error": _short(exc)} for j in jobs]
    arrays: dict[tuple[str, int], tuple[Any, Any]] = {}
    for dtype, cols, cfg in jobs:
        t = time.perf_counter()
        try:
            if (dtype, cols) not in arrays:
                x = torch.zeros((1, cols), dtype=getattr(torch, dtype), device="cuda")
                arrays[(dtype, cols)] = (x, torch.empty_like(x))
            x, y = arrays[(dtype, cols)]
            _matrix_triton.row_cumsum[(1,)](
                x,
                y,
                cols,
                BLOCK=cfg.block,
                EVEN=cols % cfg.block == 0,
                ASSOC=cfg.assoc,
                num_warps=cfg.warps,
                num_stages=cfg.stages,
            )
            torch.cuda.synchronize()
            out.append({"job": (dtype, cols, cfg), "ok": True, "seconds": time.perf_counter() - t})
        except Exception as exc:
            out.append(
                {
                    "job": (dtype, cols, cfg),
                    "ok": False,
                    "seconds": time.perf_counter() - t,
                    "error": _short(exc),
                }
            )
    return out


def _spawn_pool(workers: int) -> cf.ProcessPoolExecutor:
    # spawn, never fork: this process may hold a CUDA context
    return cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_quiet_warnings,
    )


def stop_pool(pool: cf.Executor | None, futures: Sequence[cf.Future[Any]] = ()) -> None:
    """End a pool: at once when all ``futures`` are done (its processes idle), else cancel
    its queued work and terminate the worker processes it started."""
    if pool is None:
        return
    if all(f.done() for f in futures):
        pool.shutdown(wait=True, cancel_futures=True)
        return
    # the executor forgets its processes on shutdown: take them first
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        with contextlib.suppress(Exception):
            proc.terminate()


# ---------------------------------------------------------------------------- CUB sources


def write_cub_sources(
    specs: Sequence[CubSpec], folder: Path, files: int
) -> list[tuple[Path, list[CubSpec]]]:
    """Split the configurations over at most ``files`` generated sources; write them."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    kinds = sorted({s.restrict for s in specs}, reverse=True)
    for restrict in kinds:
        ordered = sorted(
            (s for s in specs if s.restrict == restrict),
            key=lambda s: (s.dtype, s.threads, s.items, s.algo, s.io),
        )
        # each nvcc run parses CUB's headers once: at least a few kernels per source
        share = max(1, files // len(kinds))
        n = max(1, min(share, math.ceil(len(ordered) / CUB_MIN_PER_FILE)))
        stem = "cub_matrix" if restrict else "cub_matrix_norestrict"
        for k in range(n):
            chunk = ordered[k::n]
            path = folder / f"{stem}_{k:02d}.cu"
            text = cub_source(chunk)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            out.append((path, chunk))
    return out


def compile_cub_file(source: Path, specs: list[CubSpec], arch: str) -> dict[str, Any]:
    """nvcc one generated source into a cubin (reused when its inputs did not change),
    then read registers and local-memory instructions of its kernels with cuobjdump."""
    import hashlib

    started = time.perf_counter()
    cubin = source.with_suffix(".cubin")
    result: dict[str, Any] = {"source": source, "cubin": cubin, "specs": specs, "sass": {}}
    argv = nvcc_argv(source, cubin, arch)
    if argv is None:
        result.update(ok=False, error="nvcc not found", seconds=0.0, reused=False)
        return result
    header = (BENCH / "cub_rowscan_kernel.cuh").read_text()
    digest = hashlib.sha256("\0".join([source.read_text(), header, *argv]).encode()).hexdigest()
    stamp = source.with_suffix(".key")
    reused = cubin.exists() and stamp.exists() and stamp.read_text() == digest
    if not reused:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            result.update(
                ok=False,
                error=f"nvcc rc={proc.returncode}: {(proc.stderr or proc.stdout)[-3000:]}",
                seconds=time.perf_counter() - started,
                reused=False,
            )
            return result
        stamp.write_text(digest)
    result.update(ok=True, seconds=time.perf_counter() - started, reused=reused)
    result["sass"] = cubin_sass(cubin)
    return result


def cubin_sass(cubin: Path) -> dict[str, tuple[str, str]]:
    """Registers and LDL+STL count per function of a cubin (empty without cuobjdump)."""
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        return {}
    try:
        _, stats = _common.cubin_sass(cuobjdump, str(cubin))
    except (OSError, subprocess.SubprocessError):
        return {}
    return {
        name: ("" if s.regs is None else str(s.regs), str(s.ldl + s.stl))
        for name, s in stats.items()
    }


# ---------------------------------------------------------------------------- builds


@dataclass
class CompileTimes:
    """Wall time and counts of one compile part."""

    name: str
    seconds: float = 0.0
    count: int = 0
    failed: int = 0
    note: str = ""


class Builds:
    """The compile work running in the background: project, CUB and Triton pools."""

    def __init__(
        self,
        plan: Plan,
        args: argparse.Namespace,
        cc: tuple[int, int],
        arch: str,
        *,
        triton: bool,
    ) -> None:
        self.started = time.perf_counter()
        self.cc = cc
        self.times: dict[str, CompileTimes] = {}
        jobs = max(1, args.jobs or os.cpu_count() or 1)
        if triton:
            n_project, n_triton, n_nvcc = max(1, jobs // 2), max(1, jobs // 3), max(1, jobs // 4)
        else:
            n_project, n_triton, n_nvcc = jobs, 0, max(1, jobs // 2)
        # CUB: nvcc in threads
        self.cub_pool: cf.ThreadPoolExecutor | None = None
        self.cub_futures: list[cf.Future[dict[str, Any]]] = []
        if plan.cub:
            sources = write_cub_sources(plan.cub, args.build_dir / "cub", args.cub_files)
            self.cub_pool = cf.ThreadPoolExecutor(max_workers=n_nvcc)
            self.cub_futures = [
                self.cub_pool.submit(compile_cub_file, path, specs, arch) for path, specs in sources
            ]
            log(f"cub: {len(plan.cub)} kernels in {len(sources)} sources, {n_nvcc} nvcc at once")
        # project kernels: one task per group, numba-cuda first, in first-use order
        self.groups = plan.groups("numba") + plan.groups("mlir")
        self.project_pool: cf.ProcessPoolExecutor | None = None
        self.project_futures: list[cf.Future[dict[str, Any]]] = []
        if self.groups:
            self.project_pool = _spawn_pool(min(n_project, len(self.groups)))
            self.project_futures = [
                self.project_pool.submit(project_group_job, specs, cc) for specs in self.groups
            ]
            log(
                f"project: {len(plan.project)} kernels in {len(self.groups)} groups, "
                f"{min(n_project, len(self.groups))} processes, "
                f"STATEFN_SCAN_CACHE_DIR={os.environ.get('STATEFN_SCAN_CACHE_DIR')}"
            )
        # Triton: configurations launched on tiny arrays in processes of their own
        self.triton_pool: cf.ProcessPoolExecutor | None = None
        self.triton_futures: list[cf.Future[list[dict[str, Any]]]] = []
        self.triton_jobs = plan.triton_jobs() if triton else []
        if self.triton_jobs:
            chunks = _chunks(self.triton_jobs, max(1, min(4, len(self.triton_jobs) // n_triton)))
            self.triton_pool = _spawn_pool(min(n_triton, len(chunks)))
            self.triton_futures = [self.triton_pool.submit(triton_job, c) for c in chunks]
            log(
                f"triton: {len(self.triton_jobs)} configurations in {len(chunks)} tasks, "
                f"{min(n_triton, len(chunks))} processes, "
                f"TRITON_CACHE_DIR={os.environ.get('TRITON_CACHE_DIR')}"
            )
        self.project_errors: dict[ProjectSpec, str] = {}
        self.triton_ready: dict[TritonKey, str] = {}  # compiled: "", else the error

    # -- project

    def project_results(
        self, deadline: float, frontend: str = "numba"
    ) -> Iterable[tuple[list[ProjectSpec], bool]]:
        """Each group of ``frontend`` as its task ends, in submission order:
        (specs, whether the task compiled them)."""
        name = "project_pool" if frontend == "numba" else "mlir_pool"
        total = self.times.setdefault(name, CompileTimes(name))
        worker_s = 0.0
        for specs, future in zip(self.groups, self.project_futures, strict=True):
            if specs[0].frontend != frontend:
                continue
            try:
                result = future.result(timeout=max(1.0, deadline - time.perf_counter()))
            except Exception as exc:
                for spec in specs:
                    self.project_errors[spec] = _short(exc)
                total.failed += len(specs)
                yield specs, False
                continue
            total.count += len(result["done"])
            total.failed += len(result["errors"])
            worker_s += result["seconds"]
            first = specs[0]
            log(
                f"{name}: {first.dtype} b{first.threads} i{first.items}: "
                f"{len(result['done'])} kernels in {result['seconds']:.1f} s"
            )
            for spec, message in result["errors"]:
                self.project_errors[spec] = message
                what = f"{spec.dtype} b{spec.threads} i{spec.items} {spec.config} [{spec.frontend}]"
                if resource_limit(message):
                    log(f"{name}: {what} does not compile: {_ptxas_reason(message)}")
                else:
                    log(f"!! {name}: {what}: {message}")
            total.seconds = time.perf_counter() - self.started
            total.note = f"{worker_s:.0f} s in worker processes (scan.compile)"
            yield specs, True
        if self.project_pool is not None and all(f.done() for f in self.project_futures):
            stop_pool(self.project_pool, self.project_futures)  # idle: let its processes go
            self.project_pool = None

    # -- CUB

    def cub_results(self, deadline: float) -> dict[str, dict[str, Any]]:
        """Per kernel name: cubin path and SASS figures, once nvcc is done."""
        kernels: dict[str, dict[str, Any]] = {}
        if not self.cub_futures:
            return kernels
        times = CompileTimes("cub_nvcc")
        reused = 0
        for future in self.cub_futures:
            try:
                result = future.result(timeout=max(1.0, deadline - time.perf_counter()))
            except Exception as exc:
                times.failed += 1
                log(f"!! cub build failed: {_short(exc)}")
                continue
            if not result["ok"]:
                times.failed += len(result["specs"])
                log(f"!! cub build failed for {result['source'].name}: {result['error']}")
                continue
            took = "reused" if result["reused"] else f"{result['seconds']:.1f} s"
            log(f"cub: {result['cubin'].name}: {len(result['specs'])} kernels, {took}")
            reused += int(result["reused"])
            for spec in result["specs"]:
                regs, ldl = result["sass"].get(spec.name, ("", ""))
                kernels[spec.name] = {"cubin": result["cubin"], "regs": regs, "ldl_stl": ldl}
                times.count += 1
        times.seconds = time.perf_counter() - self.started
        if reused:
            times.note = f"{reused} of {len(self.cub_futures)} cubins reused from an earlier run"
        if self.cub_pool is not None:
            self.cub_pool.shutdown(wait=False, cancel_futures=True)
        self.times["cub_nvcc"] = times
        return kernels

    # -- Triton

    def finish_triton(self, deadline: float) -> None:
        """Wait for the Triton cache (until ``deadline``), then end that pool."""
        if not self.triton_futures:
            return
        times = CompileTimes("triton_pool")
        done, pending = cf.wait(
            self.triton_futures, timeout=max(0.0, deadline - time.perf_counter())
        )
        times.seconds = time.perf_counter() - self.started
        for future in done:
            try:
                results = future.result()
            except Exception as exc:
                log(f"!! triton compile task failed: {_short(exc)}")
                continue
            for r in results:
                key = triton_key(*r["job"])
                self.triton_ready[key] = "" if r["ok"] else r.get("error", "failed")
                times.count += int(r["ok"])
                times.failed += int(not r["ok"])
        missing = len(self.triton_jobs) - len(self.triton_ready)
        if pending or missing:
            times.note = f"{missing} configurations not compiled within the limit (dropped)"
            log(f"!! triton: {times.note}")
        stop_pool(self.triton_pool, self.triton_futures)
        self.triton_pool = None
        self.times["triton_pool"] = times
        errors = {e for e in self.triton_ready.values() if e}
        for e in sorted(errors)[:5]:
            log(f"   triton compile error (example): {e[:300]}")

    def close(self) -> None:
        """End every pool this object started."""
        stop_pool(self.project_pool, self.project_futures)
        stop_pool(self.triton_pool, self.triton_futures)
        if self.cub_pool is not None:
            self.cub_pool.shutdown(wait=False, cancel_futures=True)


def _chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[k : k + size]) for k in range(0, len(items), size)]


# ---------------------------------------------------------------------------- the GPU side


class FatalGpuError(RuntimeError):
    """The CUDA context is lost: nothing more can run in this process."""


@dataclass
class Gpu:
    """The device, and cuda.core's handle on the stream numba-cuda launches on."""

    name: str
    cc: tuple[int, int]
    stream: Any = None
    stream_how: str = ""
    core_launch: Any = None
    launch_config: Any = None
    notes: list[str] = field(default_factory=list)


def init_gpu() -> Gpu:
    """Create numba-cuda's context, make cuda.core use it, find the legacy default stream."""
    from numba import cuda

    cuda.current_context()
    device = cuda.get_current_device()
    name = getattr(device, "name", "unknown")
    name = name.decode() if isinstance(name, bytes) else str(name)
    cc = tuple(int(v) for v in device.compute_capability)
    gpu = Gpu(name=name, cc=(cc[0], cc[1]))
    if os.environ.get("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "0") not in ("", "0"):
        gpu.notes.append(
            "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM is set: numba-cuda launches on the "
            "per-thread default stream, while the events and cuda.core use the legacy one"
        )
    try:
        from cuda.core import Device, LaunchConfig, launch

        Device(int(getattr(device, "id", 0))).set_current()
        gpu.core_launch, gpu.launch_config = launch, LaunchConfig
        gpu.stream, gpu.stream_how = legacy_default_stream()
    except Exception as exc:
        gpu.notes.append(f"cuda.core unavailable, no cub_cpp contenders: {_short(exc)}")
    for note in gpu.notes:
        log(f"!! {note}")
    return gpu


def legacy_default_stream() -> tuple[Any, str]:
    """cuda.core's object for the legacy default stream (handle 0), and how it was found.

    numba-cuda launches there (unless told to use the per-thread default
    stream), and the timing events are recorded there.
    """
    import cuda.core as core

    found = getattr(core, "LEGACY_DEFAULT_STREAM", None)
    if found is not None:
        return found, "cuda.core.LEGACY_DEFAULT_STREAM"
    stream_cls = core.Stream
    legacy = getattr(stream_cls, "_legacy_default", None)
    if legacy is not None:
        with contextlib.suppress(Exception):
            return legacy(), "cuda.core.Stream._legacy_default()"
    if not os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"):
        with contextlib.suppress(Exception):
            stream = core.Device().default_stream
            log("!! legacy default stream: falling back to Device().default_stream")
            return stream, "cuda.core.Device().default_stream (fallback)"
    log("!! legacy default stream: falling back to Stream.from_handle(0)")
    return stream_cls.from_handle(0), "cuda.core.Stream.from_handle(0) (fallback)"


def context_alive() -> bool:
    """Whether the CUDA context still works."""
    from numba import cuda

    try:
        cuda.synchronize()
    except Exception:
        return False
    return True


@dataclass
class Data:
    """Input (the benchmark's integer-valued data) and output of one shape and dtype."""

    dtype: str
    rows: int
    cols: int
    src: Any
    dst: Any
    torch_views: tuple[Any, Any] | None = None
    _bad: Any = None
    _expected: tuple[list[int], Any] | None = None

    @property
    def nbytes(self) -> int:
        """Bytes one launch moves: every element read once and written once."""
        return 2 * self.rows * self.cols * int(self.src.dtype.itemsize)

    def check(self, launch: Callable[[], None], label: dict[str, object]) -> Callable[[], bool]:
        """A check of ``launch``: poison the output, launch, check every element."""
        import _rowscan_kernels as rk
        from numba import cuda

        def check() -> bool:
            rk.poison(self.dst)
            launch()
            cuda.synchronize()
            return self.verify(label)

        return check

    def verify(self, label: dict[str, object]) -> bool:
        """Every element checked on the device, four rows against the host; MISMATCH lines."""
        import _matrix_kernels
        import numpy as np
        from numba import cuda

        if self._bad is None:
            self._bad = cuda.device_array(1, dtype=np.int64)
        self._bad.copy_to_device(np.zeros(1, dtype=np.int64))
        _matrix_kernels.count_bad[min(self.rows, 8192), 256](self.src, self.dst, self._bad)
        n_bad = int(self._bad.copy_to_host()[0])
        if n_bad:
            _common.emit("MISMATCH", **label, bad_elements=n_bad)
            return False
        if self._expected is None:  # the host reference, once per shape and dtype
            row_ids = _common.rows_to_check(self.rows)
            self._expected = (row_ids, _common.host_reference_rows(row_ids, self.cols))
        row_ids, expected = self._expected
        got = np.stack([self.dst[r].copy_to_host() for r in row_ids]).astype(np.int64)
        wrong = np.argwhere(got != expected)
        if len(wrong):
            k, col = (int(v) for v in wrong[0])
            _common.emit(
                "MISMATCH",
                **label,
                row=row_ids[k],
                col=col,
                got=int(got[k, col]),
                expected=int(expected[k, col]),
            )
            return False
        return True


def alloc_data(dtype: str, rows: int, cols: int) -> Data:
    """Device arrays, the input filled on the device (``_common.element_value``)."""
    import _rowscan_kernels as rk
    import numpy as np
    from numba import cuda

    src = cuda.device_array((rows, cols), dtype=getattr(np, dtype))
    dst = cuda.device_array((rows, cols), dtype=getattr(np, dtype))
    rk.fill(src)
    cuda.synchronize()
    return Data(dtype, rows, cols, src, dst)


def free_data(data: Data | None) -> None:
    """Drop the arrays now (numba-cuda defers frees)."""
    if data is None:
        return
    data.torch_views = None
    data.src = data.dst = None
    from numba import cuda

    with contextlib.suppress(Exception):
        cuda.current_context().deallocations.clear()


class ProjectKernels:
    """Project kernels compiled in this process (first launch on a tiny array)."""

    def __init__(self) -> None:
        self.kernels: dict[ProjectSpec, Any] = {}
        self.errors: dict[ProjectSpec, str] = {}
        self.times: dict[str, CompileTimes] = {}
        self.sass: dict[ProjectSpec, tuple[str, str]] = {}

    def compile(self, specs: Sequence[ProjectSpec]) -> None:
        """Compile ``specs`` in order (each kernel's first launch), recording failures."""
        import numpy as np

        for spec in specs:
            if spec in self.kernels or spec in self.errors:
                continue
            times = self.times.setdefault(
                f"{'mlir' if spec.frontend == 'mlir' else 'project'}_main",
                CompileTimes("mlir_main" if spec.frontend == "mlir" else "project_main"),
            )
            started = time.perf_counter()
            try:
                kernel = build_project_kernel(spec)
                tile = spec.threads * spec.items
                shape = (2, 2 * tile + 5)
                if spec.frontend == "mlir":
                    from numba_cuda_mlir import cuda as mcuda

                    a = mcuda.device_array(shape, dtype=getattr(np, spec.dtype))
                    b = mcuda.device_array(shape, dtype=getattr(np, spec.dtype))
                    kernel[2, spec.threads](a, b)
                    mcuda.synchronize()
                else:
                    from numba import cuda

                    a = cuda.device_array(shape, dtype=getattr(np, spec.dtype))
                    b = cuda.device_array(shape, dtype=getattr(np, spec.dtype))
                    kernel[2, spec.threads](a, b)
                    cuda.synchronize()
                self.kernels[spec] = kernel
                times.count += 1
            except Exception as exc:
                self.errors[spec] = message = _short(exc)
                times.failed += 1
                what = f"{spec.impl} {spec.dtype} b{spec.threads} i{spec.items} {spec.config}"
                if resource_limit(message):
                    log(f"{what} does not compile: {_ptxas_reason(message)}")
                else:
                    log(f"!! {what}: {message}")
                if not context_alive():
                    raise FatalGpuError(f"CUDA context lost compiling {spec}") from exc
            times.seconds += time.perf_counter() - started

    def sass_of(self, spec: ProjectSpec) -> tuple[str, str]:
        """(registers, LDL+STL count) of a compiled numba-cuda kernel's cubin; cached."""
        if spec not in self.sass:
            regs, ldl = "", ""
            kernel = self.kernels.get(spec)
            if kernel is not None and spec.frontend == "numba":
                try:
                    import _rowscan_kernels as rk

                    _, stats = rk.kernel_sass(kernel)
                    regs = "" if stats.regs is None else str(stats.regs)
                    ldl = str(stats.ldl + stats.stl)
                except Exception as exc:
                    log(
                        f"!! SASS of {spec.dtype} b{spec.threads} i{spec.items} "
                        f"{spec.config}: {_short(exc)}"
                    )
            self.sass[spec] = (regs, ldl)
        return self.sass[spec]


# ---------------------------------------------------------------------------- contenders


def _label(
    data: Data, impl: str, config: str, threads: int = 0, items: int = 0
) -> dict[str, object]:
    return {
        "impl": impl,
        "dtype": data.dtype,
        "rows": data.rows,
        "cols": data.cols,
        "threads": threads,
        "items": items,
        "config": config,
    }


def project_contender(
    spec: ProjectSpec,
    kernel: Any,
    data: Data,
    mlir_arrays: Any = None,
    *,
    launcher: bool = False,
) -> Contender:
    """A project kernel on ``data`` (numba-cuda's launch, as a user writes it).

    With `launcher`, contender ``project_launcher``: the same kernel launched
    through ``scan.launcher(kernel, rows, threads)``.
    """
    import scan

    rows, threads = data.rows, spec.threads
    src, dst = mlir_arrays if mlir_arrays is not None else (data.src, data.dst)
    bound = scan.launcher(kernel, rows, threads) if launcher else None

    def launch() -> None:
        if bound is not None:
            bound(src, dst)
        else:
            kernel[rows, threads](src, dst)

    meta = {
        "scan_algo": spec.algo or "(default)",
        "io": spec.io or "(default)",
        "launch_bounds": "1" if spec.launch_bounds else "0",
        "frontend": "numba-cuda-mlir" if spec.frontend == "mlir" else "numba-cuda",
    }
    impl = "project_launcher" if launcher else spec.impl
    label = _label(data, impl, spec.config, spec.threads, spec.items)
    return Contender(
        impl=impl,
        config=spec.config,
        launch=launch,
        check=data.check(launch, label),
        meta=meta,
    )


def cub_contender(
    spec: CubSpec, kernel: Any, info: dict[str, Any], data: Data, gpu: Gpu
) -> Contender:
    """A CUB C++ kernel on ``data``, launched through cuda.core on the legacy default stream."""
    import numpy as np

    config = gpu.launch_config(grid=data.rows, block=spec.threads)
    args = (
        int(data.src.__cuda_array_interface__["data"][0]),
        int(data.dst.__cuda_array_interface__["data"][0]),
        np.int32(data.cols),
    )
    core_launch, stream = gpu.core_launch, gpu.stream

    def launch() -> None:
        core_launch(stream, config, kernel, *args)

    meta = {
        "scan_algo": spec.algo,
        "io": spec.io,
        "regs": info.get("regs", ""),
        "ldl_stl": info.get("ldl_stl", ""),
        "symbol": spec.name,
        "state": STATE[spec.dtype],
    }
    label = _label(data, spec.impl, spec.config, spec.threads, spec.items)
    return Contender(
        impl=spec.impl,
        config=spec.config,
        launch=launch,
        check=data.check(launch, label),
        meta=meta,
    )


def torch_views(data: Data) -> tuple[Any, Any]:
    """torch tensors on ``data``'s arrays (CUDA array interface, no copy)."""
    if data.torch_views is None:
        import torch  # type: ignore[import-not-found, unused-ignore]

        x = torch.as_tensor(data.src, device="cuda")
        y = torch.as_tensor(data.dst, device="cuda")
        for t, a in ((x, data.src), (y, data.dst)):
            if int(t.data_ptr()) != int(a.__cuda_array_interface__["data"][0]):
                raise RuntimeError("torch.as_tensor copied the numba array instead of wrapping it")
        data.torch_views = (x, y)
    return data.torch_views


def triton_contender(cfg: TritonConfig, data: Data, impl: str = "triton") -> Contender:
    """The Triton kernel in configuration ``cfg`` on ``data`` (torch views of the arrays)."""
    import _matrix_triton

    x, y = torch_views(data)
    rows, cols = data.rows, data.cols
    kernel = _matrix_triton.row_cumsum[(rows,)]
    even = cols % cfg.block == 0
    meta: dict[str, str] = {"triton_config": cfg.name}

    def launch() -> None:
        compiled = kernel(
            x,
            y,
            cols,
            BLOCK=cfg.block,
            EVEN=even,
            ASSOC=cfg.assoc,
            num_warps=cfg.warps,
            num_stages=cfg.stages,
        )
        if "regs" not in meta:
            meta["regs"] = str(getattr(compiled, "n_regs", ""))
            meta["spills"] = str(getattr(compiled, "n_spills", ""))

    label = _label(data, impl, cfg.name)
    return Contender(
        impl=impl, config=cfg.name, launch=launch, check=data.check(launch, label), meta=meta
    )


# ---------------------------------------------------------------------------- timing


@dataclass
class Outcome:
    """What happened to one contender of a cell."""

    impl: str
    config: str
    meta: dict[str, str]
    ok: bool = True
    error: str = ""
    samples: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METHODS})


@dataclass
class Rounds:
    """Rounds of each method and warm-up launches."""

    b2b: int
    sync: int
    warmup: int


class Budget:
    """Wall-clock budget of the run, shared out over the cells still to come by weight."""

    #: seconds kept for the last report
    RESERVE = 8.0

    def __init__(self, seconds: float) -> None:
        self.deadline = _T0 + seconds
        self.pending = 0.0
        self.shrunk = 0

    def left(self) -> float:
        """Seconds left before the deadline, less the reserve."""
        return self.deadline - time.perf_counter() - self.RESERVE

    def expired(self) -> bool:
        """No time left for another cell."""
        return self.left() <= 0

    def fit(self, want: Rounds, weight: float, round_s: float) -> Rounds:
        """``want``, or fewer rounds when this cell's share of the time left is smaller.

        ``round_s`` is one round's time (every contender launched once); the
        ``sync`` method gives up its rounds faster than ``b2b``.
        """
        later = max(0.0, self.pending - weight)
        share = self.left() * weight / max(weight + later, 1e-9)
        need = round_s * (want.b2b + 1.3 * want.sync)
        if need <= share or round_s <= 0:
            return want
        self.shrunk += 1
        f = max(0.0, share) / need
        return Rounds(
            b2b=max(3, int(want.b2b * f)), sync=max(2, int(want.sync * f * f)), warmup=want.warmup
        )


def _rotate(items: list[int], r: int) -> list[int]:
    if not items:
        return items
    k = r % len(items)
    return items[k:] + items[:k]


def run_cell(cell: Cell, want: Rounds, budget: Budget, weight: float) -> list[Outcome]:
    """Check, warm up and time every contender of ``cell`` in interleaved rounds."""
    from numba import cuda

    contenders = cell["contenders"]
    outs = [Outcome(c["impl"], c["config"], c["meta"]) for c in contenders]

    def fail(i: int, exc: BaseException, stage: str) -> None:
        outs[i].ok = False
        outs[i].error = f"{stage}: {_short(exc)}"
        log(
            f"!! {outs[i].impl} {outs[i].config} ({cell['dtype']} {cell['rows']}x{cell['cols']} "
            f"b{cell['threads']} i{cell['items']}) {outs[i].error}"
        )
        if not context_alive():
            raise FatalGpuError(f"CUDA context lost ({outs[i].impl} {outs[i].config}, {stage})")

    def checked(i: int, stage: str) -> bool:
        try:
            contenders[i]["launch"]()
            cuda.synchronize()
            ok = bool(contenders[i]["check"]())
        except Exception as exc:
            fail(i, exc, stage)
            return False
        if not ok:
            outs[i].ok = False
            outs[i].error = outs[i].error or f"{stage}: wrong result"
        return True

    live = [i for i in range(len(contenders)) if checked(i, "check before timing")]

    # warm-up, which also measures one round
    started = time.perf_counter()
    for _ in range(max(1, want.warmup)):
        for i in list(live):
            try:
                contenders[i]["launch"]()
            except Exception as exc:
                live.remove(i)
                fail(i, exc, "warm-up")
    cuda.synchronize()
    round_s = (time.perf_counter() - started) / max(1, want.warmup)
    rounds = budget.fit(want, weight, round_s)

    # b2b: events around each launch, no host synchronisation inside a round
    for r in range(rounds.b2b):
        order = _rotate(live, r)
        if not order:
            break
        events = [cuda.event() for _ in range(len(order) + 1)]  # timing on by default
        timed: list[int | None] = []
        with contextlib.suppress(Exception):
            contenders[order[0]]["launch"]()  # untimed: the device is busy while we enqueue
        events[0].record()
        for k, i in enumerate(order):
            try:
                contenders[i]["launch"]()
                timed.append(i)
            except Exception as exc:
                live.remove(i)
                fail(i, exc, "b2b launch")
                timed.append(None)
            events[k + 1].record()
        events[-1].synchronize()
        for k, i in enumerate(timed):
            if i is not None:
                outs[i].samples["b2b"].append(events[k].elapsed_time(events[k + 1]))

    # sync: what a Python loop that waits for each launch sees
    for r in range(rounds.sync):
        for i in _rotate(list(live), r):
            try:
                t = time.perf_counter()
                contenders[i]["launch"]()
                cuda.synchronize()
                outs[i].samples["sync"].append((time.perf_counter() - t) * 1e3)
            except Exception as exc:
                live.remove(i)
                fail(i, exc, "sync launch")

    for i in live:
        checked(i, "check after timing")
    return outs


def stats(samples: Sequence[float]) -> dict[str, float]:
    """Median, 10th and 90th percentiles and minimum (NaN when empty)."""
    if not samples:
        nan = float("nan")
        return {"median_ms": nan, "p10_ms": nan, "p90_ms": nan, "min_ms": nan}
    values = sorted(samples)

    def pct(q: float) -> float:
        pos = q * (len(values) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(values) - 1)
        return values[lo] + (values[hi] - values[lo]) * (pos - lo)

    return {"median_ms": pct(0.5), "p10_ms": pct(0.1), "p90_ms": pct(0.9), "min_ms": values[0]}


# ---------------------------------------------------------------------------- report


@dataclass
class PartStatus:
    """How one part ended."""

    name: str
    status: str  # "ok", "failed: ...", "skipped: ..."
    seconds: float = 0.0


class Report:
    """Everything measured so far, and the files it is written to."""

    def __init__(self, out: Path, header: dict[str, str]) -> None:
        self.out = out
        self.header = header
        self.rows: list[dict[str, Any]] = []
        self.samples: dict[str, dict[str, dict[str, list[float]]]] = {}
        self.parts: list[PartStatus] = []
        self.compile: dict[str, CompileTimes] = {}
        self.problems: list[str] = []
        self.not_compiled: list[str] = []
        self.notes: list[str] = []

    # -- collecting

    def add_cell(
        self, part: str, cell: Cell, outs: Sequence[Outcome], quiet: int | None = None
    ) -> None:
        """Rows (one per contender and method) and samples of one timed cell.

        Outcomes from index ``quiet`` on are recorded without adding a problem
        (their reason is reported elsewhere).
        """
        key = (
            f"{part} | {cell['task']} {cell['dtype']} {cell['rows']}x{cell['cols']} "
            f"b{cell['threads']} i{cell['items']}"
        )
        cell_samples = self.samples.setdefault(key, {})
        for index, o in enumerate(outs):
            label = f"{o.impl} {o.config}"
            cell_samples[label] = {m: list(o.samples[m]) for m in METHODS}
            if not o.ok and (quiet is None or index < quiet):
                self.problems.append(f"{key}: {label}: {o.error or 'wrong result'}")
            known = {"scan_algo", "algo", "io", "triton_config", "regs", "ldl_stl"}
            notes = ";".join(
                f"{k}={v}" for k, v in o.meta.items() if k not in known and isinstance(v, str)
            )
            triton_config = o.meta.get("triton_config") or (
                o.config if o.impl.startswith("triton") else ""
            )
            if o.error:
                notes = f"{notes};error={o.error}" if notes else f"error={o.error}"
            for method in METHODS:
                if not o.samples[method] and (method == "sync" or o.samples["b2b"]):
                    continue  # a method with no samples gets a row only to show a failure
                st = stats(o.samples[method])
                med = st["median_ms"]
                self.rows.append(
                    {
                        "part": part,
                        "task": cell["task"],
                        "dtype": cell["dtype"],
                        "rows": cell["rows"],
                        "cols": cell["cols"],
                        "threads": cell["threads"],
                        "items": cell["items"],
                        "impl": o.impl,
                        "config": o.config,
                        "scan_algo": o.meta.get("scan_algo") or o.meta.get("algo", ""),
                        "io": o.meta.get("io", ""),
                        "triton_config": triton_config,
                        "method": method,
                        **st,
                        "n": len(o.samples[method]),
                        "gbps": cell["bytes"] / (med * 1e-3) / 1e9
                        if med == med and med > 0
                        else float("nan"),
                        "ok": int(o.ok),
                        "regs": o.meta.get("regs", ""),
                        "ldl_stl": o.meta.get("ldl_stl", ""),
                        "notes": notes,
                    }
                )

    def part(self, name: str, status: str, seconds: float = 0.0) -> None:
        """Record how a part ended (and count a failure as a problem)."""
        self.parts.append(PartStatus(name, status, seconds))
        if status.startswith("failed"):
            self.problems.append(f"part {name}: {status}")
        log(f"part {name}: {status} ({seconds:.1f} s)")

    def failed(self) -> bool:
        """Whether any check failed or any part failed."""
        return bool(self.problems)

    # -- writing

    def flush(self) -> None:
        """Rewrite every output file from what is collected so far."""
        self.out.mkdir(parents=True, exist_ok=True)
        try:
            self._write_csv(self.out / "matrix.csv")
            with gzip.open(self.out / "samples.json.gz", "wt", encoding="utf-8") as fh:
                json.dump({"header": self.header, "cells": self.samples}, fh)
            lines = markdown(self)
            (self.out / "matrix.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
            (self.out / "summary.txt").write_text(
                "\n".join(summary_lines(self)) + "\n", encoding="utf-8"
            )
        except Exception as exc:  # a report that cannot be written must not end the run
            log(f"!! writing the report failed: {_short(exc)}")
            traceback.print_exc()

    def _write_csv(self, path: Path) -> None:
        tmp = path.with_suffix(".csv.tmp")
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS))
            writer.writeheader()
            for row in self.rows:
                writer.writerow({k: _csv_value(row.get(k, "")) for k in CSV_COLUMNS})
        tmp.replace(path)


def _csv_value(value: object) -> object:
    if isinstance(value, float):
        return "" if value != value else f"{value:.6g}"
    return value


# ---------------------------------------------------------------------------- tables


CellKey = tuple[str, str, int, int, int, int]


def _cells(
    rows: Sequence[dict[str, Any]], method: str = "b2b"
) -> dict[CellKey, list[dict[str, Any]]]:
    """Rows of one method grouped by cell, in first-seen order."""
    cells: dict[CellKey, list[dict[str, Any]]] = {}
    for r in rows:
        if r["method"] == method:
            key = (r["part"], r["dtype"], r["rows"], r["cols"], r["threads"], r["items"])
            cells.setdefault(key, []).append(r)
    return cells


def _best(rows: Iterable[dict[str, Any]], impl: str) -> dict[str, Any] | None:
    """Fastest correct row of ``impl`` (largest GB/s)."""
    found = [r for r in rows if r["impl"] == impl and r["ok"] and r["gbps"] == r["gbps"]]
    return max(found, key=lambda r: r["gbps"]) if found else None


def _one(
    rows: Iterable[dict[str, Any]], impl: str, config: str | None = None
) -> dict[str, Any] | None:
    for r in rows:
        if r["impl"] == impl and (config is None or r["config"] == config):
            return r
    return None


def _gbps(row: dict[str, Any] | None) -> float:
    if row is None or not row["ok"]:
        return float("nan")
    return float(row["gbps"])


def _ratio(a: float, b: float) -> float:
    return a / b if a == a and b == b and b > 0 else float("nan")


def _block_cell(key: CellKey, rows: Sequence[dict[str, Any]]) -> bool:
    """A row-scan cell with a block size, outside the numba-cuda-mlir parts."""
    return rows[0]["task"] == "rowscan" and bool(key[4]) and not key[0].startswith("mlir")


def _cell_name(key: CellKey) -> tuple[str, str, str]:
    _part, dtype, rows, cols, threads, items = key
    return dtype, f"{rows}x{cols}", f"{threads}x{items}" if threads else "-"


def defaults_table(report: Report) -> list[str]:
    """(a) project_default against the best CUB configuration and the best Triton one."""
    b2b = _cells(report.rows, "b2b")
    sync = _cells(report.rows, "sync")
    body = []
    for key, rows in b2b.items():
        if not _block_cell(key, rows) or not _one(rows, "project_default"):
            continue
        d = _one(rows, "project_default")
        cub = _best(rows, "cub_cpp")
        tri = _one(rows, "triton_best")
        srows = sync.get(key, [])
        sd, scub = _one(srows, "project_default"), _best(srows, "cub_cpp")
        sl = _one(srows, "project_launcher")
        body.append(
            [
                *_cell_name(key),
                fmt(_gbps(d), 0) + ("" if d and d["ok"] else " (FAILED)"),
                f"{cub['config']} {fmt(cub['gbps'], 0)}" if cub else "-",
                fmt(_ratio(_gbps(d), _gbps(cub)), 3),
                f"{tri['config']} {fmt(tri['gbps'], 0)}" if tri and tri["ok"] else "-",
                fmt(_ratio(_gbps(d), _gbps(tri)), 3),
                fmt(_ratio(_gbps(sd), _gbps(scub)), 3),
                fmt(_ratio(_gbps(sl), _gbps(scub)), 3),
                d["regs"] if d else "",
                d["ldl_stl"] if d else "",
            ]
        )
    head = [
        "dtype",
        "shape",
        "threads x items",
        "project_default GB/s",
        "best cub_cpp (config GB/s)",
        "default / best cub",
        "triton_best (config GB/s)",
        "default / triton_best",
        "default / best cub (sync)",
        "scan.launcher / best cub (sync)",
        "regs",
        "LDL+STL",
    ]
    return md_table(head, body)


def tiles_table(report: Report) -> list[str]:
    """(g) project_tiles (the block.tiles loop) against project_default (the range loop)."""
    body = []
    for method in ("b2b", "sync"):
        for key, rows in _cells(report.rows, method).items():
            tiles, hand = _one(rows, "project_tiles"), _one(rows, "project_default")
            if tiles is None or hand is None:
                continue
            body.append(
                [
                    *_cell_name(key),
                    method,
                    fmt(_gbps(hand), 0),
                    fmt(_gbps(tiles), 0) + ("" if tiles["ok"] else " (FAILED)"),
                    fmt(_ratio(_gbps(tiles), _gbps(hand)), 3),
                    f"{hand['regs']} / {tiles['regs']}",
                ]
            )
    head = [
        "dtype",
        "shape",
        "threads x items",
        "method",
        "range loop GB/s",
        "block.tiles GB/s",
        "tiles / range",
        "regs (range / tiles)",
    ]
    return md_table(head, body)


def same_config_table(report: Report) -> list[str]:
    """(b) project / cub_cpp per (scan, io), the same configuration in the same cell."""
    b2b = _cells(report.rows, "b2b")
    combos: list[str] = []
    for key, rows in b2b.items():
        if not _block_cell(key, rows):
            continue
        for r in rows:
            if r["impl"] == "project" and r["config"] not in combos:
                combos.append(r["config"])
    combos.sort(key=lambda c: (SCANS.index(c.split("/")[0]) if c.split("/")[0] in SCANS else 9, c))
    body = []
    for key, rows in b2b.items():
        if not _block_cell(key, rows) or not _one(rows, "cub_cpp"):
            continue
        line: list[object] = list(_cell_name(key))
        for combo in combos:
            p = _one(rows, "project", combo)
            c = _one(rows, "cub_cpp", "/".join(combo.split("/")[:2]))
            line.append(fmt(_ratio(_gbps(p), _gbps(c)), 3))
        body.append(line)
    return md_table(["dtype", "shape", "threads x items", *combos], body)


def fastest_project_table(report: Report) -> tuple[list[str], list[str]]:
    """(c) the fastest project configuration per cell, and how often each one wins."""
    b2b = _cells(report.rows, "b2b")
    body = []
    wins: dict[str, int] = {}
    near: dict[str, int] = {}
    cells = 0
    for key, rows in b2b.items():
        if not _block_cell(key, rows):
            continue
        project = [r for r in rows if r["impl"] in ("project", "project_default") and r["ok"]]
        project = [r for r in project if r["gbps"] == r["gbps"]]
        if not project:
            continue
        cells += 1
        best = max(project, key=lambda r: r["gbps"])
        for r in project:
            if r["gbps"] >= 0.99 * best["gbps"]:
                label = r["config"] if r["impl"] == "project" else "default"
                near[label] = near.get(label, 0) + 1
        name = best["config"] if best["impl"] == "project" else "default"
        wins[name] = wins.get(name, 0) + 1
        d = _one(rows, "project_default")
        cub = _best(rows, "cub_cpp")
        body.append(
            [
                *_cell_name(key),
                name,
                fmt(best["gbps"], 0),
                fmt(_ratio(_gbps(d), best["gbps"]), 3),
                fmt(_ratio(best["gbps"], _gbps(cub)), 3),
                best["regs"],
                best["ldl_stl"],
            ]
        )
    table = md_table(
        [
            "dtype",
            "shape",
            "threads x items",
            "fastest project config",
            "GB/s",
            "default / fastest",
            "fastest / best cub",
            "regs",
            "LDL+STL",
        ],
        body,
    )
    tally = md_table(
        ["project config", "fastest in (cells)", "within 1% of the fastest (cells)"],
        [
            [c, wins.get(c, 0), near.get(c, 0)]
            for c in sorted(set(wins) | set(near), key=lambda c: -near.get(c, 0))
        ],
    )
    return table, [f"Over {cells} cells:", "", *tally]


def mlir_table(report: Report) -> list[str]:
    """(d) numba-cuda-mlir against numba-cuda, the same configuration in the same cell."""
    body = []
    for key, rows in _cells(report.rows, "b2b").items():
        for r in rows:
            if r["impl"] != "project_mlir":
                continue
            numba = _one(
                rows, "project_default" if r["config"] == "default" else "project", r["config"]
            )
            body.append(
                [
                    *_cell_name(key),
                    r["config"],
                    fmt(_gbps(r), 0) + ("" if r["ok"] else " (FAILED)"),
                    fmt(_gbps(numba), 0),
                    fmt(_ratio(_gbps(r), _gbps(numba)), 3),
                ]
            )
    return md_table(
        [
            "dtype",
            "shape",
            "threads x items",
            "config",
            "mlir GB/s",
            "numba-cuda GB/s",
            "mlir / numba-cuda",
        ],
        body,
    )


def triton_table(report: Report, top: int = 5) -> list[str]:
    """(e) the fastest Triton configurations per (dtype, shape)."""
    body = []
    for key, rows in _cells(report.rows, "b2b").items():
        tri = sorted(
            (r for r in rows if r["impl"] == "triton" and r["ok"] and r["gbps"] == r["gbps"]),
            key=lambda r: -r["gbps"],
        )
        failed = sum(1 for r in rows if r["impl"] == "triton" and not r["ok"])
        for rank, r in enumerate(tri[:top], 1):
            body.append(
                [
                    *_cell_name(key)[:2],
                    rank,
                    r["config"],
                    fmt(r["gbps"], 0),
                    r["regs"],
                    f"{len(tri)} timed, {failed} failed" if rank == 1 else "",
                ]
            )
    return md_table(["dtype", "shape", "rank", "config", "GB/s", "regs", "configs"], body)


def other_tasks_table(report: Report) -> list[str]:
    """(f) every contender of cells whose task is not the row scan (records cells)."""
    sync = {
        (
            r["part"],
            r["task"],
            r["dtype"],
            r["rows"],
            r["cols"],
            r["threads"],
            r["items"],
            r["impl"],
            r["config"],
        ): r
        for r in report.rows
        if r["method"] == "sync"
    }
    body = []
    for r in report.rows:
        if r["method"] != "b2b" or r["task"] == "rowscan":
            continue
        s = sync.get(
            (
                r["part"],
                r["task"],
                r["dtype"],
                r["rows"],
                r["cols"],
                r["threads"],
                r["items"],
                r["impl"],
                r["config"],
            )
        )
        body.append(
            [
                r["task"],
                r["dtype"],
                f"{r['rows']}x{r['cols']}",
                f"{r['threads']}x{r['items']}" if r["threads"] else "-",
                r["impl"],
                r["config"],
                fmt(r["median_ms"], 4),
                fmt(r["gbps"], 0),
                fmt(_gbps(s), 0),
                r["ok"],
            ]
        )
    return md_table(
        [
            "task",
            "dtype",
            "shape",
            "threads x items",
            "impl",
            "config",
            "median ms",
            "GB/s",
            "GB/s (sync)",
            "ok",
        ],
        body,
    )


def compile_table(report: Report) -> list[str]:
    """Compile wall time per part."""
    return md_table(
        ["part", "wall s", "compiled", "failed", "note"],
        [[t.name, fmt(t.seconds, 1), t.count, t.failed, t.note] for t in report.compile.values()],
    )


def markdown(report: Report) -> list[str]:
    """The whole ``matrix.md``."""
    lines = ["# Row-scan matrix", ""]
    lines += [f"- {k}: {v}" for k, v in report.header.items()]
    lines += [f"- note: {n}" for n in report.notes]
    lines += [
        "",
        "GB/s = 2 x rows x cols x itemsize / median time. Method `b2b` (CUDA events around each "
        "launch, launches back to back) unless a column says `sync` (host time of launch + "
        "`cuda.synchronize()`). Every contender ran in the same rounds, in rotated order.",
        "",
        "## (a) Library defaults against the best CUB C++ and Triton configurations",
        "",
        *defaults_table(report),
        "",
        "## (b) Same configuration: project / cub_cpp (time ratio inverted: GB/s ratio)",
        "",
        *same_config_table(report),
        "",
        "## (c) Fastest project configuration per cell",
        "",
    ]
    table, tally = fastest_project_table(report)
    lines += [*table, "", *tally, ""]
    if any(r["impl"] == "project_mlir" for r in report.rows):
        lines += ["## (d) numba-cuda-mlir", "", *mlir_table(report), ""]
    if any(r["impl"] == "triton" for r in report.rows):
        lines += [
            "## (e) Triton, fastest configurations per (dtype, shape)",
            "",
            *triton_table(report),
            "",
        ]
    if any(r["task"] != "rowscan" for r in report.rows):
        lines += ["## (f) Other tasks", "", *other_tasks_table(report), ""]
    if any(r["impl"] == "project_tiles" for r in report.rows):
        lines += [
            "## (g) Tile iterators: block.tiles against the range loop written by hand",
            "",
            *tiles_table(report),
            "",
        ]
    lines += ["## Compilation", "", *compile_table(report), ""]
    lines += ["## Parts", ""]
    lines += md_table(
        ["part", "status", "seconds"],
        [[p.name, p.status, fmt(p.seconds, 1)] for p in report.parts],
    )
    lines += ["", "## Configurations that do not compile (hardware limits)", ""]
    lines += [f"- {n}" for n in report.not_compiled] or ["none"]
    lines += ["", "## Problems", ""]
    lines += [f"- {p}" for p in report.problems] or ["none"]
    return lines


def summary_lines(report: Report) -> list[str]:
    """A few lines: device, coverage, the defaults against CUB, problems."""
    out = [f"{k}: {v}" for k, v in report.header.items() if k in ("device", "date", "budget_s")]
    b2b = _cells(report.rows, "b2b")
    ratios = []
    for key, rows in b2b.items():
        if _block_cell(key, rows):
            r = _ratio(_gbps(_one(rows, "project_default")), _gbps(_best(rows, "cub_cpp")))
            if r == r:
                ratios.append(r)
    n_rows = sum(1 for r in report.rows if r["method"] == "b2b")
    out.append(
        f"cells: {len(b2b)}, contender results: {n_rows}, elapsed {time.perf_counter() - _T0:.0f} s"
    )
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        out.append(
            f"project_default / best cub_cpp (b2b GB/s) over {len(ratios)} cells: "
            f"geomean {geo:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}"
        )
    _, tally = fastest_project_table(report)
    out += [line for line in tally if line.startswith("|") and "---" not in line][:6]
    for t in report.compile.values():
        line = f"compile {t.name}: {t.seconds:.1f} s, {t.count} compiled, {t.failed} failed"
        out.append(f"{line} {t.note}".rstrip())
    skipped = [p for p in report.parts if p.status.startswith("skipped")]
    if skipped:
        out.append(f"skipped parts ({len(skipped)}): " + ", ".join(p.name for p in skipped))
    if report.not_compiled:
        out.append(f"did not compile (hardware limits, see matrix.md): {len(report.not_compiled)}")
    out.append(f"problems: {len(report.problems)}")
    out += [f"  {p}" for p in report.problems[:20]]
    out.append("RESULT: " + ("FAILED" if report.failed() else "all checks passed"))
    return out


# ---------------------------------------------------------------------------- parts


class Runner:
    """Runs the parts of a plan on the GPU, writing the report after every cell."""

    def __init__(
        self,
        args: argparse.Namespace,
        plan: Plan,
        report: Report,
        gpu: Gpu,
        budget: Budget,
        project: ProjectKernels,
        cub: dict[str, dict[str, Any]],
        builds: Builds,
    ) -> None:
        self.args = args
        self.plan = plan
        self.report = report
        self.gpu = gpu
        self.budget = budget
        self.project = project
        self.cub_info = cub
        self.builds = builds
        self.cub_kernels: dict[str, Any] = {}
        self.cub_modules: dict[Path, Any] = {}
        self.triton_best: dict[tuple[str, int, int], TritonConfig] = {}
        self.triton_share = args.triton_rounds / max(1, args.rounds)
        self.rounds = Rounds(args.rounds, args.sync_rounds, args.warmup)
        self.triton_rounds = Rounds(args.triton_rounds, args.triton_sync_rounds, 1)
        self.mlir_pool_done = False
        self.records_cubins: dict[Path, dict[str, tuple[str, str]]] = {}

    # -- kernels

    def cub_kernel(self, spec: CubSpec) -> Any:
        """The loaded CUB kernel (cuda.core), or None with the reason logged once."""
        if spec.name in self.cub_kernels:
            return self.cub_kernels[spec.name]
        kernel = None
        info = self.cub_info.get(spec.name)
        if info is not None and self.gpu.core_launch is not None:
            try:
                from cuda.core import ObjectCode

                path = info["cubin"]
                if path not in self.cub_modules:
                    self.cub_modules[path] = ObjectCode.from_cubin(
                        path.read_bytes(), name=path.name
                    )
                kernel = self.cub_modules[path].get_kernel(spec.name)
            except Exception as exc:
                log(f"!! loading {spec.name}: {_short(exc)}")
                self.report.problems.append(f"cub_cpp {spec.name}: load failed: {_short(exc)}")
        self.cub_kernels[spec.name] = kernel
        return kernel

    # -- cells

    def _time(self, cell: Cell, rounds: Rounds, weight: float) -> list[Outcome]:
        outs = run_cell(cell, rounds, self.budget, weight)
        self.budget.pending = max(0.0, self.budget.pending - weight)
        return outs

    def block_cell(
        self, part: PartPlan, plan: CellPlan, data: Data, mlir_arrays: Any = None
    ) -> None:
        """Time one block-scan cell: project kernels, CUB kernels, the best Triton one."""
        contenders: list[Contender] = []
        specs: list[ProjectSpec | None] = []
        missing: list[tuple[ProjectSpec, str]] = []
        for spec in plan.project:
            kernel = self.project.kernels.get(spec)
            if kernel is None:
                why = (
                    self.project.errors.get(spec)
                    or self.builds.project_errors.get(spec)
                    or "not compiled"
                )
                where = f"{part.name} b{plan.threads} i{plan.items}: {spec.impl} {spec.config}"
                if resource_limit(why):
                    self.report.not_compiled.append(f"{where}: {_ptxas_reason(why)}")
                    missing.append((spec, _ptxas_reason(why)))
                else:
                    self.report.problems.append(f"{where}: {why}")
                    missing.append((spec, why))
                continue
            arrays = mlir_arrays if spec.frontend == "mlir" else None
            contenders.append(project_contender(spec, kernel, data, arrays))
            specs.append(spec)
            if spec.impl == "project_default":  # the same kernel through scan.launcher
                contenders.append(project_contender(spec, kernel, data, launcher=True))
                specs.append(spec)
        for cspec in plan.cub:
            kernel = self.cub_kernel(cspec)
            if kernel is not None:
                contenders.append(
                    cub_contender(cspec, kernel, self.cub_info[cspec.name], data, self.gpu)
                )
                specs.append(None)
        base_cols = data.cols - (PARTIAL_EXTRA_COLS if plan.kind == "partial" else 0)
        best = self.triton_best.get((data.dtype, data.rows, base_cols))
        if plan.triton_best and best is not None:
            try:
                contenders.append(triton_contender(best, data, "triton_best"))
                specs.append(None)
            except Exception as exc:
                self.report.problems.append(f"{part.name}: triton_best: {_short(exc)}")
        cell = Cell(
            task="rowscan",
            dtype=data.dtype,
            rows=data.rows,
            cols=data.cols,
            threads=plan.threads,
            items=plan.items,
            bytes=data.nbytes,
            contenders=contenders,
        )
        outs = self._time(cell, self.rounds, plan.weight)
        # registers and local memory of the default and the fastest project kernel
        numba = [
            (o, s)
            for o, s in zip(outs, specs, strict=True)
            if s is not None and s.frontend == "numba"
        ]
        timed = [(o, s) for o, s in numba if o.ok and o.samples["b2b"]]
        chosen = [(o, s) for o, s in numba if s.algo is None]  # default, and its tiles twin
        if timed:
            chosen.append(min(timed, key=lambda p: stats(p[0].samples["b2b"])["median_ms"]))
        for o, s in chosen:
            o.meta["regs"], o.meta["ldl_stl"] = self.project.sass_of(s)
        for s, why in missing:  # a row that shows the hole (ok=0, no samples)
            meta = {"scan_algo": s.algo or "(default)", "io": s.io or "(default)"}
            outs.append(Outcome(s.impl, s.config, meta, ok=False, error=f"not compiled: {why}"))
        self.report.add_cell(part.name, cell, outs, quiet=len(outs) - len(missing))
        self.report.flush()

    def triton_cell(self, part: PartPlan, data: Data) -> None:
        """Time every compiled Triton configuration on ``data``; keep the fastest."""
        contenders: list[Contender] = []
        for cfg in part.triton:
            error = self.builds.triton_ready.get(triton_key(data.dtype, data.cols, cfg))
            if error is None or error:
                continue  # not compiled in time, or does not compile: reported with the pool
            contenders.append(triton_contender(cfg, data))
        if not contenders:
            self.report.notes.append(f"{part.name}: no Triton configuration compiled")
            return
        cell = Cell(
            task="rowscan",
            dtype=data.dtype,
            rows=data.rows,
            cols=data.cols,
            threads=0,
            items=0,
            bytes=data.nbytes,
            contenders=contenders,
        )
        started = time.perf_counter()
        outs = self._time(cell, self.triton_rounds, len(part.triton) * self.triton_share)
        times = self.report.compile.setdefault("triton_main", CompileTimes("triton_main"))
        times.note = "Triton cell wall time, first launches (cache loads) included"
        times.seconds += time.perf_counter() - started
        times.count += len(contenders)
        ranked = [o for o in outs if o.ok and o.samples["b2b"]]
        if ranked:
            best = min(ranked, key=lambda o: stats(o.samples["b2b"])["median_ms"])
            cfg = next(c for c in part.triton if c.name == best.config)
            self.triton_best[(data.dtype, data.rows, data.cols)] = cfg
        self.report.add_cell(part.name, cell, outs)
        self.report.flush()

    # -- parts

    def run_part(self, part: PartPlan) -> None:
        """One part, its arrays allocated for it alone."""
        if part.kind == "records":
            self.records_part(part)
            return
        data = alloc_data(part.dtype, part.rows, part.cols)
        try:
            mlir_arrays = None
            if part.kind == "mlir":
                if not self.mlir_pool_done:  # the worker processes filled the cache first
                    for _ in self.builds.project_results(self.budget.deadline, "mlir"):
                        pass
                    self.report.compile.update(self.builds.times)
                    self.mlir_pool_done = True
                self.project.compile(
                    [s for c in part.cells for s in c.project if s.frontend == "mlir"]
                )
                self.report.compile.update(self.project.times)
                mlir_arrays = mlir_views(data)
            if part.triton and self.args.triton:
                try:
                    self.triton_cell(part, data)
                except FatalGpuError:
                    raise
                except Exception as exc:
                    self.report.problems.append(f"{part.name}: triton: {_short(exc)}")
                    traceback.print_exc()
            for plan in part.cells:
                if self.budget.expired():
                    self.report.part(
                        f"{part.name} b{plan.threads} i{plan.items}", "skipped: budget"
                    )
                    continue
                try:
                    self.block_cell(part, plan, data, mlir_arrays)
                except FatalGpuError:
                    raise
                except Exception as exc:
                    self.report.problems.append(
                        f"{part.name} b{plan.threads} i{plan.items}: {_short(exc)}"
                    )
                    traceback.print_exc()
        finally:
            free_data(data)

    def records_part(self, part: PartPlan) -> None:
        """The cells of ``_records_cells.cells`` (another module), timed the same way."""
        import _records_cells  # type: ignore[import-not-found, unused-ignore]

        made = _records_cells.cells(self.args.quick, self.args.build_dir / "records")
        cells = cast(list[Cell], made)  # the cell protocol of this module's docstring
        total = sum(len(c["contenders"]) for c in cells) or 1
        self.budget.pending += total - part.weight_hint
        for cell in cells:
            if self.budget.expired():
                self.report.part(f"records {cell['task']}", "skipped: budget")
                continue
            outs = self._time(cell, self.rounds, float(len(cell["contenders"])))
            self.records_sass(outs)
            self.report.add_cell(part.name, cell, outs)
            self.report.flush()

    def records_sass(self, outs: Sequence[Outcome]) -> None:
        """Registers and LDL+STL of a records cell's fastest project kernel and its CUB
        kernels, from what their ``meta`` names (a dispatcher; a cubin and a symbol)."""
        timed = [o for o in outs if o.impl == "project" and o.ok and o.samples["b2b"]]
        if timed:
            best = min(timed, key=lambda o: stats(o.samples["b2b"])["median_ms"])
            kernel = best.meta.get("kernel")
            if kernel is not None and hasattr(kernel, "overloads"):
                try:
                    import _rowscan_kernels as rk

                    _, st = rk.kernel_sass(kernel)
                    best.meta["regs"] = "" if st.regs is None else str(st.regs)
                    best.meta["ldl_stl"] = str(st.ldl + st.stl)
                except Exception as exc:
                    log(f"!! SASS of records kernel {best.config}: {_short(exc)}")
        for o in outs:
            cubin, symbol = o.meta.get("cubin"), o.meta.get("symbol")
            if not o.impl.startswith("cub_cpp") or not cubin or not symbol or "regs" in o.meta:
                continue
            path = Path(str(cubin))
            if path not in self.records_cubins:
                self.records_cubins[path] = cubin_sass(path) if path.is_file() else {}
            found = self.records_cubins[path].get(str(symbol))
            if found is not None:
                o.meta["regs"], o.meta["ldl_stl"] = found


def mlir_views(data: Data) -> tuple[Any, Any]:
    """numba-cuda-mlir's arrays on ``data``'s memory (CUDA array interface)."""
    from numba_cuda_mlir import cuda as mcuda

    try:
        return mcuda.as_cuda_array(data.src), mcuda.as_cuda_array(data.dst)
    except Exception as exc:
        log(f"!! numba_cuda_mlir.cuda.as_cuda_array failed ({_short(exc)}); passing the arrays")
        return data.src, data.dst


# ---------------------------------------------------------------------------- main


def _versions() -> dict[str, str]:
    info = {"python": platform.python_version()}
    for dist in ("numba-cuda", "numba", "numpy", "cuda-core", "torch", "triton", "numba-cuda-mlir"):
        with contextlib.suppress(Exception):
            info[dist] = importlib.metadata.version(dist)
    nvcc = find_tool("nvcc")
    if nvcc:
        with contextlib.suppress(Exception):
            text = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
            info["nvcc"] = text.strip().splitlines()[-1]
    cccl = cccl_include()
    version_h = cccl / "cuda" / "std" / "__cccl" / "version.h" if cccl else None
    if version_h is not None and version_h.is_file():
        for line in version_h.read_text().splitlines():
            if line.startswith("#define CCCL_VERSION "):
                info["cccl (nvcc)"] = line.split()[-1]
    return info


def _import_error(*modules: str) -> str:
    """Why one of ``modules`` does not import ("" when they all do)."""
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:
            return f"{module}: {_short(exc)}"
    return ""


def resolve_optional(args: argparse.Namespace) -> list[str]:
    """Turn the optional contenders left on "when importable" on or off; say why not."""
    notes = []
    wanted = {
        "triton": (("torch", "triton", "_matrix_triton"), not args.build_only),
        "mlir": (("numba_cuda_mlir",), True),
        "records": (("_records_cells",), not args.build_only),
    }
    for name, (modules, possible) in wanted.items():
        asked = getattr(args, name)
        if not possible:
            setattr(args, name, False)
            continue
        if asked is False:
            continue
        error = _import_error(*modules)
        if error:
            notes.append(f"no {name} contenders: {error}")
            if asked:  # asked for explicitly: a problem, not a quiet skip
                notes[-1] = "PROBLEM: " + notes[-1]
        setattr(args, name, not error)
    return notes


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse and complete the command line."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    sel = parser.add_argument_group("what to run")
    sel.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        choices=DTYPES,
        help="value dtype of the main cells (repeatable; default: int32 and float32)",
    )
    sel.add_argument(
        "--shape",
        dest="shapes",
        action="append",
        type=_common.parse_shape,
        metavar="ROWSxCOLS",
        help="shape of the main cells (repeatable; default: 8192x65536 and 262144x2048)",
    )
    sel.add_argument(
        "--threads",
        type=lambda t: [int(v) for v in t.split(",")],
        help="threads per block, comma-separated (default: 128,256,512)",
    )
    sel.add_argument(
        "--items",
        type=lambda t: [int(v) for v in t.split(",")],
        help="items per thread, comma-separated (default: 4,8,16)",
    )
    sel.add_argument(
        "--quick",
        action="store_true",
        help="tiny shapes, fewer configurations and rounds (a smoke run)",
    )
    sel.add_argument(
        "--memoize",
        choices=("none", "cells", "all"),
        default="cells",
        help="project raking_memoize kernels: none, in the --memoize-configs cells of "
        "the first shape, or in every cell (CUB always runs it) (default: %(default)s)",
    )
    sel.add_argument(
        "--memoize-configs",
        default="256x8,128x16",
        help="THREADSxITEMS cells that get project raking_memoize kernels (default: %(default)s)",
    )
    sel.add_argument(
        "--project-configs",
        choices=("default", "all"),
        default="all",
        help="project kernels of the main cells: every algorithm x tile I/O, or only "
        "project_default (and its scan.launcher twin) (default: %(default)s)",
    )
    sel.add_argument(
        "--tiles",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="also time project_tiles, project_default with its loop written as "
        "block.tiles(n, items), in the same cells and rounds (default: %(default)s)",
    )
    sel.add_argument(
        "--launch-bounds",
        choices=("off", "on", "both"),
        default="off",
        help="cuda.jit(launch_bounds=threads) on the explicit project kernels "
        "(project_default never has it; the CUB kernels always do) (default: %(default)s)",
    )
    sel.add_argument(
        "--shape-cells",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="partial last tile and int64/float64 cells",
    )
    sel.add_argument(
        "--cub", action=argparse.BooleanOptionalAction, default=True, help="CUB C++ contenders"
    )
    sel.add_argument(
        "--cub-restrict",
        choices=("on", "off", "both"),
        default="on",
        help="CUB kernels' pointers declared __restrict__ (loads may take the read-only "
        "path), not, or both; 'off' kernels are the cub_cpp_norestrict contenders "
        "(default: %(default)s)",
    )
    sel.add_argument(
        "--triton",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Triton contenders (default: on when torch and triton import)",
    )
    sel.add_argument(
        "--triton-space",
        choices=("full", "small"),
        default="full",
        help="Triton configurations: the whole pruned space or a few (default: %(default)s)",
    )
    sel.add_argument(
        "--mlir",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="numba-cuda-mlir cells (default: on when numba_cuda_mlir imports)",
    )
    sel.add_argument(
        "--mlir-configs",
        choices=("default", "some", "all"),
        default="default",
        help="numba-cuda-mlir kernels: default algorithms only; also raking/warp_scans "
        "x warp_transpose/vectorize; or every configuration (default: %(default)s)",
    )
    sel.add_argument(
        "--records",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cells of bench/records_bench.py (default: on when it imports)",
    )
    tim = parser.add_argument_group("timing")
    tim.add_argument(
        "--rounds", type=int, default=25, help="b2b rounds per cell (default: %(default)s)"
    )
    tim.add_argument(
        "--sync-rounds", type=int, default=10, help="sync rounds per cell (default: %(default)s)"
    )
    tim.add_argument(
        "--warmup",
        type=int,
        default=2,
        help="warm-up launches per contender (default: %(default)s)",
    )
    tim.add_argument(
        "--triton-rounds",
        type=int,
        default=10,
        help="b2b rounds of a Triton cell (default: %(default)s)",
    )
    tim.add_argument(
        "--triton-sync-rounds",
        type=int,
        default=3,
        help="sync rounds of a Triton cell (default: %(default)s)",
    )
    tim.add_argument(
        "--budget-s",
        type=float,
        default=450.0,
        help="wall-clock budget of the whole run, compilation included (default: %(default)s)",
    )
    bld = parser.add_argument_group("building")
    bld.add_argument(
        "--out",
        type=Path,
        default=Path("matrix-results"),
        help="output folder (default: %(default)s)",
    )
    bld.add_argument(
        "--build-dir", type=Path, help="generated sources, cubins, caches (default: OUT/build)"
    )
    bld.add_argument(
        "--build-only",
        action="store_true",
        help="only generate and compile the CUB cubins and the project kernels "
        "(scan.compile, no GPU needed)",
    )
    bld.add_argument("--arch", help="nvcc -arch (default: the GPU's, sm_90 without one)")
    bld.add_argument("--jobs", type=int, help="processes and threads for compiling (default: CPUs)")
    bld.add_argument(
        "--cub-files", type=int, default=16, help="generated CUB sources (default: %(default)s)"
    )
    bld.add_argument(
        "--triton-compile-s",
        type=float,
        default=150.0,
        help="limit on filling Triton's cache; configurations not compiled by then are "
        "dropped (default: %(default)s)",
    )
    args = parser.parse_args(argv)

    if args.shapes is None:
        args.shapes = list(QUICK_SHAPES if args.quick else SHAPES)
    args.dtypes = args.dtypes or list(DTYPES)
    args.threads = args.threads or list(QUICK_THREADS if args.quick else THREADS)
    args.items = args.items or list(QUICK_ITEMS if args.quick else ITEMS)
    if args.quick:
        args.rounds, args.sync_rounds = min(args.rounds, 5), min(args.sync_rounds, 3)
        args.triton_rounds, args.triton_sync_rounds = (
            min(args.triton_rounds, 3),
            min(args.triton_sync_rounds, 2),
        )
        if args.memoize == "cells":
            args.memoize_configs = "256x8"
    args.build_dir = (args.build_dir or args.out / "build").resolve()
    for name in ("rounds", "sync_rounds", "triton_rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def _arch_cc(arch: str) -> tuple[int, int]:
    digits = "".join(ch for ch in arch.split("_")[-1] if ch.isdigit())
    return (int(digits[:-1]), int(digits[-1]))


def build_only(args: argparse.Namespace, plan: Plan, report: Report) -> int:
    """Generate and compile everything that needs no GPU; report the wall times."""
    arch = args.arch or "sm_90"
    cc = _arch_cc(arch)
    started = time.perf_counter()
    builds = Builds(plan, args, cc, arch, triton=False)
    deadline = _T0 + args.budget_s
    try:
        for frontend in ("numba", "mlir"):
            for _specs, _finished in builds.project_results(deadline, frontend):
                pass
        cub = builds.cub_results(deadline)
    finally:
        builds.close()
    report.compile.update(builds.times)
    wall = time.perf_counter() - started
    lines = [
        f"build-only for {arch}: {wall:.1f} s wall on {os.cpu_count()} CPUs",
        f"  project kernels (scan.compile): {len(plan.project)} in {len(builds.groups)} groups",
        f"  CUB kernels (nvcc -cubin): {len(plan.cub)}, loaded names found in cubins: {len(cub)}",
    ]
    lines += [
        f"  {t.name}: {t.seconds:.1f} s, {t.count} compiled, {t.failed} failed {t.note}".rstrip()
        for t in builds.times.values()
    ]
    limited = {k: v for k, v in builds.project_errors.items() if resource_limit(v)}
    broken = {k: v for k, v in builds.project_errors.items() if k not in limited}
    for spec, message in limited.items():
        lines.append(
            f"  did not compile (hardware limit): {spec.impl} [{spec.frontend}] {spec.dtype} "
            f"b{spec.threads} i{spec.items} {spec.config}: {_ptxas_reason(message)}"
        )
    for spec, message in list(broken.items())[:10]:
        lines.append(
            f"  !! {spec.impl} [{spec.frontend}] {spec.dtype} b{spec.threads} i{spec.items} "
            f"{spec.config}: {message}"
        )
    failed = bool(broken) or (bool(plan.cub) and len(cub) != len(plan.cub))
    lines.append("BUILD: " + ("FAILED" if failed else "ok"))
    print("\n".join(lines), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "build.txt").write_text("\n".join(lines) + "\n")
    return 1 if failed else 0


def run(args: argparse.Namespace, plan: Plan, report: Report) -> int:
    """Compile, then time every part within the budget; write the report throughout."""
    _quiet_warnings()
    budget = Budget(args.budget_s)
    try:
        gpu = init_gpu()
    except Exception as exc:
        report.part("gpu", f"failed: no GPU: {_short(exc)}")
        report.flush()
        return 1
    report.header["device"] = f"{gpu.name} (cc {gpu.cc[0]}.{gpu.cc[1]})"
    report.header["cuda.core stream"] = gpu.stream_how or "-"
    report.notes += gpu.notes
    arch = args.arch or f"sm_{gpu.cc[0]}{gpu.cc[1]}"
    cc = _arch_cc(arch)
    builds = Builds(plan, args, cc, arch, triton=args.triton)
    project = ProjectKernels()
    budget.pending = sum(p.weight(args.triton_rounds / args.rounds) for p in plan.parts)
    status = 0
    try:
        started = time.perf_counter()
        for specs, _finished in builds.project_results(budget.deadline):
            if specs[0].frontend == "numba" and not budget.expired():
                project.compile(specs)
        log(
            f"project kernels compiled here: {len(project.kernels)} "
            f"({time.perf_counter() - started:.1f} s after the pools started)"
        )
        cub = builds.cub_results(budget.deadline)
        if len(cub) < len(plan.cub):
            report.problems.append(
                f"cub_cpp: {len(plan.cub) - len(cub)} of {len(plan.cub)} kernels not built "
                "(nvcc output above)"
            )
        builds.finish_triton(min(budget.deadline, builds.started + args.triton_compile_s))
        if builds.triton_jobs and not any(e == "" for e in builds.triton_ready.values()):
            report.problems.append("triton: no configuration compiled (errors above)")
        report.compile.update(builds.times)
        report.compile.update(project.times)
        report.flush()
        runner = Runner(args, plan, report, gpu, budget, project, cub, builds)
        for part in plan.parts:
            short = part.kind == "records" and budget.left() < RECORDS_MIN_S
            if budget.expired() or short:
                report.part(part.name, "skipped: budget")
                budget.pending = max(0.0, budget.pending - part.weight(runner.triton_share))
                continue
            t = time.perf_counter()
            try:
                runner.run_part(part)
                report.part(part.name, "ok", time.perf_counter() - t)
            except FatalGpuError as exc:
                report.part(part.name, f"failed: {exc}", time.perf_counter() - t)
                status = 1
                break
            except Exception as exc:
                traceback.print_exc()
                report.part(part.name, f"failed: {_short(exc)}", time.perf_counter() - t)
            report.compile.update(project.times)
            report.flush()
    except FatalGpuError as exc:  # lost while compiling
        report.part("compile", f"failed: {exc}")
        status = 1
    finally:
        builds.close()
        report.compile.update(builds.times)
        report.compile.update(project.times)
        if budget.shrunk:
            report.notes.append(f"rounds were cut to fit the budget in {budget.shrunk} cells")
        report.flush()
    print("\n".join(summary_lines(report)), flush=True)
    return 1 if status or report.failed() else 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = parse_args(argv)
    args.build_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("STATEFN_SCAN_CACHE_DIR", str(args.build_dir / "scan-cache"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(args.build_dir / "triton-cache"))
    notes = resolve_optional(args)
    for note in notes:
        log(f"!! {note}")
    plan = build_plan(args)
    header = {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "budget_s": f"{args.budget_s:.0f}",
        "rounds": f"b2b {args.rounds}, sync {args.sync_rounds}, triton b2b {args.triton_rounds}, "
        f"sync {args.triton_sync_rounds}, warm-up {args.warmup}",
        "launch bounds on explicit project kernels": args.launch_bounds,
        **_versions(),
    }
    log(
        f"plan: {sum(len(p.cells) for p in plan.parts)} block-scan cells, {len(plan.parts)} parts, "
        f"{len(plan.project)} project kernels, {len(plan.cub)} CUB kernels, "
        f"{len(plan.triton_jobs())} Triton configurations"
        f"{', records' if args.records else ''}{', mlir' if args.mlir else ''}"
    )
    report = Report(args.out, header)
    report.notes += notes
    report.problems += [n for n in notes if n.startswith("PROBLEM")]
    if args.build_only:
        return build_only(args, plan, report)
    return run(args, plan, report)


if __name__ == "__main__":
    sys.exit(main())
