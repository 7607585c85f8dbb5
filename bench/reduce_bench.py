# SPDX-License-Identifier: Apache-2.0
"""Per-row block reduce: the library's ``block.sum`` / ``block.reduce`` against CUB C++.

One thread block per row walks its row tile by tile (``threads x items`` items
a tile): a tile load, the block's reduction of the tile, the tile's result
folded into a running value, the row's result written by thread 0. Three
tasks, each over the shapes 16384 x 8192 (long rows: 4 to 16 full tiles,
no partial tile) and 262144 x 512 (short rows: one tile, partial for tiles of
more than 512 items), rows x cols, 512 MiB of input each:

``sum_f32``
    float32 sum of standard-normal data. Checked against NumPy's float64 sum:
    ``|out - ref| <= 1e-5 * sum(|x|)`` per row. The kernels add in CUB's
    order, not NumPy's; no chain of float32 adds here is longer than 50, so
    rounding alone stays below ``50 * 2**-24 * sum(|x|)``, 3e-6 of it.
``sum_i32``
    int32 sum of data uniform over the whole int32 range, so the sums wrap
    around; checked for exact equality with NumPy's int64 sum taken modulo
    2**32.
``max_f32``
    float32 max of the standard-normal data of ``sum_f32``; checked for exact
    equality with NumPy's max.

Contenders, for every configuration (threads, items, load algorithm ``io``,
reduce algorithm ``algo``), the same on both sides:

``project``
    The library, written as docs/reduce.md shows: ``block.load(row, base,
    items, oob_default=<identity>, algorithm=io)`` and ``block.sum(items,
    algorithm=algo, broadcast=False)`` or ``block.reduce(items, "max",
    algorithm=algo, broadcast=False)`` (CUB's result, in thread 0, which alone
    accumulates it) in a ``for base in block.tiles(n, items)`` loop, a plain
    ``@cuda.jit`` kernel launched by numba-cuda. The library declares the launch's block size as
    the kernel's launch bounds and puts CUB's barrier after each reduce
    (``auto_sync=True``); the full-or-partial decision of a tile is the
    load's, at run time. A load through shared memory (``--io
    warp_transpose`` or ``transpose``) is called with ``auto_sync=False``:
    the reduce's barriers already separate the tiles, as in the CUB kernel.
    With ``--loop peeled`` the project kernels take the CUB kernel's loop
    instead: full tiles in the loop, the partial tile once after it with
    ``auto_sync=False`` on its reduce (no barrier after the last tile); the
    records then carry ``loop=peeled``.
``cub_cpp``
    Hand-written CUDA C++ (``bench/cub_reduce.cu``): ``cub::BlockLoad`` of the
    full tiles unguarded in the loop and of the partial last tile, guarded
    with the identity, once after it, ``cub::BlockReduce::Sum`` or
    ``Reduce(items, cuda::maximum<>{})``, one ``__syncthreads()`` a tile,
    ``__launch_bounds__``. Compiled with ``nvcc -O3 -std=c++17 -arch=sm_XY
    -cubin`` (one nvcc job per threads x items, in parallel threads) and
    launched with ``cuda.core`` on the legacy default stream, where
    numba-cuda launches too.

Configurations: threads x items in (128, 4), (256, 4), (256, 8), (512, 4)
(``THREADS_ITEMS``; ``--threads-items`` picks others), the reduce algorithms
``warp_reductions``, ``raking``, ``raking_commutative_only`` and the load
algorithm ``vectorize`` (16-byte vector loads of each thread's items: what a
reduce of 4-byte items wants; ``--io`` adds ``striped``, ``direct``,
``warp_transpose``, ``transpose``).

Building
--------
The project kernels go through ``scan.compile`` in a process pool first,
which fills the library's on-disk cache; this process then compiles each at
its first launch (its first check), from the cached providers. The nvcc units
build at the same time, in threads.

Timing
------
Per (task, shape) every contender is checked (its output poisoned, one
launch, the whole output compared with NumPy on the host), launched
``--warmup`` times, then timed in ``--reps`` rounds; each round launches every
contender once, in an order rotated from round to round, with a CUDA event
between consecutive launches on the legacy default stream. A one-thread
kernel that spins on the GPU's global timer goes first in each round and
holds the stream until the host has enqueued the whole round, so no interval
includes host-side launch overhead (a round whose enqueueing outlasted the
spin is discarded and the spin doubled). Each contender is checked again
after its timed launches; ``ok=1`` only when both checks pass. The result is
the median of a contender's intervals.

Output
------
One ``RESULT`` record per contender (``_common.emit``) with ``bench=reduce``,
``task``, ``dtype``, ``impl``, ``rows``, ``cols``, ``threads``, ``items``,
``io``, ``algo``, ``config`` (``t<threads>_i<items>_<io>_<algo>``),
``median_ms``, ``min_ms``, ``gbps`` (bytes read and written over the median),
``ok``, ``reps``; the project's records also carry ``cub_median_ms``,
``time_ratio`` (project time / CUB time, same configuration) and
``speed_ratio`` (CUB time / project time; the target is ``>= 0.98``).
``ERROR`` and ``MISMATCH`` records name what could not run or was wrong.
A table per (task, shape) is printed at the end, and with ``--out DIR``
written to ``DIR/reduce.md`` and ``DIR/reduce.csv``. bench/run_all.py runs
this script as its ``reduce`` part. The exit status is 1 when a check fails
or a contender cannot be set up.

``python bench/reduce_bench.py --build-only`` compiles the CUB units with
nvcc and the project kernels with ``scan.compile`` for sm_90 with no GPU and
prints registers, shared and local memory of both (read from the cubins).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import functools
import os
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
from _harness import Spinner, time_entries  # noqa: E402
from _harness import load_cubin as _load_cubin  # noqa: E402
from _harness import target_cc as _target_cc  # noqa: E402
from numba import cuda  # noqa: E402

CU_SOURCE = BENCH / "cub_reduce.cu"

#: (rows, cols) of the full benchmark: 512 MiB of 4-byte items each
SHAPES: tuple[tuple[int, int], ...] = ((16384, 8192), (262144, 512))
#: (rows, cols) of ``--quick``: full tiles and a partial one; one or two tiles a row
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 8708), (1024, 516))
#: (threads, items) of the configurations
THREADS_ITEMS: tuple[tuple[int, int], ...] = ((128, 4), (256, 4), (256, 8), (512, 4))
#: the load algorithms both contenders can use (cub_reduce.cu's io:: structs)
LOAD_ALGORITHMS: tuple[str, ...] = ("vectorize", "striped", "direct", "warp_transpose", "transpose")
#: the load algorithms that exchange through shared memory
SHARED_MEMORY_LOADS: tuple[str, ...] = ("warp_transpose", "transpose")
#: the load algorithms run unless ``--io`` says otherwise
DEFAULT_IO: tuple[str, ...] = ("vectorize",)
#: CUB's BlockReduce algorithms, as ``algorithm=`` names them
REDUCE_ALGORITHMS: tuple[str, ...] = ("warp_reductions", "raking", "raking_commutative_only")
#: the project must reach this fraction of CUB's speed in the same configuration
SPEED_TARGET = 0.98
#: float32 sums: ``|out - ref| <= SUM_TOLERANCE * sum(|x|)`` per row
SUM_TOLERANCE = 1e-5
#: seed of the input data
SEED = 20260101


@dataclass(frozen=True)
class Task:
    """One reduction: its name, operator and item type."""

    name: str
    op: str  # "sum" or "max"
    dtype: str  # "float32" or "int32"

    @property
    def np_type(self) -> Any:
        """The NumPy scalar type of the items."""
        return np.dtype(self.dtype).type


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("sum_f32", "sum", "float32"),
        Task("sum_i32", "sum", "int32"),
        Task("max_f32", "max", "float32"),
    )
}


@dataclass(frozen=True)
class Config:
    """One configuration, the same for the project and CUB C++."""

    threads: int
    items: int
    io: str
    algo: str

    @property
    def tile(self) -> int:
        """Items per tile."""
        return self.threads * self.items

    @property
    def label(self) -> str:
        """``t<threads>_i<items>_<io>_<algo>``, the ``config`` of a record."""
        return f"t{self.threads}_i{self.items}_{self.io}_{self.algo}"

    def symbol(self, task: str) -> str:
        """The CUB C++ kernel's name (``REDUCE_KERNEL`` in cub_reduce.cu)."""
        return f"reduce_{task}_{self.label}"


def configs(
    quick: bool = False,
    threads_items: Sequence[tuple[int, int]] | None = None,
    ios: Sequence[str] | None = None,
    algos: Sequence[str] | None = None,
) -> tuple[Config, ...]:
    """The configurations run (the same for the project and CUB C++)."""
    if quick and threads_items is None and ios is None and algos is None:
        return (
            Config(128, 4, "vectorize", "warp_reductions"),
            Config(256, 8, "vectorize", "raking"),
            Config(512, 4, "vectorize", "raking_commutative_only"),
        )
    return tuple(
        Config(threads, items, io, algo)
        for threads, items in (threads_items or THREADS_ITEMS)
        for io in (ios or DEFAULT_IO)
        for algo in (algos or REDUCE_ALGORITHMS)
    )


# ---------------------------------------------------------------------------- the project's kernels


def make_kernel(task: Task, cfg: Config) -> Any:
    """``kernel[rows, cfg.threads](src, out)``: ``out[r]`` is the reduction of ``src[r]``.

    ``src`` is a C-contiguous rows x cols array of the task's dtype, ``out`` a
    rows-long array of it.
    """
    from scan import block

    ITEMS, IO, ALGO = cfg.items, cfg.io, cfg.algo
    T = task.np_type
    # A load through shared memory gets no barrier of its own (auto_sync=False: its
    # own buffer, then): the reduce's barriers separate one tile's exchange from the
    # next's, as the single barrier a tile does in cub_reduce.cu. The other loads use
    # no shared memory and no barrier either way.
    LOAD_SYNC = IO not in SHARED_MEMORY_LOADS

    if _peeled():
        return _peeled_kernel(task, cfg, LOAD_SYNC)

    if task.op == "sum":

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def row_sum(src: Any, out: Any) -> None:
            row = src[cuda.blockIdx.x]
            items = cuda.local.array(ITEMS, T)
            running = T(0)
            for base in block.tiles(row.shape[0], items):
                block.load(row, base, items, oob_default=0, algorithm=IO, auto_sync=LOAD_SYNC)
                tile = block.sum(items, algorithm=ALGO, broadcast=False)  # CUB's: thread 0's
                if cuda.threadIdx.x == 0:
                    running += tile
            if cuda.threadIdx.x == 0:
                out[cuda.blockIdx.x] = running

        return row_sum

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_max(src: Any, out: Any) -> None:
        row = src[cuda.blockIdx.x]
        items = cuda.local.array(ITEMS, T)
        running = T(-np.inf)
        for base in block.tiles(row.shape[0], items):
            block.load(row, base, items, oob_default=-np.inf, algorithm=IO, auto_sync=LOAD_SYNC)
            tile = block.reduce(items, "max", algorithm=ALGO, broadcast=False)  # thread 0's
            if cuda.threadIdx.x == 0:
                running = tile if running < tile else running  # cuda::maximum's rule
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = running

    return row_max


def _peeled() -> bool:
    return os.environ.get(LOOP_ENV, "docs") == "peeled"


#: environment variable choosing the project kernels' loop (``docs`` or ``peeled``),
#: so the compile pool's workers build the same kernels as this process
LOOP_ENV = "REDUCE_BENCH_LOOP"


def _peeled_kernel(task: Task, cfg: Config, load_sync: bool) -> Any:
    """The CUB kernel's loop: full tiles, then the partial one with no barrier after it."""
    from scan import block

    ITEMS, IO, ALGO, LOAD_SYNC = cfg.items, cfg.io, cfg.algo, load_sync
    T = task.np_type
    TILE = cfg.threads * cfg.items
    IDENTITY = T(0) if task.op == "sum" else T(-np.inf)
    SUM = task.op == "sum"

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_peeled(src: Any, out: Any) -> None:
        row = src[cuda.blockIdx.x]
        items = cuda.local.array(ITEMS, T)
        running = IDENTITY
        full = row.shape[0] // TILE * TILE
        for base in range(0, full, TILE):
            block.load(row, base, items, oob_default=IDENTITY, algorithm=IO, auto_sync=LOAD_SYNC)
            if SUM:
                tile = block.sum(items, algorithm=ALGO, broadcast=False)
                if cuda.threadIdx.x == 0:
                    running += tile
            else:
                tile = block.reduce(items, "max", algorithm=ALGO, broadcast=False)
                if cuda.threadIdx.x == 0:
                    running = tile if running < tile else running
        if full < row.shape[0]:
            block.load(row, full, items, oob_default=IDENTITY, algorithm=IO, auto_sync=LOAD_SYNC)
            if SUM:
                tile = block.sum(items, algorithm=ALGO, broadcast=False, auto_sync=False)
                if cuda.threadIdx.x == 0:
                    running += tile
            else:
                tile = block.reduce(items, "max", algorithm=ALGO, broadcast=False, auto_sync=False)
                if cuda.threadIdx.x == 0:
                    running = tile if running < tile else running
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = running

    return row_peeled


@functools.cache
def project_kernel(task: str, cfg: Config) -> Any:
    """The (one per process) project dispatcher of a task and configuration."""
    return make_kernel(TASKS[task], cfg)


def project_signature(task: str) -> tuple[Any, ...]:
    """The Numba argument types the project kernels are launched with."""
    from numba import types

    item = getattr(types, TASKS[task].dtype)
    return (item[:, ::1], item[::1])


def _compile_project_job(
    task: str, cfg: tuple[int, int, str, str], cc: tuple[int, int], out_dir: str
) -> dict[str, Any]:
    """Worker process: ``scan.compile`` one project kernel (fills the on-disk cache)."""
    import scan

    config = Config(*cfg)
    started = time.perf_counter()
    cubin = scan.compile(
        project_kernel(task, config), project_signature(task), cc=cc, block=config.threads
    )
    path = Path(out_dir) / f"project_{config.symbol(task)}.cubin"
    path.write_bytes(bytes(cubin))  # type: ignore[arg-type]
    return {"cubin": str(path), "seconds": time.perf_counter() - started}


@dataclass
class ProjectBuild:
    """What the process pool did for one project kernel."""

    ok: bool
    message: str = ""
    cubin: str = ""
    seconds: float = 0.0


def build_project(
    cfgs: Sequence[Config], tasks: Sequence[str], build_dir: Path, cc: tuple[int, int]
) -> dict[tuple[str, Config], ProjectBuild]:
    """``scan.compile`` every project kernel in a process pool (spawned: no CUDA state)."""
    from _harness import compile_in_processes

    jobs = {
        (task, cfg): (cfg.symbol(task), (task, (cfg.threads, cfg.items, cfg.io, cfg.algo)))
        for task in tasks
        for cfg in cfgs
    }
    done = compile_in_processes(
        "reduce_bench", jobs, _compile_project_job, cc, build_dir / "project"
    )
    results: dict[tuple[str, Config], ProjectBuild] = {}
    for key, r in done.items():
        if isinstance(r, str):
            results[key] = ProjectBuild(False, r)
        else:
            results[key] = ProjectBuild(True, "scan.compile ok", r["cubin"], r["seconds"])
    return results


# ---------------------------------------------------------------------------- CUB C++ units


@dataclass
class CubUnit:
    """One nvcc job: the kernels of one (threads, items)."""

    threads: int
    items: int
    kernels: tuple[tuple[str, Config], ...]
    cubin: Path
    ok: bool = False
    seconds: float = 0.0
    message: str = ""
    usage: dict[str, str] = field(default_factory=dict)


def _cub_units(cfgs: Sequence[Config], tasks: Sequence[str], build_dir: Path) -> list[CubUnit]:
    units: dict[tuple[int, int], list[tuple[str, Config]]] = {}
    for cfg in cfgs:
        for task in tasks:
            units.setdefault((cfg.threads, cfg.items), []).append((task, cfg))
    return [
        CubUnit(t, i, tuple(kernels), build_dir / f"cub_reduce_t{t}_i{i}.cubin")
        for (t, i), kernels in units.items()
    ]


def _build_cub_unit(unit: CubUnit, nvcc: str, cc: tuple[int, int]) -> CubUnit:
    """Compile one unit; skipped when its cubin is newer than its inputs, same command."""
    from _harness import build_nvcc_unit

    lines = [
        "// generated by bench/reduce_bench.py: the kernels of one nvcc job",
        "#define REDUCE_GENERATED_INSTANCES",
        f'#include "{CU_SOURCE}"',
        *(
            f"REDUCE_KERNEL({task}, {c.threads}, {c.items}, {c.io}, {c.algo})"
            for task, c in unit.kernels
        ),
    ]
    built: CubUnit = build_nvcc_unit(unit, nvcc, cc, CU_SOURCE, lines)
    return built


def build_cub(
    cfgs: Sequence[Config], tasks: Sequence[str], build_dir: Path, cc: tuple[int, int]
) -> list[CubUnit]:
    """Compile every CUB unit, in parallel threads; print the wall time."""
    from _harness import build_nvcc_units
    from _toolchain import find_tool

    build_dir.mkdir(parents=True, exist_ok=True)
    units = _cub_units(cfgs, tasks, build_dir)
    nvcc = find_tool("nvcc")
    return build_nvcc_units("reduce_bench", units, lambda u, n: _build_cub_unit(u, n, cc), nvcc, cc)


# ---------------------------------------------------------------------------- data and checks


@dataclass
class Data:
    """One (dtype, shape): the input on the device and the host references of its tasks."""

    dtype: str
    rows: int
    cols: int
    src: Any  # device rows x cols
    refs: dict[str, Any]  # task -> reference (float64 for float sums)
    sum_abs: Any = None  # float32 data: float64 sum of |x| per row

    @classmethod
    def make(cls, dtype: str, rows: int, cols: int, tasks: Sequence[Task]) -> Data:
        """Random input (seeded by dtype and shape), copied to the device; NumPy references."""
        seed = [SEED, rows, cols, 0 if dtype == "float32" else 1]
        rng = np.random.default_rng(seed)
        if dtype == "float32":
            host = rng.standard_normal((rows, cols), dtype=np.float32)
        else:
            info = np.iinfo(np.int32)
            host = rng.integers(info.min, info.max, (rows, cols), dtype=np.int32, endpoint=True)
        refs: dict[str, Any] = {}
        sum_abs = None
        for task in tasks:
            if task.op == "max":
                refs[task.name] = host.max(axis=1)
            elif dtype == "float32":
                refs[task.name] = host.sum(axis=1, dtype=np.float64)
                sum_abs = np.abs(host).sum(axis=1, dtype=np.float64)
            else:  # int32: the exact sum, modulo 2**32 as the int32 adds wrap around
                refs[task.name] = host.sum(axis=1, dtype=np.int64).astype(np.int32)
        return cls(dtype, rows, cols, cuda.to_device(host), refs, sum_abs)

    @property
    def itemsize(self) -> int:
        """Bytes per item."""
        return int(np.dtype(self.dtype).itemsize)

    @property
    def bytes(self) -> int:
        """Bytes read and written by one launch."""
        return self.itemsize * self.rows * (self.cols + 1)

    def bad_rows(self, task: Task, got: Any) -> int:
        """Rows of ``got`` that fail the task's check."""
        ref = self.refs[task.name]
        if task.op == "sum" and self.dtype == "float32":
            err = np.abs(got.astype(np.float64) - ref)
            ok = err <= SUM_TOLERANCE * self.sum_abs  # NaN fails
        else:
            ok = got == ref  # max: exact; int32 sum: exact, wrapped
        return int(np.count_nonzero(~ok))

    def poison(self, task: Task) -> Any:
        """An output no correct kernel leaves: NaN, or the complement of every int32 result."""
        if self.dtype == "float32":
            return np.full(self.rows, np.nan, np.float32)
        return np.invert(self.refs[task.name])


@dataclass
class Group:
    """The contenders of one (task, shape): they share the input and the output."""

    task: Task
    data: Data
    out: Any  # device, rows
    entries: list[Entry] = field(default_factory=list)


@dataclass
class Entry:
    """One contender and what it measured."""

    impl: str  # "project" or "cub_cpp"
    cfg: Config
    launch: Callable[[], None]
    ok: bool = False
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        """Median of the timed intervals (NaN without any)."""
        return _common.median(self.times) if self.times else float("nan")


def _label(group: Group, impl: str, cfg: Config) -> dict[str, object]:
    return {
        "bench": "reduce",
        "task": group.task.name,
        "dtype": group.task.dtype,
        "impl": impl,
        "rows": group.data.rows,
        "cols": group.data.cols,
        "threads": cfg.threads,
        "items": cfg.items,
        "io": cfg.io,
        "algo": cfg.algo,
        "config": cfg.label,
        **(
            {"loop": "peeled"} if impl == "project" and os.environ.get(LOOP_ENV) == "peeled" else {}
        ),
    }


def check(group: Group, entry: Entry, stage: str) -> bool:
    """Poison the output, launch once, compare every row with NumPy; False (with a record)."""
    label = _label(group, entry.impl, entry.cfg)
    try:
        group.out.copy_to_device(group.data.poison(group.task))
        entry.launch()
        cuda.synchronize()
        got = group.out.copy_to_host()
        bad = group.data.bad_rows(group.task, got)
    except Exception as exc:
        _common.emit_error(exc, **label, stage=stage)
        return False
    if bad:
        _common.emit("MISMATCH", **label, stage=stage, bad_rows=bad, of=group.data.rows)
    return bad == 0


# ---------------------------------------------------------------------------- launching


def _simulated() -> bool:
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


def make_project_launch(kernel: Any, group: Group, threads: int) -> Callable[[], None]:
    """``launch()`` of a project kernel (Numba's default stream: the legacy one)."""
    configured = kernel[group.data.rows, threads]
    src, out = group.data.src, group.out

    def launch() -> None:
        configured(src, out)

    return launch


def make_cub_launch(group: Group, cubin: Path, symbol: str, threads: int) -> Callable[[], None]:
    """``launch()`` of one CUB C++ kernel via cuda.core on the legacy default stream."""
    from _harness import cub_runtime as _cub_runtime
    from _harness import device_pointer as _device_pointer

    core, stream = _cub_runtime()
    kernel = _load_cubin(cubin).get_kernel(symbol)
    config = core.LaunchConfig(grid=group.data.rows, block=threads)
    args = (
        np.uint64(_device_pointer(group.data.src)),
        np.uint64(_device_pointer(group.out)),
        np.int32(group.data.cols),
    )
    launch_fn = core.launch

    def launch() -> None:
        launch_fn(stream, config, kernel, *args)

    return launch


def time_group(group: Group, spin: Spinner, reps: int, warmup: int) -> int:
    """Time the group's live contenders in interleaved rounds; return the rounds discarded."""
    return time_entries(group.entries, spin, reps, warmup, lambda e: _label(group, e.impl, e.cfg))


# ---------------------------------------------------------------------------- the run

#: contenders that could not be set up (also printed as ERROR records); main() exits 1 on any
SETUP_ERRORS: list[str] = []


def _setup_group(
    group: Group,
    cfgs: Sequence[Config],
    cubins: dict[tuple[str, Config], CubUnit],
) -> None:
    task = group.task.name
    for cfg in cfgs:
        try:
            kernel = project_kernel(task, cfg)
            group.entries.append(
                Entry("project", cfg, make_project_launch(kernel, group, cfg.threads))
            )
        except Exception as exc:
            _common.emit_error(exc, **_label(group, "project", cfg), stage="setup")
            SETUP_ERRORS.append(f"project {cfg.symbol(task)}: {type(exc).__name__}: {exc}")
        unit = cubins.get((task, cfg))
        if unit is None or not unit.ok:
            message = unit.message[:300] if unit else "no unit"
            _common.emit("ERROR", **_label(group, "cub_cpp", cfg), stage="build", msg=message)
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol(task)}: build: {message}")
            continue
        try:
            launch = make_cub_launch(group, unit.cubin, cfg.symbol(task), cfg.threads)
        except Exception as exc:
            _common.emit_error(exc, **_label(group, "cub_cpp", cfg), stage="load")
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol(task)}: load: {type(exc).__name__}: {exc}")
            continue
        group.entries.append(Entry("cub_cpp", cfg, launch))


def run_group(group: Group, spin: Spinner, reps: int, warmup: int) -> None:
    """Check, time and check again every contender of ``group``; emit one record each."""
    data = group.data
    print(
        f"reduce_bench: {group.task.name} {data.rows}x{data.cols}: {len(group.entries)} contenders",
        flush=True,
    )
    for entry in group.entries:
        entry.ok = check(group, entry, "check before timing")
    discarded = time_group(group, spin, reps, warmup)
    if discarded:
        print(f"reduce_bench: {discarded} rounds discarded (host slower than the spin)")
    for entry in group.entries:
        if entry.ok:
            entry.ok = check(group, entry, "check after timing")
    cub = {e.cfg: e for e in group.entries if e.impl == "cub_cpp"}
    for entry in group.entries:
        ms = entry.median_ms
        fields: dict[str, object] = {
            **_label(group, entry.impl, entry.cfg),
            "median_ms": ms,
            "min_ms": min(entry.times) if entry.times else float("nan"),
            "gbps": data.bytes / (ms * 1e-3) / 1e9 if ms > 0 else float("nan"),
            "ok": entry.ok,
            "reps": len(entry.times),
        }
        rival = cub.get(entry.cfg)
        if entry.impl == "project" and rival is not None:
            both = entry.ok and rival.ok  # no ratio of a wrong result
            fields["cub_median_ms"] = rival.median_ms
            fields["time_ratio"] = ms / rival.median_ms if both else float("nan")
            fields["speed_ratio"] = rival.median_ms / ms if both else float("nan")
        _common.emit("RESULT", **fields)


def run(
    tasks: Sequence[str],
    shapes: Sequence[tuple[int, int]],
    cfgs: Sequence[Config],
    build_dir: Path,
    reps: int,
    warmup: int,
) -> list[Group]:
    """Build everything, then measure every (task, shape); return the groups."""
    cc = _target_cc()
    build_dir.mkdir(parents=True, exist_ok=True)
    # the nvcc units run in threads while the project kernels compile in processes
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, tasks, build_dir, cc)
        try:
            builds = build_project(cfgs, tasks, build_dir, cc)
        except Exception as exc:
            _common.emit_error(exc, bench="reduce", impl="project", stage="scan.compile pool")
            builds = {}
        try:
            units = cub_future.result()
        except Exception as exc:
            _common.emit_error(exc, bench="reduce", impl="cub_cpp", stage="nvcc")
            SETUP_ERRORS.append(f"cub_cpp: nvcc stage: {type(exc).__name__}: {exc}")
            units = []
    for (task, cfg), built in builds.items():
        if not built.ok:
            SETUP_ERRORS.append(f"project {cfg.symbol(task)}: scan.compile: {built.message}")
    cubins = {(task, cfg): u for u in units for task, cfg in u.kernels}
    spin = Spinner(cc)

    groups: list[Group] = []
    for rows, cols in shapes:
        for dtype in dict.fromkeys(TASKS[t].dtype for t in tasks):
            mine = [TASKS[t] for t in tasks if TASKS[t].dtype == dtype]
            started = time.perf_counter()
            data = Data.make(dtype, rows, cols, mine)
            print(
                f"reduce_bench: {dtype} {rows}x{cols}: data and references in "
                f"{time.perf_counter() - started:.1f} s",
                flush=True,
            )
            for task in mine:
                group = Group(task, data, cuda.device_array(rows, task.np_type))
                _setup_group(group, cfgs, cubins)
                run_group(group, spin, reps, warmup)
                groups.append(group)
                group.out = None
            data.src = None  # frees the device copy before the next shape
    return groups


# ---------------------------------------------------------------------------- reports


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def report_lines(groups: Sequence[Group]) -> list[str]:
    """Markdown tables: per (task, shape), every configuration side by side."""
    lines = [
        "# Block reduce: the library against CUB C++ BlockReduce",
        "",
        "Median of the timed launches (CUDA events), same configuration on both sides.",
        "time ratio = project ms / CUB ms; speed = CUB ms / project ms "
        f"(target >= {SPEED_TARGET}).",
        "",
    ]
    worst: list[tuple[float, str]] = []
    for group in groups:
        d = group.data
        lines += [f"## {group.task.name} ({group.task.dtype}), {d.rows} x {d.cols}", ""]
        lines += [
            "| threads x items | io | algo | CUB ms | project ms | time ratio | speed | "
            f">= {SPEED_TARGET} |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        by_cfg: dict[Config, dict[str, Entry]] = {}
        for e in group.entries:
            by_cfg.setdefault(e.cfg, {})[e.impl] = e
        for cfg, pair in by_cfg.items():
            p, c = pair.get("project"), pair.get("cub_cpp")
            p_ms = p.median_ms if p and p.ok else float("nan")
            c_ms = c.median_ms if c and c.ok else float("nan")
            speed = c_ms / p_ms
            verdict = "-" if speed != speed else ("PASS" if speed >= SPEED_TARGET else "FAIL")
            if p and not p.ok:
                verdict = "project WRONG"
            elif c and not c.ok:
                verdict = "CUB WRONG"
            if speed == speed:
                worst.append((speed, f"{group.task.name} {d.rows}x{d.cols} {cfg.label}"))
            lines.append(
                f"| {cfg.threads} x {cfg.items} | {cfg.io} | {cfg.algo} | {_fmt(c_ms, 4)} | "
                f"{_fmt(p_ms, 4)} | {_fmt(p_ms / c_ms)} | {_fmt(speed)} | {verdict} |"
            )
        best = {
            impl: min(
                (e for e in group.entries if e.impl == impl and e.ok and e.times),
                key=lambda e: e.median_ms,
                default=None,
            )
            for impl in ("project", "cub_cpp")
        }
        bp, bc = best["project"], best["cub_cpp"]
        if bp and bc:
            lines += [
                "",
                f"- best project {bp.cfg.label} {bp.median_ms:.4f} ms, best CUB {bc.cfg.label} "
                f"{bc.median_ms:.4f} ms: speed {bc.median_ms / bp.median_ms:.3f}",
            ]
        lines.append("")
    if worst:
        speed, name = min(worst)
        below = sum(1 for s, _ in worst if s < SPEED_TARGET)
        lines.append(
            f"Worst speed ratio {speed:.3f} ({name}); {below} of {len(worst)} configurations "
            f"below {SPEED_TARGET}."
        )
    return lines


def write_csv(groups: Sequence[Group], path: Path) -> None:
    """One row per contender."""
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                *("task", "dtype", "rows", "cols", "impl", "threads", "items", "io", "algo"),
                *("median_ms", "min_ms", "ok", "reps", "time_ratio", "speed_ratio"),
            ]
        )
        for group in groups:
            cub = {e.cfg: e for e in group.entries if e.impl == "cub_cpp"}
            for e in group.entries:
                rival = cub.get(e.cfg) if e.impl == "project" else None
                both = rival is not None and rival.ok and e.ok
                ratio = e.median_ms / rival.median_ms if rival and both else float("nan")
                writer.writerow(
                    [
                        *(group.task.name, group.task.dtype, group.data.rows, group.data.cols),
                        *(e.impl, e.cfg.threads, e.cfg.items, e.cfg.io, e.cfg.algo),
                        f"{e.median_ms:.5f}",
                        f"{min(e.times):.5f}" if e.times else "nan",
                        int(e.ok),
                        len(e.times),
                        _fmt(ratio, 4),
                        _fmt(1.0 / ratio, 4),
                    ]
                )


# ---------------------------------------------------------------------------- build only


def build_only(
    cfgs: Sequence[Config], tasks: Sequence[str], build_dir: Path, cc: tuple[int, int]
) -> int:
    """Compile the CUB units and the project kernels without a GPU; print their resources."""
    from _toolchain import SM90_RESERVED_SHARED, cubin_usage, only_kernel

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, tasks, build_dir, cc)
        project = build_project(cfgs, tasks, build_dir, cc)
        units = cub_future.result()
    cub_usage = {}
    for unit in units:
        if unit.ok:
            cub_usage.update(cubin_usage(unit.cubin.read_bytes()))

    def text(u: Any) -> str:
        if u is None:
            return "-"
        return f"regs={u.regs} smem={max(0, u.shared - SM90_RESERVED_SHARED)} local={u.local}"

    print("registers, own shared memory (bytes), local memory (bytes a thread):")
    for task in tasks:
        for cfg in cfgs:
            built = project.get((task, cfg))
            mine = only_kernel(Path(built.cubin).read_bytes()) if built and built.ok else None
            symbol = cfg.symbol(task)
            print(f"  {symbol}: project {text(mine)} | cub_cpp {text(cub_usage.get(symbol))}")
    failed = sum(not u.ok for u in units) + sum(not p.ok for p in project.values())
    print(
        f"reduce_bench: build-only done in {time.perf_counter() - started:.1f} s wall; "
        f"{failed} failures",
        flush=True,
    )
    return 1 if failed else 0


# ---------------------------------------------------------------------------- command line


def _threads_items(text: str) -> tuple[int, int]:
    try:
        return _common.parse_shape(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected THREADSxITEMS such as 256x4, got {text!r}"
        ) from None


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small shapes, three configurations")
    parser.add_argument(
        "--shape",
        dest="shapes",
        action="append",
        type=_common.parse_shape,
        metavar="ROWSxCOLS",
        help="shape to run (repeatable); default: "
        + ", ".join(f"{r}x{c}" for r, c in SHAPES)
        + " (--quick: "
        + ", ".join(f"{r}x{c}" for r, c in QUICK_SHAPES)
        + ")",
    )
    parser.add_argument("--task", dest="tasks", action="append", choices=list(TASKS))
    parser.add_argument(
        "--threads-items",
        dest="threads_items",
        action="append",
        type=_threads_items,
        metavar="THREADSxITEMS",
        help="block size and items per thread (repeatable); default: "
        + ", ".join(f"{t}x{i}" for t, i in THREADS_ITEMS),
    )
    parser.add_argument(
        "--io",
        dest="ios",
        action="append",
        choices=LOAD_ALGORITHMS,
        help=f"load algorithm (repeatable); default: {', '.join(DEFAULT_IO)}",
    )
    parser.add_argument(
        "--algo",
        dest="algos",
        action="append",
        choices=REDUCE_ALGORITHMS,
        help="reduce algorithm (repeatable); default: all three",
    )
    parser.add_argument("--reps", type=int, default=30, help="timed rounds per (task, shape)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--out", type=Path, help="also write reduce.md and reduce.csv here")
    parser.add_argument("--build-dir", type=Path, help="where cubins go (default: a temp folder)")
    parser.add_argument(
        "--build-only", action="store_true", help="compile for sm_90 only (no GPU needed)"
    )
    parser.add_argument(
        "--loop",
        choices=("docs", "peeled"),
        default="docs",
        help="the project kernels' tile loop: docs/reduce.md's (default) or the CUB kernel's",
    )
    args = parser.parse_args(argv)
    os.environ[LOOP_ENV] = args.loop
    if args.reps < 1 or args.warmup < 0:
        parser.error(f"--reps must be >= 1 and --warmup >= 0, got {args.reps}, {args.warmup}")
    if args.quick:
        args.reps = min(args.reps, 5)
        args.warmup = min(args.warmup, 1)

    tasks = args.tasks or list(TASKS)
    cfgs = configs(args.quick, args.threads_items, args.ios, args.algos)
    shapes = args.shapes or list(QUICK_SHAPES if args.quick else SHAPES)
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="reduce-bench-"))
    if args.build_only:
        return build_only(cfgs, tasks, build_dir, (9, 0))
    if _simulated():
        print("reduce_bench: needs a GPU (not the simulator): the CUB contenders run on it")
        return 1

    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    try:
        name = cuda.get_current_device().name
        _common.emit("DEVICE", name=name.decode() if isinstance(name, bytes) else name)
        groups = run(tasks, shapes, cfgs, build_dir, args.reps, args.warmup)
    except Exception:
        traceback.print_exc()
        return 1
    lines = report_lines(groups)
    print("\n".join(lines), flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "reduce.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        write_csv(groups, args.out / "reduce.csv")
    from _harness import run_outcome

    return run_outcome("reduce_bench", [e for g in groups for e in g.entries], SETUP_ERRORS)


if __name__ == "__main__":
    sys.exit(main())
