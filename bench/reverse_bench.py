# SPDX-License-Identifier: Apache-2.0
"""Reverse row scans: the library's ``reverse=True`` against CUB C++ and Triton.

One thread block (or Triton program) per row walks its row from its end, tile
by tile, the tiles aligned at the row's start (the partial tile first). Two
tasks, each over the shapes 8192 x 65536 and 262144 x 2048 (rows x cols):

``suffix_i32``
    int32 suffix sums ``out[t] = src[t] + ... + src[n-1]`` of data uniform in
    [-1000, 1000] (the running sums stay in int32 range only by chance; they
    wrap as the int32 adds do). Checked for exact equality with NumPy's
    ``cumsum`` of the reversed rows (int32, wrapping). 8 bytes an element.
``recurrence``
    The backward recurrence ``h[t] = g[t] + a[t+1] * h[t+1]`` (``h[n] = 0``)
    of docs/reverse.md over two float32 arrays ``a`` (uniform in [0.9, 1))
    and ``g`` (standard normal), float32 output ``h``. Checked against a
    float64 NumPy loop: every ``|h - ref|`` within ``1e-4 * max|ref|`` of its
    row (the tolerance of docs/records.md). 12 bytes an element.

Contenders
----------
``project``
    The library, the two programs of docs/reverse.md generalised over threads
    x items: ``block.load`` (``oob_default=`` the identity), the reverse scan
    (``block.inclusive_sum(..., reverse=True)`` with a ``@statefn.stateful``
    int32 suffix callback; ``block.inclusive_scan(..., scan_op=then,
    reverse=True)`` over (c, g) float32 records with the composing callback,
    c loaded from ``a[row, 1:]`` with ``oob_default=1.0``), ``block.store``.
    Plain ``@cuda.jit``; ``algorithm=`` of the scan ``raking`` or
    ``warp_scans`` (as CUB), or ``default``: no ``algorithm=`` anywhere, the
    library's defaults. The tile I/O is the library's default unless
    ``--io`` names one.
``cub_cpp``
    Hand-written CUDA C++ (``bench/cub_reverse.cu``): each thread loads its
    mirrored chunk of the tile with 16-byte loads and reverses it in
    registers, CUB's forward ``BlockScan::InclusiveSum`` / ``InclusiveScan``
    with a stateful suffix functor, the full tiles unguarded, the partial
    tile once. Compiled with ``nvcc -O3 -std=c++17 -arch=sm_XY -cubin`` (one
    job per threads x items, in parallel) and launched with ``cuda.core``.
``triton``
    ``tl.associative_scan(..., reverse=True)`` (``bench/_triton_reverse.py``),
    and the same kernel loading each tile at reversed offsets and scanning
    forward (``flip``), over BLOCK x num_warps x num_stages as
    bench/records_bench.py tunes. Present only where triton and torch import
    (otherwise one line says why). A Triton variant whose results are wrong
    is reported (``TRITON_WRONG``, ``ok=0``) and left out of the best; it does not
    fail the run (triton-lang/triton#4362: ``reverse=True`` with an operator
    that is not commutative).

Configurations: threads x items in (128, 8), (256, 4), (256, 8), (512, 4).

Timing
------
Per (task, shape), every contender is checked (output poisoned, one launch,
compared on the device with the NumPy reference copied there once), launched
``--warmup`` times, then timed in ``--reps`` rounds: each round launches every
contender once, in an order rotated from round to round, CUDA events between
consecutive launches on the legacy default stream, behind a spinning kernel
that holds the stream until the round is enqueued (bench/reduce_bench.py's
scheme). Checked again after timing; the result is the median.

Output
------
``RESULT`` records (``bench=reverse``, ``task``, ``dtype``, ``impl``,
``rows``, ``cols``, ``config``, ``threads``, ``items``, ``algo``, ``io``,
``block``, ``warps``, ``stages``, ``variant``, ``median_ms``, ``min_ms``,
``gbps``, ``ok``, ``reps``); the project's also ``cub_median_ms`` and
``speed_ratio`` (CUB ms / project ms, same threads x items x algo),
``vs_best_cub`` and ``vs_best_triton`` (best ms / project ms of the task and
shape). A table per (task, shape) is printed and, with ``--out DIR``, written
to ``DIR/reverse.md`` and ``DIR/reverse.csv``. Exit status 1 when a project
or CUB check fails or a contender cannot be set up.

``--build-only`` compiles the CUB units with nvcc and the project kernels with
``scan.compile`` for sm_90, without a GPU, and prints their resources.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import functools
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import _common  # noqa: E402
import numpy as np  # noqa: E402
from _harness import CubUnit, Entry, Group, best_entry, count_bad_exact, poison_int  # noqa: E402
from _report import fmt  # noqa: E402
from numba import cuda  # noqa: E402

import statefn  # noqa: E402

CU_SOURCE = BENCH / "cub_reverse.cu"

TASKS: tuple[str, ...] = ("suffix_i32", "recurrence")
DTYPES: dict[str, str] = {"suffix_i32": "int32", "recurrence": "float32"}
#: bytes read and written per element
BYTES_PER_ELEMENT: dict[str, int] = {"suffix_i32": 8, "recurrence": 12}
SHAPES: tuple[tuple[int, int], ...] = ((8192, 65536), (262144, 2048))
#: ``--quick``: full tiles and a partial one; rows shorter than one tile
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 8708), (1024, 516))
THREADS_ITEMS: tuple[tuple[int, int], ...] = ((128, 8), (256, 4), (256, 8), (512, 4))
#: ``default``: no ``algorithm=`` (project only)
SCAN_ALGORITHMS: tuple[str, ...] = ("raking", "warp_scans", "default")
CUB_ALGORITHMS: tuple[str, ...] = ("raking", "warp_scans")
TILE_IO: tuple[str, ...] = ("default", "vectorize", "warp_transpose", "direct")
RECURRENCE_TOLERANCE = 1e-4
SEED = 20260301


@dataclass(frozen=True)
class Config:
    """One project configuration (CUB's when ``algo`` is not ``default``)."""

    threads: int
    items: int
    algo: str
    io: str = "default"

    @property
    def label(self) -> str:
        """``t<threads>_i<items>_<algo>[_<io>]``."""
        tail = "" if self.io == "default" else f"_{self.io}"
        return f"t{self.threads}_i{self.items}_{self.algo}{tail}"

    def symbol(self, task: str) -> str:
        """The CUB C++ kernel's name (cub_reverse.cu)."""
        return f"reverse_{task}_t{self.threads}_i{self.items}_{self.algo}"


def configs(
    quick: bool = False,
    threads_items: Sequence[tuple[int, int]] | None = None,
    ios: Sequence[str] | None = None,
) -> tuple[Config, ...]:
    """The project configurations."""
    if quick and threads_items is None and ios is None:
        return (Config(128, 8, "warp_scans"), Config(256, 8, "raking"), Config(512, 4, "default"))
    return tuple(
        Config(t, i, algo, io)
        for t, i in (threads_items or THREADS_ITEMS)
        for algo in SCAN_ALGORITHMS
        for io in (ios or ("default",))
    )


def cub_configs(cfgs: Sequence[Config]) -> tuple[Config, ...]:
    """The CUB configurations: every threads x items of ``cfgs``, both algorithms."""
    pairs = dict.fromkeys((c.threads, c.items) for c in cfgs)
    return tuple(Config(t, i, a) for t, i in pairs for a in CUB_ALGORITHMS)


@dataclass(frozen=True)
class TritonConfig:
    """One Triton configuration."""

    block: int
    warps: int
    stages: int
    flip: bool

    @property
    def label(self) -> str:
        """``BLOCK<b>_w<warps>_s<stages>_<reverse|flip>``."""
        variant = "flip" if self.flip else "reverse"
        return f"BLOCK{self.block}_w{self.warps}_s{self.stages}_{variant}"


def triton_configs(quick: bool, cols: int) -> tuple[TritonConfig, ...]:
    """BLOCK 256..4096 x num_warps 2..16 x num_stages 1..3 x both variants, pruned as
    bench/records_bench.py prunes: 2 to 16 elements a thread, no BLOCK longer than the
    row but the smallest."""
    if quick:
        picks = ((256, 2, 1), (1024, 4, 2), (2048, 8, 3))
        return tuple(
            TritonConfig(b, w, s, f) for b, w, s in picks if b <= max(cols, 256) for f in (0, 1)
        )
    out = []
    for block in (256, 512, 1024, 2048, 4096):
        if block > cols and block != 256:
            continue
        for warps in (2, 4, 8, 16):
            if not 2 <= block // (32 * warps) <= 16:
                continue
            for stages in (1, 2, 3):
                out += [TritonConfig(block, warps, stages, flip) for flip in (False, True)]
    return tuple(out)


# ---------------------------------------------------------------------------- the project's kernels


def _suffix_total_op(state: Any, block_aggregate: Any) -> Any:
    suffix = state[0]  # the int32 sum of every tile to the right
    state[0] = suffix + block_aggregate
    return suffix


suffix_total = statefn.stateful(np.int32, name="reverse_bench_suffix_total")(_suffix_total_op)

#: item t is the map h -> c * h + g, (c, g) = (a[t+1], g[t])
PAIR = np.dtype([("c", np.float32), ("g", np.float32)], align=True)


def then(x: Any, y: Any) -> Any:
    """``x`` after ``y``: h -> x.c * (y.c * h + y.g) + x.g (docs/reverse.md)."""
    return (x[0] * y[0], x[0] * y[1] + x[1])


def _carried_op(state: Any, block_aggregate: Any) -> Any:
    after = (state[0].c, state[0].g)  # every tile to the right, composed
    state[0].c = block_aggregate.c * after[0]
    state[0].g = block_aggregate.c * after[1] + block_aggregate.g
    return after


carried = statefn.stateful(PAIR, name="reverse_bench_carried")(_carried_op)


def make_kernel(task: str, cfg: Config) -> Any:
    """The project kernel: ``[rows, threads](src, out)`` or ``[rows, threads](a, g, h)``."""
    from scan import block

    ITEMS = cfg.items
    ALGO = None if cfg.algo == "default" else cfg.algo
    IO = None if cfg.io == "default" else cfg.io

    if task == "suffix_i32":

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def row_suffix_sums(src: Any, dst: Any) -> None:
            row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
            state = cuda.local.array(1, np.int32)
            state[0] = 0
            items = cuda.local.array(ITEMS, np.int32)
            tile = block.tile_size(items)
            for base in range((row.shape[0] - 1) // tile * tile, -1, -tile):
                block.load(row, base, items, oob_default=0, algorithm=IO)
                block.inclusive_sum(
                    items,
                    prefix_op=suffix_total,
                    prefix_state=state,
                    reverse=True,
                    algorithm=ALGO,
                )
                block.store(out, base, items, algorithm=IO)

        return row_suffix_sums

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def backward(a: Any, g: Any, h: Any) -> None:
        row = cuda.blockIdx.x
        a_next = a[row, 1:]  # c[t] = a[t+1]
        g_row, h_row = g[row], h[row]
        state = cuda.local.array(1, PAIR)
        state[0].c = 1.0  # the identity map: nothing to the right yet
        state[0].g = 0.0
        cv = cuda.local.array(ITEMS, np.float32)
        gv = cuda.local.array(ITEMS, np.float32)
        items = cuda.local.array(ITEMS, PAIR)
        tile = block.tile_size(items)
        for base in range((g_row.shape[0] - 1) // tile * tile, -1, -tile):
            # past the row: the identity map (1, 0); c[n-1] = 1 multiplies h[n] = 0
            block.load(a_next, base, cv, oob_default=1.0, algorithm=IO)
            block.load(g_row, base, gv, oob_default=0.0, algorithm=IO)
            for i in range(ITEMS):
                items[i].c = cv[i]
                items[i].g = gv[i]
            block.inclusive_scan(
                items,
                scan_op=then,
                prefix_op=carried,
                prefix_state=state,
                reverse=True,
                algorithm=ALGO,
            )
            for i in range(ITEMS):
                gv[i] = items[i].g  # the composed map applied to h[n] = 0
            block.store(h_row, base, gv, algorithm=IO)

    return backward


@functools.cache
def project_kernel(task: str, cfg: Config) -> Any:
    """The (one per process) dispatcher of a task and configuration."""
    return make_kernel(task, cfg)


def project_signature(task: str) -> tuple[Any, ...]:
    """The Numba argument types the project kernels are launched with."""
    from numba import types

    if task == "suffix_i32":
        return (types.int32[:, ::1], types.int32[:, ::1])
    return (types.float32[:, ::1],) * 3


def _compile_project_job(
    task: str, cfg: tuple[int, int, str, str], cc: tuple[int, int], out_dir: str
) -> dict[str, Any]:
    import scan

    config = Config(*cfg)
    started = time.perf_counter()
    cubin = scan.compile(
        project_kernel(task, config), project_signature(task), cc=cc, block=config.threads
    )
    path = Path(out_dir) / f"project_{task}_{config.label}.cubin"
    path.write_bytes(bytes(cubin))  # type: ignore[arg-type]
    return {"cubin": str(path), "seconds": time.perf_counter() - started}


def build_project(
    cfgs: Sequence[Config], tasks: Sequence[str], build_dir: Path, cc: tuple[int, int]
) -> dict[tuple[str, Config], tuple[bool, str]]:
    """``scan.compile`` every project kernel in a spawned process pool (fills the cache).

    Returns ``{(task, cfg): (ok, cubin path or the error)}``.
    """
    from _harness import compile_in_processes

    jobs = {
        (task, cfg): (f"{task} {cfg.label}", (task, (cfg.threads, cfg.items, cfg.algo, cfg.io)))
        for task in tasks
        for cfg in cfgs
    }
    done = compile_in_processes(
        "reverse_bench", jobs, _compile_project_job, cc, build_dir / "project"
    )
    return {k: (False, r) if isinstance(r, str) else (True, r["cubin"]) for k, r in done.items()}


# ---------------------------------------------------------------------------- CUB C++ units


def _unit_line(task: str, cfg: Config) -> str:
    macro = "REVERSE_SUFFIX_KERNEL" if task == "suffix_i32" else "REVERSE_RECURRENCE_KERNEL"
    return f"{macro}({cfg.threads}, {cfg.items}, {cfg.algo})"


def _build_cub_unit(unit: CubUnit, nvcc: str, cc: tuple[int, int]) -> CubUnit:
    """Compile one unit; skipped when its cubin is newer than its inputs, same command."""
    from _harness import build_nvcc_unit

    lines = [
        "// generated by bench/reverse_bench.py: the kernels of one nvcc job",
        "#define REVERSE_GENERATED_INSTANCES",
        f'#include "{CU_SOURCE}"',
        *(_unit_line(task, cfg) for task, cfg in unit.kernels),
    ]
    built: CubUnit = build_nvcc_unit(unit, nvcc, cc, CU_SOURCE, lines)
    return built


def build_cub(
    cfgs: Sequence[Config], tasks: Sequence[str], build_dir: Path, cc: tuple[int, int]
) -> list[CubUnit]:
    """Compile every CUB unit in parallel threads."""
    from _harness import build_nvcc_units
    from _toolchain import find_tool

    build_dir.mkdir(parents=True, exist_ok=True)
    grouped: dict[tuple[int, int], list[tuple[str, Config]]] = {}
    for cfg in cub_configs(cfgs):
        for task in tasks:
            grouped.setdefault((cfg.threads, cfg.items), []).append((task, cfg))
    units = [
        CubUnit(t, i, tuple(k), build_dir / f"cub_reverse_t{t}_i{i}.cubin")
        for (t, i), k in grouped.items()
    ]
    nvcc = find_tool("nvcc")
    return build_nvcc_units(
        "reverse_bench", units, lambda u, n: _build_cub_unit(u, n, cc), nvcc, cc
    )


# ---------------------------------------------------------------------------- data and checks


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _count_bad_close(out: Any, ref: Any, bound: Any, bad: Any) -> None:
    row = cuda.blockIdx.x
    n = 0
    for t in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
        err = abs(np.float64(out[row, t]) - ref[row, t])
        if not err <= bound[row]:  # NaN fails
            n += 1
    if n:
        cuda.atomic.add(bad, 0, n)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _poison_nan(out: Any) -> None:
    row = cuda.blockIdx.x
    for t in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
        out[row, t] = np.float32(np.nan)


def _reference_recurrence(a: Any, g: Any) -> Any:
    """float64 ``h[t] = g[t] + a[t+1] * h[t+1]`` per row (compiled for the CPU, rows in parallel).

    The same loop in NumPy, vectorised over rows, took 39 s for 8192 x 65536
    on the GPU machine's host; compiled, well under a second plus its compile.
    """
    from numba import njit, prange

    @njit(parallel=True)  # type: ignore[untyped-decorator, unused-ignore]
    def backward(a: Any, g: Any, h: Any) -> None:  # pragma: no cover - compiled
        rows, cols = g.shape
        for r in prange(rows):
            acc = np.float64(g[r, cols - 1])
            h[r, cols - 1] = acc
            for t in range(cols - 2, -1, -1):
                acc = np.float64(g[r, t]) + np.float64(a[r, t + 1]) * acc
                h[r, t] = acc

    ref = np.empty(g.shape, np.float64)
    backward(np.ascontiguousarray(a), np.ascontiguousarray(g), ref)
    return ref


@dataclass
class Data:
    """One (task, shape): inputs, output and NumPy reference on the device."""

    task: str
    rows: int
    cols: int
    inputs: tuple[Any, ...]
    out: Any
    ref: Any
    bound: Any = None  # recurrence: the tolerance of each row
    torch_views: tuple[Any, ...] | None = None

    @classmethod
    def make(cls, task: str, rows: int, cols: int) -> Data:
        """Random input (seeded by task and shape), NumPy's reference, on the device."""
        rng = np.random.default_rng([SEED, rows, cols, TASKS.index(task)])
        if task == "suffix_i32":
            src = rng.integers(-1000, 1000, (rows, cols), dtype=np.int32, endpoint=True)
            ref = np.cumsum(src[:, ::-1], axis=1, dtype=np.int32)[:, ::-1]
            return cls(
                task,
                rows,
                cols,
                (cuda.to_device(src),),
                cuda.device_array((rows, cols), np.int32),
                cuda.to_device(np.ascontiguousarray(ref)),
            )
        a = rng.uniform(0.9, 1.0, (rows, cols)).astype(np.float32)
        g = rng.standard_normal((rows, cols), dtype=np.float32)
        ref = _reference_recurrence(a, g)
        bound = RECURRENCE_TOLERANCE * np.abs(ref).max(axis=1)
        return cls(
            task,
            rows,
            cols,
            (cuda.to_device(a), cuda.to_device(g)),
            cuda.device_array((rows, cols), np.float32),
            cuda.to_device(ref),
            cuda.to_device(bound),
        )

    @property
    def bytes(self) -> int:
        """Bytes read and written by one launch."""
        return BYTES_PER_ELEMENT[self.task] * self.rows * self.cols

    def poison(self) -> None:
        """An output no correct kernel leaves: NaN, or the complement of every result."""
        if self.task == "suffix_i32":
            poison_int[self.rows, 256](self.out, self.ref)
        else:
            _poison_nan[self.rows, 256](self.out)

    def bad(self) -> int:
        """Elements of the output that fail the task's check."""
        count = cuda.to_device(np.zeros(1, np.int64))
        if self.task == "suffix_i32":
            count_bad_exact[self.rows, 256](self.out, self.ref, count)
        else:
            _count_bad_close[self.rows, 256](self.out, self.ref, self.bound, count)
        return int(count.copy_to_host()[0])

    def torch(self) -> tuple[Any, ...]:
        """Inputs and output as torch tensors on the same memory."""
        if self.torch_views is None:
            import torch  # type: ignore[import-not-found, unused-ignore]

            self.torch_views = tuple(
                torch.as_tensor(x, device="cuda") for x in (*self.inputs, self.out)
            )
        return self.torch_views


def _label(data: Data, entry: Entry) -> dict[str, object]:
    return {
        "bench": "reverse",
        "task": data.task,
        "dtype": DTYPES[data.task],
        "impl": entry.impl,
        "rows": data.rows,
        "cols": data.cols,
        "config": entry.config,
        **entry.fields,
    }


def check(data: Data, entry: Entry, stage: str) -> bool:
    """Poison the output, launch once, compare with the reference; False (with a record)."""
    label = _label(data, entry)
    try:
        data.poison()
        cuda.synchronize()
        entry.launch()
        cuda.synchronize()
        bad = data.bad()
    except Exception as exc:
        _common.emit_error(exc, **label, stage=stage)
        return False
    if bad:
        # a wrong Triton variant is reported under its own tag: it does not fail the run
        tag = "TRITON_WRONG" if entry.impl == "triton" else "MISMATCH"
        _common.emit(tag, **label, stage=stage, bad_elements=bad, of=data.rows * data.cols)
    return bad == 0


# ---------------------------------------------------------------------------- launches


def make_project_launch(kernel: Any, data: Data, threads: int) -> Callable[[], None]:
    """``launch()`` of a project kernel (Numba's default stream: the legacy one)."""
    configured = kernel[data.rows, threads]
    args = (*data.inputs, data.out)

    def launch() -> None:
        configured(*args)

    return launch


def make_cub_launch(data: Data, cubin: Path, symbol: str, threads: int) -> Callable[[], None]:
    """``launch()`` of one CUB C++ kernel via cuda.core on the legacy default stream."""
    from _harness import cub_runtime as _cub_runtime
    from _harness import device_pointer as _device_pointer
    from _harness import load_cubin as _load_cubin

    core, stream = _cub_runtime()
    kernel = _load_cubin(cubin).get_kernel(symbol)
    config = core.LaunchConfig(grid=data.rows, block=threads)
    args = (
        *(np.uint64(_device_pointer(x)) for x in (*data.inputs, data.out)),
        np.int32(data.cols),
    )
    launch_fn = core.launch

    def launch() -> None:
        launch_fn(stream, config, kernel, *args)

    return launch


def triton_status() -> str:
    """``""`` when triton and torch import here, else why not."""
    try:
        import _triton_reverse  # noqa: F401
        import torch  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except Exception as exc:
        return f"triton unavailable: {type(exc).__name__}: {exc}".replace("\n", " | ")[:300]
    return ""


def make_triton_launch(data: Data, cfg: TritonConfig) -> Callable[[], None]:
    """``launch()`` of the Triton kernel (torch's current stream: the legacy default one)."""
    import _triton_reverse

    kernel = _triton_reverse.suffix_sum if data.task == "suffix_i32" else _triton_reverse.recurrence
    args = (*data.torch(), data.cols)
    grid = (data.rows,)
    meta = {"BLOCK": cfg.block, "FLIP": cfg.flip, "num_warps": cfg.warps, "num_stages": cfg.stages}

    def launch() -> None:
        kernel[grid](*args, **meta)

    return launch


# ---------------------------------------------------------------------------- timing


def time_group(group: Group, spin: Any, reps: int, warmup: int) -> int:
    """Time the live contenders in interleaved rounds; return the rounds discarded."""
    from _harness import time_entries

    return time_entries(group.entries, spin, reps, warmup, lambda e: _label(group.data, e))


# ---------------------------------------------------------------------------- the run
#: contenders that could not be set up (also ERROR records); main() exits 1 on any
SETUP_ERRORS: list[str] = []


def _setup(
    group: Group,
    cfgs: Sequence[Config],
    cubins: dict[tuple[str, Config], CubUnit],
    quick: bool,
    no_triton: str,
) -> None:
    data, task = group.data, group.data.task
    for cfg in cfgs:
        fields = {"threads": cfg.threads, "items": cfg.items, "algo": cfg.algo, "io": cfg.io}
        try:
            kernel = project_kernel(task, cfg)
            launch = make_project_launch(kernel, data, cfg.threads)
            group.entries.append(Entry("project", cfg.label, launch, fields, cfg))
        except Exception as exc:
            _common.emit_error(exc, bench="reverse", task=task, impl="project", config=cfg.label)
            SETUP_ERRORS.append(f"project {task} {cfg.label}: {type(exc).__name__}: {exc}")
    for cfg in cub_configs(cfgs):
        fields = {"threads": cfg.threads, "items": cfg.items, "algo": cfg.algo, "io": "reversed"}
        unit = cubins.get((task, cfg))
        symbol = cfg.symbol(task)
        if unit is None or not unit.ok:
            message = unit.message[:300] if unit else "no unit"
            label = {"bench": "reverse", "task": task, "impl": "cub_cpp", "config": cfg.label}
            _common.emit("ERROR", **label, stage="build", msg=message)
            SETUP_ERRORS.append(f"cub_cpp {symbol}: build: {message}")
            continue
        try:
            launch = make_cub_launch(data, unit.cubin, symbol, cfg.threads)
        except Exception as exc:
            _common.emit_error(exc, bench="reverse", task=task, impl="cub_cpp", config=cfg.label)
            SETUP_ERRORS.append(f"cub_cpp {symbol}: load: {type(exc).__name__}: {exc}")
            continue
        group.entries.append(Entry("cub_cpp", cfg.label, launch, fields, cfg))
    if no_triton:
        return
    for tcfg in triton_configs(quick, data.cols):
        fields = {
            "block": tcfg.block,
            "warps": tcfg.warps,
            "stages": tcfg.stages,
            "variant": "flip" if tcfg.flip else "reverse",
        }
        group.entries.append(Entry("triton", tcfg.label, make_triton_launch(data, tcfg), fields))


def run_group(group: Group, spin: Any, reps: int, warmup: int) -> None:
    """Check, time and check again every contender; emit one record each."""
    data = group.data
    print(
        f"reverse_bench: {data.task} {data.rows}x{data.cols}: {len(group.entries)} contenders",
        flush=True,
    )
    started = time.perf_counter()
    for entry in group.entries:  # the first Triton launch of a configuration compiles it
        entry.ok = check(data, entry, "check before timing")
    print(f"reverse_bench: first checks in {time.perf_counter() - started:.1f} s", flush=True)
    discarded = time_group(group, spin, reps, warmup)
    if discarded:
        print(f"reverse_bench: {discarded} rounds discarded (host slower than the spin)")
    for entry in group.entries:
        if entry.ok:
            entry.ok = check(data, entry, "check after timing")
    best = {impl: best_entry(group, impl) for impl in ("cub_cpp", "triton")}
    cub = {e.cfg: e for e in group.entries if e.impl == "cub_cpp"}
    for entry in group.entries:
        ms = entry.median_ms
        fields: dict[str, object] = {
            **_label(data, entry),
            "median_ms": ms,
            "min_ms": min(entry.times) if entry.times else float("nan"),
            "gbps": data.bytes / (ms * 1e-3) / 1e9 if ms > 0 else float("nan"),
            "ok": entry.ok,
            "reps": len(entry.times),
        }
        if entry.impl == "project" and entry.cfg is not None:
            rival = cub.get(entry.cfg)
            if rival is not None:
                both = entry.ok and rival.ok
                fields["cub_median_ms"] = rival.median_ms
                fields["speed_ratio"] = rival.median_ms / ms if both else float("nan")
            for impl, b in best.items():
                key = "vs_best_cub" if impl == "cub_cpp" else "vs_best_triton"
                fields[key] = b.median_ms / ms if b and entry.ok else float("nan")
        _common.emit("RESULT", **fields)


def run(
    tasks: Sequence[str],
    shapes: Sequence[tuple[int, int]],
    cfgs: Sequence[Config],
    build_dir: Path,
    reps: int,
    warmup: int,
    quick: bool,
) -> list[Group]:
    """Build everything, then measure every (task, shape)."""
    from _harness import Spinner
    from _harness import target_cc as _target_cc

    cc = _target_cc()
    build_dir.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, tasks, build_dir, cc)
        try:
            builds = build_project(cfgs, tasks, build_dir, cc)
        except Exception as exc:
            _common.emit_error(exc, bench="reverse", impl="project", stage="scan.compile pool")
            builds = {}
        try:
            units = cub_future.result()
        except Exception as exc:
            _common.emit_error(exc, bench="reverse", impl="cub_cpp", stage="nvcc")
            SETUP_ERRORS.append(f"cub_cpp: nvcc stage: {type(exc).__name__}: {exc}")
            units = []
    for (task, cfg), (ok, message) in builds.items():
        if not ok:
            SETUP_ERRORS.append(f"project {task} {cfg.label}: scan.compile: {message}")
    cubins = {(task, cfg): u for u in units for task, cfg in u.kernels}
    no_triton = triton_status()
    if no_triton:
        print(f"reverse_bench: no triton contenders: {no_triton}", flush=True)
    spin = Spinner(cc)
    groups: list[Group] = []
    for task in tasks:
        for rows, cols in shapes:
            started = time.perf_counter()
            data = Data.make(task, rows, cols)
            print(
                f"reverse_bench: {task} {rows}x{cols}: data and NumPy reference in "
                f"{time.perf_counter() - started:.1f} s",
                flush=True,
            )
            group = Group(data)
            _setup(group, cfgs, cubins, quick, no_triton)
            run_group(group, spin, reps, warmup)
            groups.append(group)
            data.inputs, data.out, data.ref, data.bound, data.torch_views = (
                (),
                None,
                None,
                None,
                None,
            )
            if not no_triton:
                import torch  # type: ignore[import-not-found, unused-ignore]

                torch.cuda.empty_cache()
    return groups


# ---------------------------------------------------------------------------- reports


def report_lines(groups: Sequence[Group]) -> list[str]:
    """Markdown tables: per (task, shape), CUB and the project side by side, then the bests."""
    lines = [
        "# Reverse row scans: the library against CUB C++ and Triton",
        "",
        "Median of the timed launches (CUDA events). speed = other ms / project ms.",
        "",
    ]
    for group in groups:
        d = group.data
        lines += [f"## {d.task} ({DTYPES[d.task]}), {d.rows} x {d.cols}", ""]
        lines += [
            "| threads x items | algo | io | CUB ms | project ms | speed vs CUB (same config) |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        cub = {e.cfg: e for e in group.entries if e.impl == "cub_cpp"}
        for e in group.entries:
            if e.impl != "project" or e.cfg is None:
                continue
            c = cub.get(e.cfg)
            p_ms = e.median_ms if e.ok else float("nan")
            c_ms = c.median_ms if c and c.ok else float("nan")
            note = "" if e.ok else " (project WRONG)"
            lines.append(
                f"| {e.cfg.threads} x {e.cfg.items} | {e.cfg.algo} | {e.cfg.io} | "
                f"{fmt(c_ms, 4)} | {fmt(p_ms, 4)} | {fmt(c_ms / p_ms)}{note} |"
            )
        wrong = [e for e in group.entries if not e.ok]
        best = {impl: best_entry(group, impl) for impl in ("project", "cub_cpp", "triton")}
        lines.append("")
        for impl, b in best.items():
            text = f"{b.config} {b.median_ms:.4f} ms" if b else "none"
            lines.append(f"- best {impl}: {text}")
        bp = best["project"]
        for impl in ("cub_cpp", "triton"):
            b = best[impl]
            if bp and b:
                lines.append(
                    f"- best project vs best {impl}: speed {b.median_ms / bp.median_ms:.3f}"
                )
        if wrong:
            lines.append("- wrong or not run: " + ", ".join(f"{e.impl} {e.config}" for e in wrong))
        lines.append("")
    return lines


def write_csv(groups: Sequence[Group], path: Path) -> None:
    """One row per contender."""
    columns = ["task", "dtype", "rows", "cols", "impl", "config", "median_ms", "min_ms", "ok"]
    columns += ["reps", "speed_vs_cub_same_config", "vs_best_cub", "vs_best_triton"]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for group in groups:
            d = group.data
            cub = {e.cfg: e for e in group.entries if e.impl == "cub_cpp"}
            bc, bt = best_entry(group, "cub_cpp"), best_entry(group, "triton")
            for e in group.entries:
                ms = e.median_ms
                same = bests = ("", "", "")
                if e.impl == "project" and e.ok:
                    c = cub.get(e.cfg)
                    same = (fmt(c.median_ms / ms, 4) if c and c.ok else "-",)
                    bests = tuple(fmt(b.median_ms / ms, 4) if b else "-" for b in (bc, bt))
                writer.writerow(
                    [
                        *(d.task, DTYPES[d.task], d.rows, d.cols, e.impl, e.config),
                        f"{ms:.5f}",
                        f"{min(e.times):.5f}" if e.times else "nan",
                        *(int(e.ok), len(e.times), same[0], *bests[:2]),
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
            ok, where = project.get((task, cfg), (False, "missing"))
            mine = only_kernel(Path(where).read_bytes()) if ok else None
            print(f"  {task} {cfg.label}: project {text(mine)}")
        for cfg in cub_configs(cfgs):
            symbol = cfg.symbol(task)
            print(f"  {symbol}: cub_cpp {text(cub_usage.get(symbol))}")
    failed = sum(not u.ok for u in units) + sum(not ok for ok, _ in project.values())
    print(
        f"reverse_bench: build-only done in {time.perf_counter() - started:.1f} s wall; "
        f"{failed} failures",
        flush=True,
    )
    return 1 if failed else 0


# ---------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small shapes, few configurations")
    parser.add_argument(
        "--shape",
        dest="shapes",
        action="append",
        type=_common.parse_shape,
        metavar="ROWSxCOLS",
        help="shape (repeatable); default: " + ", ".join(f"{r}x{c}" for r, c in SHAPES),
    )
    parser.add_argument("--task", dest="tasks", action="append", choices=TASKS)
    parser.add_argument(
        "--threads-items",
        dest="threads_items",
        action="append",
        type=_common.parse_shape,
        metavar="THREADSxITEMS",
        help="default: " + ", ".join(f"{t}x{i}" for t, i in THREADS_ITEMS),
    )
    parser.add_argument(
        "--io", dest="ios", action="append", choices=TILE_IO, help="project tile I/O (repeatable)"
    )
    parser.add_argument("--reps", type=int, default=30, help="timed rounds per (task, shape)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--out", type=Path, help="also write reverse.md and reverse.csv here")
    parser.add_argument("--build-dir", type=Path, help="where cubins go (default: a temp folder)")
    parser.add_argument(
        "--build-only", action="store_true", help="compile for sm_90 only (no GPU needed)"
    )
    args = parser.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        parser.error(f"--reps must be >= 1 and --warmup >= 0, got {args.reps}, {args.warmup}")
    if args.quick:
        args.reps = min(args.reps, 5)
        args.warmup = min(args.warmup, 1)
    tasks = args.tasks or list(TASKS)
    cfgs = configs(args.quick, args.threads_items, args.ios)
    shapes = args.shapes or list(QUICK_SHAPES if args.quick else SHAPES)
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="reverse-bench-"))
    if args.build_only:
        return build_only(cfgs, tasks, build_dir, (9, 0))
    from numba.core import config as numba_config

    if numba_config.ENABLE_CUDASIM:
        print("reverse_bench: needs a GPU (not the simulator): the CUB contenders run on it")
        return 1
    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    try:
        name = cuda.get_current_device().name
        _common.emit("DEVICE", name=name.decode() if isinstance(name, bytes) else name)
        groups = run(tasks, shapes, cfgs, build_dir, args.reps, args.warmup, args.quick)
    except Exception:
        traceback.print_exc()
        return 1
    lines = report_lines(groups)
    print("\n".join(lines), flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "reverse.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        write_csv(groups, args.out / "reverse.csv")
    entries = [e for g in groups for e in g.entries]
    failed = [e for e in entries if not e.ok and e.impl != "triton"]
    triton_wrong = [e for e in entries if not e.ok and e.impl == "triton"]
    print(
        f"reverse_bench: {len(entries)} contenders, {len(failed)} project/CUB failed, "
        f"{len(triton_wrong)} Triton variants wrong or not run (reported, not failing), "
        f"{len(SETUP_ERRORS)} could not be set up",
        flush=True,
    )
    for line in SETUP_ERRORS:
        print(f"  not set up: {line[:300]}", flush=True)
    return 1 if failed or SETUP_ERRORS or not entries else 0


if __name__ == "__main__":
    sys.exit(main())
