# SPDX-License-Identifier: Apache-2.0
"""Cross-block single-pass scans: the project's decoupled look-back against CUB DeviceScan.

One kernel launch scans a whole sequence: each block scans one tile and takes
its prefix from the tiles before it with ``prefix_op=scan.lookback,
prefix_state=status`` (CUB's decoupled look-back over a ``scan.tile_status``).
Three tasks:

``cumsum``
    Inclusive sum of 1 x 2^28 int32 and of 1 x 2^28 float32 values
    (``bench/_common.py``'s ``element_value``: integers in [-3, 3], so float32
    sums are exact). 8 bytes an element.
``recurrence``
    ``h[t] = a[t] * h[t-1] + b[t]`` over 1 x 2^27 (a, b) float32 pairs (record
    dtype ``[("a", f4), ("b", f4)]``), an inclusive scan with the composition
    of affine maps ``(x, y) -> (x.a * y.a, y.a * x.b + y.b)``; pairs in, pairs
    out (h is the b field), 16 bytes an element. a in [0.9, 1), b in [-1, 1),
    both exact in float32 (``pair_values``), so the C++ side makes the same
    input bit for bit.
``rows``
    Inclusive sums of each row of 16 x 2^24 int32 values. 8 bytes an element.

Contenders
----------
``project``
    A plain ``@cuda.jit`` kernel, one tile a block: ``block.load``,
    ``block.inclusive_sum`` (``block.inclusive_scan`` with the pair operator,
    a device function, for the recurrence) with ``prefix_op=scan.lookback,
    prefix_state=status``, ``block.store``. The status is reset before every
    launch (``status.reset()``, one small kernel) and the reset is timed with
    the scan, as CUB's DeviceScan times its own init kernel. The default
    configuration is 256 threads x 8 items; a few other threads x items find
    the best. For ``rows``, a grid of (tiles, 16) with a 2-D status,
    ``prefix_state=status[cuda.blockIdx.y], tile=cuda.blockIdx.x``.
``project_scan``
    The same kernels timed without the reset (the reset runs before the
    start event).
``project_ordered``
    The ``project`` kernels with a deterministic status
    (``scan.tile_status(..., deterministic=True)``, reset and scan timed):
    each tile's prefix combines the earlier tiles in order, bitwise the same
    every run; its target is 0.9 of ``project``'s best.
``project_block``
    ``rows`` only: the one-block-per-row kernel (README.md / ``scan/demo.py``):
    16 blocks, each walking its row tile by tile with a ``@statefn.stateful``
    int32 running total as ``prefix_op``.
``cub_cpp``
    ``bench/cub_lookback.cu``, a C++ program calling ``cub::DeviceScan`` as a
    CUB user does: ``InclusiveSum``, ``InclusiveScan`` with the pair operator
    on ``float2``, and for ``rows`` 16 ``InclusiveSum`` calls (``per_row``) or
    one ``InclusiveSumByKey`` with the row index as the key (``by_key``: the
    keys written to device memory before timing, ``by_key_iter``: a transform
    iterator, no key array). Temporary storage is allocated once, outside the
    timed region; the timed interval is the DeviceScan call(s). Besides
    DeviceScan's own policy (``inclusive_sum``, ``inclusive_scan``), tuned
    variants run the same single-pass scan (``cub::DispatchScan`` as
    DeviceScan instantiates it) with a policy hub of one
    ``cub::AgentScanPolicy`` of the named threads x items (not rescaled by
    the item size), warp-transposed loads and stores, ``LOAD_DEFAULT``, the
    warp-scans block scan and CUB's default look-back delay for the type:
    ``inclusive_scan_tuned_t<threads>_i<items>`` for the recurrence (128 x 8,
    12, 16, 24, 32 and 256 x 8, 12, 16: CCCL has no tuning for a pair of
    floats with a user operator, so DeviceScan runs its default policy, 128
    threads x 7 pairs on sm_90), ``inclusive_sum_tuned_t<threads>_i<items>``
    for the cumsums (128 x 16, 24, 32 and 256 x 16, around CCCL's sm_90
    tuning of 128 x 24 for 4-byte sums: a check that DeviceScan's tuning is
    CUB's best). Built with nvcc once per CCCL: the CUDA toolkit's and, where
    it differs, the one the project compiles with (the config names the
    version); the best of all variants and CCCLs is the anchor.
``torch.cumsum``, ``cupy.cumsum``
    ``cumsum`` and ``rows`` only, on the same device arrays; each skipped with
    a note when it does not import.

Timing
------
Rounds (``--rounds``, default 5) alternate between the C++ program (one run:
its own warm-up and ``--repeats`` timed calls, CUDA events between calls
enqueued back to back behind a spinning kernel) and the Python contenders
(``--warmup`` untimed launches each, then ``--repeats`` rounds in which each
contender launches once, in an order rotated from round to round, CUDA events
around each launch on the legacy default stream, behind a spinning kernel
that holds the stream while the round is enqueued). The C++ program goes
first in even rounds, last in odd ones. Each contender's result is the median
over the rounds of each round's median. GB/s counts the task's bytes read and
written (the by-key variants' keys are not counted). Every contender is
checked before and after timing (output poisoned, one launch, compared with a
NumPy reference on the device: exactly for the sums, within ``1e-4 * max|h|``
for the recurrence); the C++ program checks its own output on the device and
reports the sum of its input's 32-bit words, which must equal the Python
side's.

Targets (reported, not gating the exit status): the best ``project`` (reset
+ scan) >= 0.95 x the best ``cub_cpp`` per task; on ``rows`` the best
``project`` >= 5 x the best ``project_block``.

Output
------
``RESULT`` records (``bench=lookback``, ``task``, ``dtype``, ``impl``,
``rows``, ``cols``, ``config``, ``threads``, ``items``, ``timed``,
``median_ms``, ``min_ms``, ``gbps``, ``ok``, ``reps``, ``rounds``,
``vs_best_cub`` = best CUB ms / this ms, and for ``rows``' project entries
``vs_one_block``). A markdown table is printed and, with ``--out DIR``,
written to ``DIR/lookback.md`` with the raw data in ``DIR/lookback.csv`` and
``DIR/lookback.json`` (every timed interval). Exit status 0 when everything
ran and checked, 1 when a contender failed a check or could not be set up, 2
when there is no GPU (nothing measured).

``--build-only`` compiles the C++ programs with nvcc and the project kernels
with ``scan.compile`` for sm_90, without a GPU, and prints their resources.
``--simulate`` runs the project kernels in the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) on small sizes and compares them with NumPy.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import functools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import _common  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import statefn  # noqa: E402

CU_SOURCE = BENCH / "cub_lookback.cu"

TASKS: tuple[str, ...] = ("cumsum", "recurrence", "rows")
CUMSUM_DTYPES: tuple[str, ...] = ("int32", "float32")
#: (rows, cols) of each task
SIZES: dict[str, tuple[int, int]] = {
    "cumsum": (1, 2**28),
    "recurrence": (1, 2**27),
    "rows": (16, 2**24),
}
#: ``--quick``: small, and not a whole number of tiles (the partial last tile runs too)
QUICK_SIZES: dict[str, tuple[int, int]] = {
    "cumsum": (1, 2**22 + 1000),
    "recurrence": (1, 2**21 + 1000),
    "rows": (16, 2**18 + 1000),
}
#: bytes read and written per element
BYTES_PER_ELEMENT: dict[str, int] = {"cumsum": 8, "recurrence": 16, "rows": 8}
#: the project's best (reset + scan) against the best CUB DeviceScan
SPEED_TARGET = 0.95
#: rows: the look-back kernel against the one-block-per-row kernel
ONE_BLOCK_TARGET = 5.0
#: deterministic statuses against the default ones (issue target)
ORDERED_TARGET = 0.9
#: the recurrence's tolerance: |h - ref| <= this * max|ref|
RECURRENCE_TOLERANCE = 1e-4
#: the default configuration (threads, items)
DEFAULT_SHAPE = (256, 8)

#: (threads, items) of the look-back kernels: the default first
LOOKBACK_SHAPES: dict[str, tuple[tuple[int, int], ...]] = {
    "cumsum": ((256, 8), (128, 8), (128, 16), (128, 24), (256, 12), (256, 16), (512, 8)),
    "recurrence": ((256, 8), (128, 4), (128, 8), (256, 4), (128, 12)),
    "rows": ((256, 8), (128, 16), (128, 24), (256, 12)),
}
QUICK_LOOKBACK_SHAPES: dict[str, tuple[tuple[int, int], ...]] = {
    "cumsum": ((256, 8), (128, 24)),
    "recurrence": ((256, 8), (128, 8)),
    "rows": ((256, 8), (128, 24)),
}
#: (threads, items) of the one-block-per-row kernel
ONE_BLOCK_SHAPES: tuple[tuple[int, int], ...] = ((256, 8), (512, 8), (1024, 4))
QUICK_ONE_BLOCK_SHAPES: tuple[tuple[int, int], ...] = ((256, 8), (1024, 4))

#: threads x items of the C++ program's tuned DeviceScan variants (``bench/cub_lookback.cu``)
CUB_TUNED_SHAPES: dict[str, tuple[tuple[int, int], ...]] = {
    "cumsum": ((128, 16), (128, 24), (128, 32), (256, 16)),
    "recurrence": (
        (128, 8),
        (128, 12),
        (128, 16),
        (128, 24),
        (128, 32),
        (256, 8),
        (256, 12),
        (256, 16),
    ),
}

#: the C++ program's variants per task: DeviceScan's own, then the tuned ones
CUB_VARIANTS: dict[str, tuple[str, ...]] = {
    "cumsum": (
        "inclusive_sum",
        *(f"inclusive_sum_tuned_t{t}_i{i}" for t, i in CUB_TUNED_SHAPES["cumsum"]),
    ),
    "recurrence": (
        "inclusive_scan",
        *(f"inclusive_scan_tuned_t{t}_i{i}" for t, i in CUB_TUNED_SHAPES["recurrence"]),
    ),
    "rows": ("per_row", "by_key", "by_key_iter"),
}
#: a tuned variant's name: its threads x items
CUB_TUNED_NAME = re.compile(r"_tuned_t(\d+)_i(\d+)$")

#: h[t] = a[t] * h[t-1] + b[t]: each item is the affine map h -> a * h + b
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


# ---------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class Config:
    """One project kernel: which one, threads x items, and the scanned dtype.

    ``kernel``: ``cumsum``, ``recurrence``, ``rows_lookback`` or ``rows_block``;
    ``dtype``: ``int32`` or ``float32`` (``pair`` for the recurrence).
    """

    kernel: str
    threads: int
    items: int
    dtype: str = "int32"

    @property
    def tile(self) -> int:
        """Items a block's tile."""
        return self.threads * self.items

    @property
    def label(self) -> str:
        """``t<threads>_i<items>``."""
        return f"t{self.threads}_i{self.items}"

    @property
    def key(self) -> str:
        """Unique among every configuration (file names)."""
        return f"{self.kernel}_{self.dtype}_{self.label}"

    @property
    def task(self) -> str:
        """The task the kernel belongs to."""
        return "rows" if self.kernel.startswith("rows") else self.kernel

    def tiles(self, cols: int) -> int:
        """Tiles of a row of ``cols`` items."""
        return -(-cols // self.tile)

    def grid(self, rows: int, cols: int) -> int | tuple[int, int]:
        """The launch's grid over ``rows x cols``."""
        if self.kernel == "rows_block":
            return rows
        if self.kernel == "rows_lookback":
            return (self.tiles(cols), rows)
        return self.tiles(rows * cols)


def configs(
    tasks: Sequence[str],
    quick: bool = False,
    dtypes: Sequence[str] = CUMSUM_DTYPES,
    shapes: Sequence[tuple[int, int]] | None = None,
) -> tuple[Config, ...]:
    """Every project kernel of ``tasks``; ``shapes`` replaces the look-back (threads, items)."""
    out: list[Config] = []
    for task in tasks:
        table = QUICK_LOOKBACK_SHAPES if quick else LOOKBACK_SHAPES
        chosen = tuple(dict.fromkeys((DEFAULT_SHAPE, *shapes))) if shapes else table[task]
        if task == "cumsum":
            out += [Config("cumsum", t, i, d) for d in dtypes for t, i in chosen]
        elif task == "recurrence":
            out += [Config("recurrence", t, i, "pair") for t, i in chosen]
        elif task == "rows":
            out += [Config("rows_lookback", t, i) for t, i in chosen]
            blocks = QUICK_ONE_BLOCK_SHAPES if quick else ONE_BLOCK_SHAPES
            out += [Config("rows_block", t, i) for t, i in blocks]
        else:
            raise ValueError(f"unknown task {task!r}")
    return tuple(out)


# ---------------------------------------------------------------------------- the project's kernels


@cuda.jit(device=True)  # type: ignore[untyped-decorator, unused-ignore]
def compose(x: Any, y: Any) -> Any:
    """The map ``x``, then the map ``y``: ``h -> y.a * (x.a * h + x.b) + y.b``."""
    return (x.a * y.a, y.a * x.b + y.b)


def _running_total_op(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]  # the int32 sum of the row's earlier tiles
    state[0] = prefix + block_aggregate
    return prefix


running_total = statefn.stateful(np.int32, name="lookback_bench_running_total")(_running_total_op)


def make_kernel(cfg: Config) -> Any:
    """The project kernel of ``cfg`` (launch shape: ``cfg.grid(rows, cols)``, ``cfg.threads``).

    ``cumsum`` and ``recurrence``: ``(src, dst, status)`` over 1-D arrays;
    ``rows_lookback``: ``(src, dst, status)`` over 2-D arrays and a 2-D status;
    ``rows_block``: ``(src, dst)`` over 2-D arrays.
    """
    import scan
    from scan import block

    ITEMS, TILE = cfg.items, cfg.tile
    if cfg.kernel == "cumsum":
        value = np.dtype(cfg.dtype).type

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def cumsum(src: Any, dst: Any, status: Any) -> None:
            items = cuda.local.array(ITEMS, value)
            base = cuda.blockIdx.x * TILE
            block.load(src, base, items, oob_default=0)
            block.inclusive_sum(items, items, prefix_op=scan.lookback, prefix_state=status)
            block.store(dst, base, items)

        return cumsum
    if cfg.kernel == "recurrence":

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def recurrence(src: Any, dst: Any, status: Any) -> None:
            items = cuda.local.array(ITEMS, PAIR)
            base = cuda.blockIdx.x * TILE
            block.load(src, base, items, oob_default=(1.0, 0.0))  # the identity map
            block.inclusive_scan(
                items, items, scan_op=compose, prefix_op=scan.lookback, prefix_state=status
            )
            block.store(dst, base, items)

        return recurrence
    if cfg.kernel == "rows_lookback":

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def rows_lookback(src: Any, dst: Any, status: Any) -> None:
            items = cuda.local.array(ITEMS, np.int32)
            row = cuda.blockIdx.y
            base = cuda.blockIdx.x * TILE
            block.load(src[row], base, items, oob_default=0)
            block.inclusive_sum(
                items,
                items,
                prefix_op=scan.lookback,
                prefix_state=status[row],
                tile=cuda.blockIdx.x,
            )
            block.store(dst[row], base, items)

        return rows_lookback
    if cfg.kernel == "rows_block":

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def rows_block(src: Any, dst: Any) -> None:
            row = cuda.blockIdx.x
            state = cuda.local.array(1, np.int32)
            state[0] = 0  # every thread initialises its copy equally
            items = cuda.local.array(ITEMS, np.int32)
            for base in range(0, src.shape[1], TILE):
                block.load(src[row], base, items, oob_default=0)
                block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
                block.store(dst[row], base, items)

        return rows_block
    raise ValueError(f"unknown kernel {cfg.kernel!r}")


@functools.cache
def project_kernel(cfg: Config) -> Any:
    """The (one per process) dispatcher of a configuration."""
    return make_kernel(cfg)


def value_dtype(cfg: Config) -> np.dtype[Any]:
    """The dtype the kernel scans (and its status is made for)."""
    return PAIR if cfg.dtype == "pair" else np.dtype(cfg.dtype)


def project_signature(cfg: Config) -> tuple[Any, ...]:
    """The Numba argument types the project kernel is launched with."""
    from numba import from_dtype, types

    import scan

    dims = 2 if cfg.kernel.startswith("rows") else 1
    array = types.Array(from_dtype(value_dtype(cfg)), dims, "C")
    if cfg.kernel == "rows_block":
        return (array, array)
    status = types.Array(from_dtype(scan.tile_status_dtype(value_dtype(cfg))), dims, "C")
    return (array, array, status)


def _compile_project_job(
    cfg: tuple[str, int, int, str], cc: tuple[int, int], out_dir: str
) -> dict[str, Any]:
    import scan

    config = Config(*cfg)
    started = time.perf_counter()
    cubin = scan.compile(
        project_kernel(config), project_signature(config), cc=cc, block=config.threads
    )
    path = Path(out_dir) / f"project_{config.key}.cubin"
    path.write_bytes(bytes(cubin))  # type: ignore[arg-type]
    return {"cubin": str(path), "seconds": time.perf_counter() - started}


def build_project(
    cfgs: Sequence[Config], build_dir: Path, cc: tuple[int, int]
) -> dict[Config, tuple[bool, str]]:
    """``scan.compile`` every project kernel in a spawned process pool (fills the cache).

    Returns ``{cfg: (ok, cubin path or the error)}``.
    """
    from _harness import compile_in_processes

    jobs = {cfg: (cfg.key, ((cfg.kernel, cfg.threads, cfg.items, cfg.dtype),)) for cfg in cfgs}
    done = compile_in_processes(
        "lookback_bench", jobs, _compile_project_job, cc, build_dir / "project"
    )
    return {k: (False, r) if isinstance(r, str) else (True, r["cubin"]) for k, r in done.items()}


# ---------------------------------------------------------------------------- the C++ programs


def cccl_version(include_dir: Path) -> str | None:
    """``"3.0.1"`` from a CCCL include folder's ``cuda/std/__cccl/version.h``, or None."""
    header = include_dir / "cuda" / "std" / "__cccl" / "version.h"
    try:
        text = header.read_text()
    except OSError:
        return None
    match = re.search(r"#define\s+CCCL_VERSION\s+(\d+)", text)
    if match is None:
        return None
    value = int(match.group(1))
    return f"{value // 1000000}.{value // 1000 % 1000}.{value % 1000}"


def nvcc_cccl_version(nvcc: str, work_dir: Path) -> str | None:
    """The version of the CCCL nvcc compiles with when given no ``-I`` (preprocessing a probe)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    probe = work_dir / "cccl_version_probe.cu"
    probe.write_text("#include <cub/version.cuh>\nint lookback_cccl_version = CCCL_VERSION;\n")
    try:
        proc = subprocess.run(
            [nvcc, "-E", "-x", "cu", str(probe)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except Exception:
        return None
    # the expansion may sit on lines of its own, between line markers
    text = " ".join(line for line in proc.stdout.splitlines() if not line.startswith("#"))
    match = re.search(r"lookback_cccl_version\s*=\s*(\d+)", text)
    if match is None:
        return None
    value = int(match.group(1))
    return f"{value // 1000000}.{value // 1000 % 1000}.{value % 1000}"


def cccl_candidates(nvcc: str | None, work_dir: Path) -> list[tuple[str, Path | None]]:
    """(version label, include folder or None) of each CCCL to build the C++ program with.

    nvcc's own (no ``-I``: what a CUB user of the toolkit gets), then the one
    ``scan`` compiles with (``scan._toolchain.cccl_include_dirs()``) when its
    version differs.
    """
    found: list[tuple[str, Path | None]] = []
    if nvcc is not None:
        found.append((nvcc_cccl_version(nvcc, work_dir) or "toolkit", None))
    try:
        from scan import _toolchain

        for text in _toolchain.cccl_include_dirs():
            folder = Path(text)
            if (folder / "cub").is_dir():
                version = cccl_version(folder)
                if version is not None and version not in {v for v, _ in found}:
                    found.append((version, folder))
                break
    except Exception as exc:
        print(f"lookback_bench: the project's CCCL not found ({type(exc).__name__}: {exc})")
    return found


@dataclass
class CubProgram:
    """One nvcc job: ``cub_lookback.cu`` built against one CCCL."""

    cccl: str  # version label
    include: Path | None
    program: Path
    ok: bool = False
    seconds: float = 0.0
    message: str = ""

    @property
    def cubin(self) -> Path:
        """The built program (``records_bench.build_nvcc_units`` reports units by this name)."""
        return self.program


def nvcc_argv(nvcc: str, cc: tuple[int, int], unit: CubProgram) -> list[str]:
    """The nvcc command that builds ``unit``."""
    argv = [nvcc, "-O3", "-std=c++17", f"-arch=sm_{cc[0]}{cc[1]}"]
    if unit.include is not None:
        argv.append(f"-I{unit.include}")
    return [*argv, "-o", str(unit.program), str(CU_SOURCE)]


def _build_program(unit: CubProgram, nvcc: str, cc: tuple[int, int]) -> CubProgram:
    """Compile one program; skipped when it is newer than the source and built the same way."""
    started = time.perf_counter()
    argv = nvcc_argv(nvcc, cc, unit)
    stamp = unit.program.parent / f"{unit.program.name}.cmd"
    log = unit.program.parent / f"{unit.program.name}.log"
    if (
        unit.program.exists()
        and stamp.exists()
        and stamp.read_text() == " ".join(argv)
        and unit.program.stat().st_mtime >= CU_SOURCE.stat().st_mtime
    ):
        unit.ok, unit.message = True, "up to date"
        return unit
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
        log.write_text(" ".join(argv) + "\n" + proc.stdout + proc.stderr)
        unit.ok = proc.returncode == 0 and unit.program.exists()
        unit.message = "built" if unit.ok else f"nvcc rc={proc.returncode}: {proc.stderr[-800:]}"
        if unit.ok:
            stamp.write_text(" ".join(argv))
    except Exception as exc:
        unit.ok, unit.message = False, f"{type(exc).__name__}: {exc}"
    unit.seconds = time.perf_counter() - started
    return unit


def build_cub(build_dir: Path, cc: tuple[int, int]) -> list[CubProgram]:
    """Build the C++ program once per CCCL (``cccl_candidates``), in parallel threads."""
    from _harness import build_nvcc_units
    from _toolchain import find_tool

    build_dir.mkdir(parents=True, exist_ok=True)
    nvcc = find_tool("nvcc")
    if nvcc is None:
        print("lookback_bench: cub_cpp: nvcc not found; no CUB contenders", flush=True)
        return []
    units = [
        CubProgram(version, include, build_dir / f"cub_lookback_cccl{version}_sm{cc[0]}{cc[1]}")
        for version, include in cccl_candidates(nvcc, build_dir)
    ]
    built: list[CubProgram] = build_nvcc_units(
        "lookback_bench", units, lambda u, n: _build_program(u, n, cc), nvcc, cc
    )
    return built


def cub_command(
    program: Path, task: str, dtype: str, rows: int, cols: int, reps: int, warmup: int
) -> list[str]:
    """The command line of one run of the C++ program."""
    argv = [str(program), task, "--reps", str(reps), "--warmup", str(warmup)]
    if task == "cumsum":
        argv += ["--dtype", dtype, "--n", str(rows * cols)]
    elif task == "recurrence":
        argv += ["--n", str(rows * cols)]
    else:
        argv += ["--rows", str(rows), "--cols", str(cols)]
    return [*argv, "--variants", ",".join(CUB_VARIANTS[task])]


def run_program(argv: Sequence[str], timeout_s: float) -> tuple[list[dict[str, Any]], str]:
    """Run the C++ program (line-buffered, under ``timeout``); its JSON lines, and an error."""
    wrapped = list(argv)
    timeout_tool, stdbuf = shutil.which("timeout"), shutil.which("stdbuf")
    if timeout_tool is not None:
        wrapped = [timeout_tool, "-k", "5", str(int(timeout_s)), *wrapped]
    if stdbuf is not None:
        wrapped = [stdbuf, "-oL", *wrapped]
    try:
        proc = subprocess.run(
            wrapped, capture_output=True, text=True, timeout=timeout_s + 30, check=False
        )
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout_s:.0f} s"
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    for line in proc.stdout.splitlines():
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError:
            errors.append(f"unreadable line: {text[:200]}")
            continue
        if "error" in record:
            errors.append(str(record["error"]))
        else:
            records.append(record)
    if proc.returncode != 0 and not errors:
        errors.append(f"rc={proc.returncode}: {proc.stderr.strip()[-400:]}")
    return records, "; ".join(errors).replace("\n", " | ")


# ---------------------------------------------------------------------------- data and references


def hash_index(index: Any) -> Any:
    """The 32-bit hash of element ``index`` that ``_common.element_value`` maps to [-3, 3].

    ``mix32(index ^ mix32(SEED))``, as ``cub_lookback.cu``'s ``hash_index``;
    int64 operators only (Python ints, NumPy arrays, Numba device code).
    """
    x = (index & 0xFFFFFFFF) ^ _common.SEED_MIX
    x = x ^ (x >> 16)
    x = ((x * 0x352D) + (((x * 0x7FEB) & 0xFFFF) << 16)) & 0xFFFFFFFF
    x = x ^ (x >> 15)
    x = ((x * 0xA68B) + (((x * 0x846C) & 0xFFFF) << 16)) & 0xFFFFFFFF
    return x ^ (x >> 16)


def pair_values(index: Any) -> Any:
    """The recurrence's (a, b) pairs of the given int64 indices, as a ``PAIR`` array.

    ``a = 1 - (1 + H(2t) % 1638) / 16384`` in [0.9, 1) and ``b = ((H(2t + 1) >> 8)
    - 2**23) / 2**23`` in [-1, 1): exact in float32, the same in cub_lookback.cu.
    """
    index = np.asarray(index, dtype=np.int64)
    h1, h2 = hash_index(2 * index), hash_index(2 * index + 1)
    out = np.empty(index.shape, PAIR)
    out["a"] = np.float32(1.0) - (1 + h1 % 1638).astype(np.float32) * np.float32(1.0 / 16384.0)
    out["b"] = ((h2 >> 8) - 8388608).astype(np.float32) * np.float32(1.0 / 8388608.0)
    return out


def host_input(task: str, dtype: str, rows: int, cols: int) -> Any:
    """The task's input on the host (the simulator's; the GPU's is made on the device)."""
    index = np.arange(rows * cols, dtype=np.int64)
    if task == "recurrence":
        return pair_values(index)
    values = _common.element_value(index).astype(dtype)
    return values.reshape(rows, cols) if task == "rows" else values


_hash_device = cuda.jit(device=True)(hash_index)
_element_value_device = cuda.jit(device=True)(_common.element_value)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _fill_values(out: Any) -> None:
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = _element_value_device(i)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _fill_pairs(out: Any) -> None:
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        h1 = _hash_device(2 * i)
        h2 = _hash_device(2 * i + 1)
        out[i].a = np.float32(1.0) - np.float32(1 + h1 % 1638) * np.float32(1.0 / 16384.0)
        out[i].b = np.float32((h2 >> 8) - 8388608) * np.float32(1.0 / 8388608.0)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _poison_complement(out: Any, ref: Any) -> None:
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = ~ref[i]


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _poison_nan(out: Any) -> None:
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = np.nan


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _poison_pairs(out: Any) -> None:
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i].a = np.nan
        out[i].b = np.nan


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _count_bad_exact(out: Any, ref: Any, bad: Any) -> None:
    local = 0
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        if out[i] != ref[i]:  # NaN counts
            local += 1
    if local != 0:
        cuda.atomic.add(bad, 0, local)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _count_bad_recurrence(out: Any, ref: Any, bound: float, bad: Any) -> None:
    local = 0
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        if not abs(np.float64(out[i].b) - ref[i]) <= bound:  # NaN counts
            local += 1
    if local != 0:
        cuda.atomic.add(bad, 0, local)


def _stride_grid(n: int) -> tuple[int, int]:
    """Grid-stride launch shape: at most 4096 blocks of 256 threads."""
    return (max(1, min(4096, -(-n // 256))), 256)


@functools.cache
def _recurrence_host() -> Callable[[Any, Any, Any], None]:
    import numba

    @numba.njit(cache=False)  # type: ignore[untyped-decorator, unused-ignore]
    def run(a: Any, b: Any, out: Any) -> None:
        h = 0.0
        for t in range(a.shape[0]):
            h = np.float64(a[t]) * h + np.float64(b[t])
            out[t] = h

    return run  # type: ignore[no-any-return]


def reference(task: str, host: Any) -> Any:
    """The exact result (sums, in the input's dtype) or the float64 h (recurrence)."""
    if task == "recurrence":
        out = np.empty(host.shape[0], np.float64)
        _recurrence_host()(np.ascontiguousarray(host["a"]), np.ascontiguousarray(host["b"]), out)
        return out
    axis = 1 if host.ndim == 2 else 0
    wide = np.int64 if host.dtype.kind in "iu" else np.float64  # exact: integer-valued data
    return np.cumsum(host, axis=axis, dtype=wide).astype(host.dtype)


def word_sum(host: Any) -> int:
    """The sum of the 32-bit words of an array, modulo 2**64 (the C++ program's input_sum)."""
    words = np.ascontiguousarray(host).reshape(-1).view(np.uint32)
    return int(np.sum(words, dtype=np.uint64))


@dataclass
class Data:
    """One task's input, output and reference (on the device, or host arrays in the simulator)."""

    task: str
    dtype: str
    rows: int
    cols: int
    src: Any
    out: Any
    flat_out: Any
    ref: Any
    input_sum: int
    bound: float = 0.0  # the recurrence's tolerance * max|ref|

    @property
    def n(self) -> int:
        """Elements."""
        return self.rows * self.cols

    @property
    def bytes(self) -> int:
        """Bytes read and written by one scan."""
        return BYTES_PER_ELEMENT[self.task] * self.n

    @property
    def label_dtype(self) -> str:
        """The dtype as records name it."""
        return "float32x2" if self.task == "recurrence" else self.dtype

    @classmethod
    def make(cls, task: str, dtype: str, rows: int, cols: int, simulated: bool = False) -> Data:
        """Make the input (on the device, or on the host in the simulator) and its reference."""
        n = rows * cols
        np_dtype = PAIR if task == "recurrence" else np.dtype(dtype)
        if simulated:
            host = host_input(task, dtype, rows, cols)
            src = host
            out = np.zeros_like(host)
            flat_out = out.reshape(n)
        else:
            flat = cuda.device_array(n, dtype=np_dtype)
            (_fill_pairs if task == "recurrence" else _fill_values)[_stride_grid(n)](flat)
            cuda.synchronize()
            src = flat.reshape(rows, cols) if task == "rows" else flat
            flat_out = cuda.device_array(n, dtype=np_dtype)
            out = flat_out.reshape(rows, cols) if task == "rows" else flat_out
            host = src.copy_to_host()
        ref = reference(task, host)
        bound = 0.0
        if task == "recurrence":
            bound = RECURRENCE_TOLERANCE * float(np.max(np.abs(ref)))
        flat_ref = ref.reshape(n)
        data = cls(task, dtype, rows, cols, src, out, flat_out, flat_ref, word_sum(host), bound)
        if not simulated:
            data.ref = cuda.to_device(flat_ref)
        return data

    def poison(self) -> None:
        """An output no correct scan leaves (the reference's complement, or NaN)."""
        grid = _stride_grid(self.n)
        if self.task == "recurrence":
            _poison_pairs[grid](self.flat_out)
        elif self.dtype == "int32":
            _poison_complement[grid](self.flat_out, self.ref)
        else:
            _poison_nan[grid](self.flat_out)

    def bad(self) -> int:
        """Elements of the output that differ from the reference."""
        count = cuda.to_device(np.zeros(1, np.int64))
        grid = _stride_grid(self.n)
        if self.task == "recurrence":
            _count_bad_recurrence[grid](self.flat_out, self.ref, self.bound, count)
        else:
            _count_bad_exact[grid](self.flat_out, self.ref, count)
        return int(count.copy_to_host()[0])


# ---------------------------------------------------------------------------- contenders


@dataclass
class Entry:
    """One contender and what it measured.

    ``launch()`` enqueues one scan; ``prepare()`` (optional) runs before it,
    untimed (the status reset of ``project_scan``).
    """

    impl: str
    config: str
    fields: dict[str, object]
    launch: Callable[[], None] | None = None
    prepare: Callable[[], None] | None = None
    ok: bool = True
    times: list[float] = field(default_factory=list)
    round_medians: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median_ms(self) -> float:
        """Median over the rounds of each round's median (NaN without any)."""
        if self.round_medians:
            return _common.median(self.round_medians)
        return _common.median(self.times) if self.times else float("nan")

    @property
    def min_ms(self) -> float:
        """The fastest timed interval."""
        return min(self.times) if self.times else float("nan")


@dataclass
class Group:
    """The contenders of one task (and dtype)."""

    data: Data
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    device: str = ""

    @property
    def title(self) -> str:
        """``cumsum int32``, ``recurrence float32x2``, ``rows int32``."""
        return f"{self.data.task} {self.data.label_dtype}"


#: contenders that could not be set up (also ERROR records); main() exits 1 on any
SETUP_ERRORS: list[str] = []


def _label(data: Data, entry: Entry) -> dict[str, object]:
    return {
        "bench": "lookback",
        "task": data.task,
        "dtype": data.label_dtype,
        "impl": entry.impl,
        "rows": data.rows,
        "cols": data.cols,
        "config": entry.config,
        **entry.fields,
    }


def check(data: Data, entry: Entry, stage: str) -> bool:
    """Poison the output, launch once, compare with the reference; False (with a record)."""
    assert entry.launch is not None
    label = _label(data, entry)
    try:
        data.poison()
        cuda.synchronize()
        if entry.prepare is not None:
            entry.prepare()
        entry.launch()
        cuda.synchronize()
        bad = data.bad()
    except Exception as exc:
        _common.emit_error(exc, **label, stage=stage)
        return False
    if bad:
        _common.emit("MISMATCH", **label, stage=stage, bad_elements=bad, of=data.n)
    return bad == 0


def _fields(cfg: Config, timed: str) -> dict[str, object]:
    return {"threads": cfg.threads, "items": cfg.items, "timed": timed}


def project_entries(data: Data, cfg: Config) -> list[Entry]:
    """``project`` and ``project_scan`` of a look-back kernel, or ``project_block``."""
    import scan

    kernel = project_kernel(cfg)
    configured = kernel[cfg.grid(data.rows, data.cols), cfg.threads]
    src, out = data.src, data.out
    if cfg.kernel == "rows_block":

        def launch_block() -> None:
            configured(src, out)

        return [Entry("project_block", cfg.label, _fields(cfg, "scan"), launch_block)]
    shape: int | tuple[int, int] = cfg.tiles(data.cols)
    if cfg.kernel == "rows_lookback":
        shape = (data.rows, cfg.tiles(data.cols))
    status = scan.tile_status(shape, value_dtype(cfg))
    reset = status.reset
    # scan.tile_status(..., deterministic=True): the same kernel compiled for the ordered look-back
    ordered = scan.tile_status(shape, value_dtype(cfg), deterministic=True)

    def launch_scan() -> None:
        configured(src, out, status)

    def launch_reset_scan() -> None:
        reset()
        configured(src, out, status)

    def launch_ordered() -> None:
        ordered.reset()
        configured(src, out, ordered)

    return [
        Entry("project", cfg.label, _fields(cfg, "reset+scan"), launch_reset_scan),
        Entry("project_scan", cfg.label, _fields(cfg, "scan"), launch_scan, prepare=reset),
        Entry("project_ordered", cfg.label, _fields(cfg, "reset+scan"), launch_ordered),
    ]


def _torch_views(data: Data) -> tuple[Any, Any]:
    import torch  # type: ignore[import-not-found, unused-ignore]

    x = torch.as_tensor(data.src, device="cuda")
    y = torch.as_tensor(data.out, device="cuda")
    for t, a in ((x, data.src), (y, data.out)):
        if int(t.data_ptr()) != int(a.__cuda_array_interface__["data"][0]):
            raise RuntimeError("torch.as_tensor copied the numba array instead of wrapping it")
    return x, y


def peer_entries(group: Group) -> list[Entry]:
    """``torch.cumsum`` and ``cupy.cumsum`` where they import (a note where not)."""
    data = group.data
    if data.task == "recurrence":
        return []
    entries: list[Entry] = []
    axis = 1 if data.task == "rows" else 0
    fields: dict[str, object] = {"threads": 0, "items": 0, "timed": "call"}
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]

        x, y = _torch_views(data)
        dtype = x.dtype

        def launch_torch() -> None:
            torch.cumsum(x, dim=axis, dtype=dtype, out=y)

        entries.append(Entry("torch.cumsum", f"dim{axis}", dict(fields), launch_torch))
    except Exception as exc:
        group.notes.append(f"torch.cumsum skipped: {type(exc).__name__}: {exc}"[:300])
    try:
        import cupy as cp  # type: ignore[import-not-found, unused-ignore]

        xc, yc = cp.asarray(data.src), cp.asarray(data.out)

        def launch_cupy() -> None:
            cp.cumsum(xc, axis=axis, dtype=xc.dtype, out=yc)

        entries.append(Entry("cupy.cumsum", f"axis{axis}", dict(fields), launch_cupy))
    except Exception as exc:
        group.notes.append(f"cupy.cumsum skipped: {type(exc).__name__}: {exc}"[:300])
    for note in group.notes:
        print(f"lookback_bench: {group.title}: {note}", flush=True)
    return entries


# ---------------------------------------------------------------------------- timing


def time_round(entries: Sequence[Entry], spin: Any, reps: int, warmup: int, data: Data) -> int:
    """Time the live Python contenders in ``reps`` interleaved rounds; return those discarded.

    Each round starts behind the spin kernel (or an untimed launch), so that no
    interval includes the host's enqueueing; every contender launches once, in
    an order rotated from round to round, between two events of its own (its
    ``prepare()`` before the first). An entry that raises is dropped with an
    ERROR record. This call's median of each entry goes to its
    ``round_medians``.
    """
    from _harness import MAX_SPIN_S
    from _harness import rotate as _rotate

    live = [e for e in entries if e.ok and e.launch is not None]

    def drop(entry: Entry, exc: BaseException, stage: str) -> None:
        _common.emit_error(exc, **_label(data, entry), stage=stage)
        entry.ok = False
        live.remove(entry)

    enqueue_s = 0.0
    for _ in range(max(1, warmup)):
        started = time.perf_counter()
        for entry in list(live):
            try:
                if entry.prepare is not None:
                    entry.prepare()
                entry.launch()  # type: ignore[misc]
            except Exception as exc:
                drop(entry, exc, "warmup")
        enqueue_s = max(enqueue_s, time.perf_counter() - started)
        cuda.synchronize()
    spin_s = min(MAX_SPIN_S, max(1e-4, 3.0 * enqueue_s))
    fresh: dict[int, list[float]] = {id(e): [] for e in live}
    discarded = 0
    done = 0
    for r in range(4 * reps):
        if done == reps or not live:
            break
        order = _rotate(list(live), r)
        starts = [cuda.event() for _ in order]
        ends = [cuda.event() for _ in order]
        launched: list[bool] = []
        if spin.available:
            spin(int(spin_s * 1e9))
        else:  # untimed: the device is busy while the round is enqueued
            if order[0].prepare is not None:
                order[0].prepare()
            order[0].launch()  # type: ignore[misc]
        started = time.perf_counter()
        for k, entry in enumerate(order):
            try:
                if entry.prepare is not None:
                    entry.prepare()
                starts[k].record()
                entry.launch()  # type: ignore[misc]
                ends[k].record()
                launched.append(True)
            except Exception as exc:
                drop(entry, exc, "timing")
                launched.append(False)
        enqueued = time.perf_counter() - started
        cuda.synchronize()
        if spin.available and enqueued > 0.8 * spin_s and spin_s < MAX_SPIN_S:
            # the device may have waited for the host inside the round: not a clean sample
            discarded += 1
            spin_s = min(MAX_SPIN_S, 2.0 * spin_s)
            continue
        for k, entry in enumerate(order):
            if launched[k]:
                fresh[id(entry)].append(float(starts[k].elapsed_time(ends[k])))
        done += 1
    for entry in entries:
        got = fresh.get(id(entry), [])
        if got and entry.ok:
            entry.times += got
            entry.round_medians.append(_common.median(got))
    return discarded


def run_cub_round(
    group: Group, programs: Sequence[CubProgram], reps: int, warmup: int, timeout_s: float
) -> list[CubProgram]:
    """Run each C++ program once over the group's task; add its variants' times.

    Returns the programs that failed (an ERROR record each; their entries are
    marked wrong).
    """
    data = group.data
    failed: list[CubProgram] = []
    for unit in programs:
        argv = cub_command(unit.program, data.task, data.dtype, data.rows, data.cols, reps, warmup)
        records, error = run_program(argv, timeout_s)
        for record in records:
            config = f"{record.get('variant', '?')}_cccl{record.get('cccl', unit.cccl)}"
            entry = next(
                (e for e in group.entries if e.impl == "cub_cpp" and e.config == config), None
            )
            if entry is None:
                # DeviceScan's own policy: 0 x 0 (CUB picks it); a tuned one: its shape
                shape = CUB_TUNED_NAME.search(str(record.get("variant", "")))
                threads, items = (int(shape[1]), int(shape[2])) if shape else (0, 0)
                fields: dict[str, object] = {"threads": threads, "items": items, "timed": "call"}
                fields["temp_bytes"] = record.get("temp_bytes", "")
                entry = Entry("cub_cpp", config, fields)
                group.entries.append(entry)
                group.device = group.device or str(record.get("device", ""))
            label = _label(data, entry)
            if entry.ok and int(record.get("input_sum", -1)) != data.input_sum:
                _common.emit(
                    "MISMATCH",
                    **label,
                    stage="input",
                    msg="the C++ program's input differs",
                    input_sum=record.get("input_sum"),
                    expected=data.input_sum,
                )
                entry.ok = False
            if entry.ok and not record.get("ok", False):
                _common.emit(
                    "MISMATCH",
                    **label,
                    stage="check after timing",
                    bad_elements=record.get("bad"),
                    of=data.n,
                )
                entry.ok = False
            times = [float(t) for t in record.get("times_ms", [])]
            if times:
                entry.times += times
                entry.round_medians.append(_common.median(times))
        if error:
            _common.emit(
                "ERROR",
                bench="lookback",
                task=data.task,
                dtype=data.label_dtype,
                impl="cub_cpp",
                config=f"cccl{unit.cccl}",
                stage="run",
                msg=error[:600],
            )
            SETUP_ERRORS.append(f"cub_cpp cccl{unit.cccl} {group.title}: {error[:300]}")
            for entry in group.entries:
                if entry.impl == "cub_cpp" and entry.config.endswith(f"_cccl{unit.cccl}"):
                    entry.ok = False
            failed.append(unit)
    return failed


def _best(group: Group, impl: str) -> Entry | None:
    return min(
        (e for e in group.entries if e.impl == impl and e.ok and e.round_medians),
        key=lambda e: e.median_ms,
        default=None,
    )


def run_group(
    group: Group,
    programs: Sequence[CubProgram],
    spin: Any,
    rounds: int,
    reps: int,
    warmup: int,
) -> None:
    """Check, time (rounds alternating C++ and Python) and check again; emit one record each."""
    data = group.data
    python = [e for e in group.entries if e.launch is not None]
    print(
        f"lookback_bench: {group.title} {data.rows}x{data.cols}: {len(python)} Python "
        f"contenders, {len(programs)} C++ programs, {rounds} rounds",
        flush=True,
    )
    for entry in python:
        entry.ok = check(data, entry, "check before timing")
    discarded = 0
    live = list(programs)  # a program that fails is not run again
    for r in range(rounds):
        started = time.perf_counter()
        if r % 2 == 0:
            failed = run_cub_round(group, live, reps, warmup, 300)
            discarded += time_round(python, spin, reps, warmup, data)
        else:
            discarded += time_round(python, spin, reps, warmup, data)
            failed = run_cub_round(group, live, reps, warmup, 300)
        live = [u for u in live if u not in failed]
        print(
            f"lookback_bench: {group.title}: round {r + 1}/{rounds} in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
    if discarded:
        print(f"lookback_bench: {discarded} Python rounds discarded (host slower than the spin)")
    for entry in python:
        if entry.ok:
            entry.ok = check(data, entry, "check after timing")
    if programs and not any(e.impl == "cub_cpp" for e in group.entries):
        SETUP_ERRORS.append(f"cub_cpp {group.title}: no result")
    for entry in group.entries:
        _common.emit("RESULT", **record_fields(group, entry))


def record_fields(group: Group, entry: Entry) -> dict[str, object]:
    """The RESULT record of an entry (ratios against the group's best CUB and one-block)."""
    data = group.data
    ms = entry.median_ms
    fields: dict[str, object] = {
        **_label(data, entry),
        "median_ms": ms,
        "min_ms": entry.min_ms,
        "gbps": data.bytes / (ms * 1e-3) / 1e9 if ms > 0 else float("nan"),
        "ok": entry.ok,
        "reps": len(entry.times),
        "rounds": len(entry.round_medians),
    }
    best_cub = _best(group, "cub_cpp")
    fields["vs_best_cub"] = best_cub.median_ms / ms if best_cub and entry.ok else float("nan")
    one_block = _best(group, "project_block")
    if entry.impl in ("project", "project_scan") and one_block is not None:
        fields["vs_one_block"] = one_block.median_ms / ms if entry.ok else float("nan")
    return fields


# ---------------------------------------------------------------------------- the run


def task_groups(
    tasks: Sequence[str], dtypes: Sequence[str], sizes: dict[str, tuple[int, int]]
) -> list[tuple[str, str, int, int]]:
    """(task, dtype, rows, cols) of every group to measure."""
    out: list[tuple[str, str, int, int]] = []
    for task in tasks:
        rows, cols = sizes[task]
        if task == "cumsum":
            out += [(task, d, rows, cols) for d in dtypes]
        elif task == "recurrence":
            out.append((task, "pair", rows, cols))
        else:
            out.append((task, "int32", rows, cols))
    return out


def _group_configs(cfgs: Sequence[Config], task: str, dtype: str) -> list[Config]:
    return [c for c in cfgs if c.task == task and (task != "cumsum" or c.dtype == dtype)]


def run(
    tasks: Sequence[str],
    dtypes: Sequence[str],
    sizes: dict[str, tuple[int, int]],
    cfgs: Sequence[Config],
    build_dir: Path,
    rounds: int,
    reps: int,
    warmup: int,
) -> list[Group]:
    """Build everything, then measure every task."""
    from _harness import Spinner
    from _harness import target_cc as _target_cc

    cc = _target_cc()
    build_dir.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, build_dir / "cub", cc)
        try:
            builds = build_project(cfgs, build_dir, cc)
        except Exception as exc:
            _common.emit_error(exc, bench="lookback", impl="project", stage="scan.compile pool")
            builds = {}
        try:
            programs = cub_future.result()
        except Exception as exc:
            _common.emit_error(exc, bench="lookback", impl="cub_cpp", stage="nvcc")
            programs = []
    for cfg, (ok, message) in builds.items():
        if not ok:
            SETUP_ERRORS.append(f"project {cfg.key}: scan.compile: {message}")
    for unit in programs:
        if not unit.ok:
            label = {"bench": "lookback", "impl": "cub_cpp", "config": f"cccl{unit.cccl}"}
            _common.emit("ERROR", **label, stage="build", msg=unit.message[:600])
            SETUP_ERRORS.append(f"cub_cpp cccl{unit.cccl}: build: {unit.message[:300]}")
    if not programs:
        SETUP_ERRORS.append("cub_cpp: no C++ program (nvcc or CCCL headers not found)")
    ready = [u for u in programs if u.ok]
    spin = Spinner(cc)
    groups: list[Group] = []
    for task, dtype, rows, cols in task_groups(tasks, dtypes, sizes):
        started = time.perf_counter()
        data = Data.make(task, dtype, rows, cols)
        print(
            f"lookback_bench: {task} {data.label_dtype} {rows}x{cols}: data and NumPy reference "
            f"in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        group = Group(data)
        for cfg in _group_configs(cfgs, task, dtype):
            try:
                group.entries += project_entries(data, cfg)
            except Exception as exc:
                _common.emit_error(
                    exc, bench="lookback", task=task, impl="project", config=cfg.label
                )
                SETUP_ERRORS.append(f"project {cfg.key}: {type(exc).__name__}: {exc}")
        group.entries += peer_entries(group)
        run_group(group, ready, spin, rounds, reps, warmup)
        groups.append(group)
        for entry in group.entries:
            entry.launch = entry.prepare = None  # drop the arrays and statuses they hold
        data.src = data.out = data.flat_out = data.ref = None
    return groups


# ---------------------------------------------------------------------------- reports


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def _gbps(group: Group, entry: Entry | None) -> float:
    if entry is None or not entry.ok or not entry.median_ms > 0:
        return float("nan")
    return group.data.bytes / entry.median_ms / 1e6


#: the columns of the targets table (``targets``' keys)
TARGET_COLUMNS: tuple[tuple[str, str], ...] = (
    ("target", "target"),
    ("shape", "shape"),
    ("project", "project GB/s (best)"),
    ("against", "against GB/s"),
    ("ratio", "ratio"),
    ("default_ratio", "ratio of 256 x 8"),
    ("goal", "goal"),
    ("verdict", "verdict"),
)


def targets(groups: Sequence[Group]) -> list[dict[str, str]]:
    """Per task the best project (reset + scan) against the best CUB; rows: against one block.

    ``ratio`` is the other's ms / the best project's ms, ``default_ratio`` the
    same for the default configuration (256 threads x 8 items).
    """
    default = "t{}_i{}".format(*DEFAULT_SHAPE)
    out: list[dict[str, str]] = []
    for group in groups:
        d = group.data
        p = _best(group, "project")
        dflt = next(
            (e for e in group.entries if e.impl == "project" and e.config == default and e.ok),
            None,
        )
        rivals = [("best CUB DeviceScan", _best(group, "cub_cpp"), SPEED_TARGET)]
        ordered = _best(group, "project_ordered")
        if ordered is not None and p is not None:
            # the deterministic look-back against the default one: ordered ms / project ms
            ratio = p.median_ms / ordered.median_ms
            out.append(
                {
                    "target": f"{group.title}: deterministic status vs the default one",
                    "shape": f"{d.rows}x{d.cols}",
                    "project": f"{_fmt(_gbps(group, ordered), 0)} ({ordered.config})",
                    "against": f"{_fmt(_gbps(group, p), 0)} ({p.config})",
                    "ratio": _fmt(ratio),
                    "default_ratio": "-",
                    "goal": f">= {ORDERED_TARGET}",
                    "verdict": "PASS" if ratio >= ORDERED_TARGET else "FAIL",
                }
            )
        if d.task == "rows":
            rivals.append(("one block per row", _best(group, "project_block"), ONE_BLOCK_TARGET))
        for name, rival, goal in rivals:
            ratio = rival.median_ms / p.median_ms if p and rival else float("nan")
            ratio_default = (
                rival.median_ms / dflt.median_ms
                if dflt and rival and dflt.round_medians
                else float("nan")
            )
            verdict = "-" if ratio != ratio else ("PASS" if ratio >= goal else "FAIL")
            out.append(
                {
                    "target": f"{group.title}: project vs {name}",
                    "shape": f"{d.rows}x{d.cols}",
                    "project": f"{_fmt(_gbps(group, p), 0)} ({p.config})" if p else "-",
                    "against": f"{_fmt(_gbps(group, rival), 0)} ({rival.config})" if rival else "-",
                    "ratio": _fmt(ratio),
                    "default_ratio": _fmt(ratio_default),
                    "goal": f">= {goal}",
                    "verdict": verdict,
                }
            )
    return out


def report_lines(groups: Sequence[Group], rounds: int, reps: int) -> list[str]:
    """Markdown: the targets, then every contender of every task."""
    device = next((g.device for g in groups if g.device), "")
    lines = [
        "# Cross-block scans: decoupled look-back against CUB DeviceScan",
        "",
        *([f"Device: {device}.", ""] if device else []),
        "GB/s = bytes read + written / time (the task's bytes: 8 an element for the sums, 16 "
        "for the recurrence's pairs). Time: median over "
        f"{rounds} rounds of each round's median of {reps} launches (CUDA events; the C++ "
        "program and the Python contenders alternate round by round). 'vs best CUB' = best "
        "CUB ms / ms. project = status reset + scan (CUB's DeviceScan also times its init "
        "kernel); project_scan = the scan alone.",
        "",
        "## Targets",
        "",
        "| " + " | ".join(title for _, title in TARGET_COLUMNS) + " |",
        "|" + " --- |" * len(TARGET_COLUMNS),
        *(
            "| " + " | ".join(row[key] for key, _ in TARGET_COLUMNS) + " |"
            for row in targets(groups)
        ),
        "",
    ]
    for group in groups:
        d = group.data
        lines += [
            f"## {group.title}, {d.rows} x {d.cols} ({d.bytes / 1e9:.2f} GB moved)",
            "",
            "| impl | config | timed | ms | min ms | GB/s | vs best CUB | ok |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        best_cub = _best(group, "cub_cpp")
        ordered = sorted(group.entries, key=lambda e: (not e.ok, e.median_ms))
        for e in ordered:
            ms = e.median_ms
            vs = best_cub.median_ms / ms if best_cub and e.ok and ms > 0 else float("nan")
            gbps = d.bytes / ms / 1e6 if ms > 0 else float("nan")
            lines.append(
                f"| {e.impl} | {e.config} | {e.fields.get('timed', '')} | {_fmt(ms, 4)} | "
                f"{_fmt(e.min_ms, 4)} | {_fmt(gbps, 0)} | {_fmt(vs)} | "
                f"{'yes' if e.ok else 'NO'} |"
            )
        lines += [f"- {note}" for note in group.notes]
        lines.append("")
    return lines


def write_csv(groups: Sequence[Group], path: Path) -> None:
    """One row per contender."""
    columns = ["task", "dtype", "rows", "cols", "impl", "config", "threads", "items", "timed"]
    columns += ["median_ms", "min_ms", "gbps", "vs_best_cub", "vs_one_block", "ok"]
    columns += ["rounds", "launches"]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for group in groups:
            for e in group.entries:
                r = record_fields(group, e)
                writer.writerow(
                    [
                        *(r["task"], r["dtype"], r["rows"], r["cols"], e.impl, e.config),
                        *(e.fields.get("threads", ""), e.fields.get("items", "")),
                        e.fields.get("timed", ""),
                        f"{e.median_ms:.5f}",
                        f"{e.min_ms:.5f}",
                        _fmt(float(r["gbps"]), 1),  # type: ignore[arg-type]
                        _fmt(float(r["vs_best_cub"]), 4),  # type: ignore[arg-type]
                        _fmt(float(r.get("vs_one_block", float("nan"))), 4),  # type: ignore[arg-type]
                        int(e.ok),
                        len(e.round_medians),
                        len(e.times),
                    ]
                )


def write_json(groups: Sequence[Group], path: Path, meta: dict[str, object]) -> None:
    """Everything measured: every timed interval and each round's median."""

    def clean(value: object) -> object:
        return None if isinstance(value, float) and value != value else value

    doc = {
        **meta,
        "targets": targets(groups),
        "groups": [
            {
                "task": g.data.task,
                "dtype": g.data.label_dtype,
                "rows": g.data.rows,
                "cols": g.data.cols,
                "bytes": g.data.bytes,
                "device": g.device,
                "notes": g.notes,
                "entries": [
                    {
                        **{k: clean(v) for k, v in record_fields(g, e).items()},
                        "round_medians_ms": e.round_medians,
                        "times_ms": e.times,
                    }
                    for e in g.entries
                ],
            }
            for g in groups
        ],
    }
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- build only


def build_only(cfgs: Sequence[Config], build_dir: Path, cc: tuple[int, int]) -> int:
    """Compile the C++ programs and the project kernels without a GPU; print their resources."""
    from _toolchain import SM90_RESERVED_SHARED, only_kernel

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, build_dir / "cub", cc)
        project = build_project(cfgs, build_dir, cc)
        programs = cub_future.result()
    print("project kernels: registers, own shared memory (bytes), local memory (bytes a thread):")
    failed = sum(not u.ok for u in programs) + (0 if programs else 1)
    for cfg in cfgs:
        ok, where = project.get(cfg, (False, "missing"))
        if not ok:
            print(f"  {cfg.key}: FAILED {where[:300]}")
            failed += 1
            continue
        u = only_kernel(Path(where).read_bytes())
        own = max(0, u.shared - SM90_RESERVED_SHARED)
        print(f"  {cfg.key}: regs={u.regs} smem={own} local={u.local}")
    for unit in programs:
        print(f"  C++ program (CCCL {unit.cccl}): {unit.program} {'ok' if unit.ok else 'FAILED'}")
    print(
        f"lookback_bench: build-only done in {time.perf_counter() - started:.1f} s wall; "
        f"{failed} failures",
        flush=True,
    )
    return 1 if failed else 0


# ---------------------------------------------------------------------------- the simulator


def simulate(cfgs: Sequence[Config]) -> int:
    """Run each project kernel in the CUDA simulator on a small size; 1 when one differs."""
    import scan

    failed = 0
    for cfg in cfgs:
        rows = 3 if cfg.task == "rows" else 1
        cols = 2 * cfg.tile + cfg.tile // 3  # two full tiles and a partial one
        dtype = "int32" if cfg.dtype == "pair" else cfg.dtype
        data = Data.make(cfg.task, dtype, rows, cols, simulated=True)
        kernel = project_kernel(cfg)[cfg.grid(rows, cols), cfg.threads]
        if cfg.kernel == "rows_block":
            kernel(data.src, data.out)
        else:
            shape = (rows, cfg.tiles(cols)) if cfg.kernel == "rows_lookback" else cfg.tiles(cols)
            kernel(data.src, data.out, scan.tile_status(shape, value_dtype(cfg)))
        if cfg.task == "recurrence":
            got = data.flat_out["b"].astype(np.float64)
            bad = int(np.count_nonzero(~(np.abs(got - data.ref) <= data.bound)))
        else:
            bad = int(np.count_nonzero(data.flat_out != data.ref))
        failed += bad != 0
        verdict = "ok" if bad == 0 else f"MISMATCH: {bad} of {data.n} elements"
        print(f"lookback_bench: simulator {rows}x{cols} {cfg.key}: {verdict}", flush=True)
    return 1 if failed else 0


# ---------------------------------------------------------------------------- command line


def profile_launch(
    task: str, dtype: str, size: tuple[int, int], shape: tuple[int, int], ordered: bool
) -> int:
    """Launch one look-back kernel twice (the first compiles) and check it: for Nsight Compute.

    Beside the C++ program's variant of the same shape, e.g.::

        ncu -k regex:recurrence --launch-skip 1 --launch-count 1 \\
            python bench/lookback_bench.py --task recurrence --config 128x32 \\
            --profile-launch default
        ncu -k regex:DeviceScanKernel --launch-skip 1 --launch-count 1 \\
            cub_lookback recurrence --n 134217728 \\
            --variants inclusive_scan_tuned_t128_i32 --reps 1 --warmup 1

    Returns 1 if the result is wrong.
    """
    cfg = Config(task, shape[0], shape[1], "pair" if task == "recurrence" else dtype)
    n = size[0] * size[1]
    data = Data.make(task, dtype, 1, n)
    # the benchmark's own contenders: "project" and "project_ordered" reset, then scan
    entries = {e.impl: e for e in project_entries(data, cfg)}
    launch = entries["project_ordered" if ordered else "project"].launch
    assert launch is not None
    for _ in range(2):
        data.poison()
        launch()
    cuda.synchronize()
    bad = data.bad()
    print(f"{cfg.key} n={n} deterministic={ordered}: {bad} wrong elements", flush=True)
    return 1 if bad else 0


def parse_size(text: str) -> tuple[str, tuple[int, int]]:
    """``TASK=ROWSxCOLS`` (or ``TASK=N`` for one row) into ``(task, (rows, cols))``."""
    task, sep, shape = text.partition("=")
    if not sep or task not in TASKS:
        raise argparse.ArgumentTypeError(
            f"--shape takes TASK=ROWSxCOLS or TASK=N with TASK one of {', '.join(TASKS)}, "
            f"got {text!r}"
        )
    if re.fullmatch(r"\s*\d+\s*", shape):
        rows, cols = 1, int(shape)
        if cols <= 0:
            raise argparse.ArgumentTypeError(f"a size must be positive, got {text!r}")
    else:
        rows, cols = _common.parse_shape(shape)
    if task != "rows" and rows != 1:
        raise argparse.ArgumentTypeError(f"{task} scans one row: {task}=N or {task}=1xN")
    return task, (rows, cols)


def parse_threads_items(text: str) -> tuple[int, int]:
    """``THREADSxITEMS`` (threads a multiple of 32)."""
    threads, items = _common.parse_shape(text)
    if threads % 32 or threads > 1024:
        raise argparse.ArgumentTypeError(f"threads must be a multiple of 32 up to 1024: {text!r}")
    return threads, items


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--task",
        dest="tasks",
        action="append",
        choices=TASKS,
        help="task to run (repeatable); default: all",
    )
    parser.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        choices=CUMSUM_DTYPES,
        help="cumsum's dtype (repeatable); default: both",
    )
    parser.add_argument(
        "--shape",
        dest="sizes",
        action="append",
        type=parse_size,
        metavar="TASK=ROWSxCOLS",
        help="size of a task (repeatable), e.g. cumsum=268435456, rows=16x16777216; default: "
        + ", ".join(f"{t}={r}x{c}" for t, (r, c) in SIZES.items()),
    )
    parser.add_argument(
        "--config",
        dest="shapes",
        action="append",
        type=parse_threads_items,
        metavar="THREADSxITEMS",
        help="look-back configurations to run (repeatable; 256x8 always runs); default: a few "
        "per task",
    )
    parser.add_argument(
        "--repeats",
        "--reps",
        dest="repeats",
        type=int,
        default=20,
        help="timed launches of each contender per round",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds (C++ and Python alternate)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed launches per round")
    parser.add_argument("--quick", action="store_true", help="small sizes, few configurations")
    parser.add_argument(
        "--out", type=Path, help="also write lookback.md, lookback.csv and lookback.json here"
    )
    parser.add_argument("--build-dir", type=Path, help="where builds go (default: a temp folder)")
    parser.add_argument(
        "--build-only", action="store_true", help="compile for sm_90 only (no GPU needed)"
    )
    parser.add_argument(
        "--profile-launch",
        choices=("default", "ordered"),
        help="for a profiler: launch the first task's project kernel at the first --config "
        "(default 128x32) twice with a default or deterministic status, check it, and stop",
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="run the project kernels in the CUDA simulator on small sizes "
        "(NUMBA_ENABLE_CUDASIM=1)",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 0 or args.rounds < 1:
        parser.error("--repeats and --rounds must be >= 1 and --warmup >= 0")
    if args.quick:
        args.repeats = min(args.repeats, 5)
        args.warmup = min(args.warmup, 1)
        args.rounds = min(args.rounds, 2)
    tasks = list(dict.fromkeys(args.tasks or TASKS))
    dtypes = list(dict.fromkeys(args.dtypes or CUMSUM_DTYPES))
    sizes = dict(QUICK_SIZES if args.quick else SIZES)
    sizes.update(dict(args.sizes or []))
    cfgs = configs(tasks, args.quick, dtypes, args.shapes)
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="lookback-bench-"))
    if args.build_only:
        return build_only(cfgs, build_dir, (9, 0))
    from numba.core import config as numba_config

    if args.profile_launch:
        if tasks[0] == "rows":
            parser.error("--profile-launch takes --task cumsum or --task recurrence")
        size = sizes[tasks[0]]
        shape = (args.shapes or [(128, 32)])[0]
        return profile_launch(tasks[0], dtypes[0], size, shape, args.profile_launch == "ordered")
    if args.simulate:
        if not numba_config.ENABLE_CUDASIM:
            parser.error("--simulate needs NUMBA_ENABLE_CUDASIM=1")
        return simulate(configs(tasks, True, dtypes, args.shapes))
    if numba_config.ENABLE_CUDASIM:
        print("lookback_bench: needs a GPU (not the simulator): nothing measured")
        return 2
    try:
        available = cuda.is_available()
    except Exception:
        available = False
    if not available:
        print(
            "lookback_bench: no CUDA GPU found (numba.cuda.is_available() is False): nothing "
            "measured. --build-only compiles everything without one; --simulate (with "
            "NUMBA_ENABLE_CUDASIM=1) runs the project kernels in the simulator.",
            flush=True,
        )
        return 2
    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    try:
        name = cuda.get_current_device().name
        device = name.decode() if isinstance(name, bytes) else str(name)
        _common.emit("DEVICE", name=device)
        groups = run(tasks, dtypes, sizes, cfgs, build_dir, args.rounds, args.repeats, args.warmup)
    except Exception:
        traceback.print_exc()
        return 1
    for group in groups:
        group.device = group.device or device
    lines = report_lines(groups, args.rounds, args.repeats)
    print("\n".join(lines), flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "lookback.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        write_csv(groups, args.out / "lookback.csv")
        meta: dict[str, object] = {
            "device": device,
            "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
            "rounds": args.rounds,
            "repeats": args.repeats,
            "warmup": args.warmup,
        }
        write_json(groups, args.out / "lookback.json", meta)
    from _harness import run_outcome

    return run_outcome("lookback_bench", [e for g in groups for e in g.entries], SETUP_ERRORS)


if __name__ == "__main__":
    sys.exit(main())
