# SPDX-License-Identifier: Apache-2.0
"""Per-warp row scans: ``scan.warp``'s prefix callbacks against CUB C++ ``WarpScan``.

int32 inclusive row prefix sums of data uniform in [-1000, 1000], one row per
logical warp of 32 lanes: warp ``w`` of block ``b`` scans row ``b * warps +
w`` tile by tile (32 lanes x ITEMS items a tile, lane ``l`` holding the tile's
items ``l * ITEMS .. (l + 1) * ITEMS - 1``), the running total carried from tile
to tile. Checked for exact equality with NumPy's ``cumsum`` (int32, wrapping).
8 bytes an element. Shapes (rows x cols): 262144 x 128, 65536 x 512, 16384 x
4096 and 65536 x 500 (a partial last tile in every row).

Contenders
----------
``project``
    ``warp_io`` (the default variant): a plain ``@cuda.jit`` kernel walking
    its warp's row with ``warp.load`` (``oob_default=0``),
    ``warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)``
    with a ``@statefn.stateful`` int32 running total, and ``warp.store``, the
    library's default tile I/O. ``blocked`` (``--variant blocked``): each lane
    loads its ITEMS consecutive items by plain array indexing instead (the
    blocked arrangement), the full tiles unguarded, the partial tile guarded
    once. ``uindex`` (only with ``--variant uindex``): the same kernel indexing
    the rows with unsigned integers, which Numba does not check for
    negative values: no compare and select per access (the price of the plain
    signed indices). ``default``: the program of docs/warp.md as it stands
    (tests/doc_examples/examples/warp.py's ``row_cumsum_per_warp``: ITEMS = 4,
    an int64 running total, every tile guarded), launched with 4 warps a
    block: what a user who copies the docs gets.
``cub_cpp``
    Hand-written CUDA C++ (``bench/cub_warp.cu``): ``cub::WarpLoad``,
    ``cub::ThreadReduce``, ``cub::WarpScan::ExclusiveSum`` of the lane totals
    with the warp aggregate, a sequential scan of each lane's items, the
    running total in a register, ``cub::WarpStore``; the full tiles unguarded,
    the partial tile once. Tile I/O ``direct`` (4-byte accesses, the project's
    pattern), ``vectorize`` (8- and 16-byte accesses) or ``transpose``
    (warp-striped accesses exchanged through shared memory). Compiled with
    ``nvcc -O3 -std=c++17 -arch=sm_XY -cubin`` (one job per ITEMS x warps,
    in parallel) and launched with ``cuda.core``.

Configurations: ITEMS in (1, 2, 4, 8, 16) x warps a block in (2, 4, 8), for
each project variant of ``--variant`` (default ``warp_io``), then ``default``.

Timing
------
bench/reverse_bench.py's scheme: per shape, every contender is checked (output
poisoned, one launch, compared on the device with the NumPy reference copied
there once), launched ``--warmup`` times, then timed in ``--reps`` rounds: each
round launches every contender once, in an order rotated from round to round,
CUDA events between consecutive launches on the legacy default stream, behind a
spinning kernel that holds the stream until the round is enqueued. Checked
again after timing; the result is the median.

Output
------
``RESULT`` records (``bench=warp``, ``task``, ``dtype``, ``impl``, ``rows``,
``cols``, ``config``, ``items``, ``warps``, ``threads``, ``io``, ``variant``,
``median_ms``, ``min_ms``, ``gbps``, ``ok``, ``reps``); the project's also
``cub_median_ms`` and ``cub_io`` (the fastest CUB tile I/O at the same ITEMS x
warps), ``speed_ratio`` (that CUB ms / project ms), ``speed_vs_cub_direct``
(the same against CUB's ``direct`` I/O: the scans compared over the same
accesses) and ``vs_best_cub`` (the fastest CUB of the shape / project ms). A
table per shape is printed and, with ``--out DIR``, written to ``DIR/warp.md``
and ``DIR/warp.csv``. Exit status 1 when a project or CUB check fails or a
contender cannot be set up.

``--build-only`` compiles the CUB units with nvcc and the project kernels with
``scan.compile`` for sm_90, without a GPU, and prints their resources.
``--simulate ROWSxCOLS`` runs the project kernels in the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) on a small shape and compares them with NumPy.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import functools
import importlib.util
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
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

CU_SOURCE = BENCH / "cub_warp.cu"
#: the program of docs/warp.md (the ``default`` contender)
DOCS_EXAMPLE = BENCH.parent / "tests" / "doc_examples" / "examples" / "warp.py"

TASK = "rowscan_i32"
DTYPE = "int32"
BYTES_PER_ELEMENT = 8  # an int32 read and an int32 written
LANES = 32
SHAPES: tuple[tuple[int, int], ...] = ((262144, 128), (65536, 512), (16384, 4096), (65536, 500))
#: ``--quick``: full tiles and a partial one; rows shorter than one tile
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((4096, 500), (512, 4096), (2048, 100))
ITEMS: tuple[int, ...] = (1, 2, 4, 8, 16)
WARPS: tuple[int, ...] = (2, 4, 8)
CUB_IO: tuple[str, ...] = ("direct", "vectorize", "transpose")
#: the project's kernels over every ITEMS x warps (``default`` is one more)
PROJECT_VARIANTS: tuple[str, ...] = ("warp_io", "blocked", "uindex")
SEED = 20260315


@dataclass(frozen=True)
class Config:
    """One configuration: ITEMS x warps a block, and the project's variant or CUB's tile I/O.

    ``variant``: one of :data:`PROJECT_VARIANTS` (the project's kernels),
    ``default`` (the docs' program), or one of :data:`CUB_IO` (a CUB kernel).
    """

    items: int
    warps: int
    variant: str = "warp_io"

    @property
    def threads(self) -> int:
        """Threads a block."""
        return LANES * self.warps

    @property
    def tile(self) -> int:
        """Items a warp's tile."""
        return LANES * self.items

    @property
    def label(self) -> str:
        """``w<warps>_i<items>[_<variant>]`` (no suffix for the project's ``warp_io``)."""
        tail = "" if self.variant == "warp_io" else f"_{self.variant}"
        return f"w{self.warps}_i{self.items}{tail}"

    @property
    def symbol(self) -> str:
        """The CUB C++ kernel's name (cub_warp.cu)."""
        return f"warp_rowscan_w{self.warps}_i{self.items}_{self.variant}"

    def grid(self, rows: int) -> int:
        """Blocks for ``rows`` rows, one a warp."""
        return (rows + self.warps - 1) // self.warps


#: what a user who copies docs/warp.md gets (ITEMS as the docs set it)
DEFAULT = Config(4, 4, "default")


def configs(
    quick: bool = False,
    items: Sequence[int] | None = None,
    warps: Sequence[int] | None = None,
    variants: Sequence[str] | None = None,
) -> tuple[Config, ...]:
    """The project configurations: every ITEMS x warps of each variant, then ``default``."""
    variants = variants or ("warp_io",)
    if quick and items is None and warps is None:
        picks = ((4, 4), (8, 4), (16, 8))
        return (*(Config(i, w, v) for v in variants for i, w in picks), DEFAULT)
    grid = [(i, w) for i in items or ITEMS for w in warps or WARPS]
    return (*(Config(i, w, v) for v in variants for i, w in grid), DEFAULT)


def cub_configs(cfgs: Sequence[Config], ios: Sequence[str] | None = None) -> tuple[Config, ...]:
    """The CUB configurations: every ITEMS x warps of ``cfgs``, each tile I/O."""
    pairs = dict.fromkeys((c.items, c.warps) for c in cfgs)
    return tuple(Config(i, w, io) for i, w in pairs for io in ios or CUB_IO)


# ---------------------------------------------------------------------------- the project's kernels


def _running_total_op(state: Any, warp_aggregate: Any) -> Any:
    prefix = state[0]  # the int32 sum of the row's earlier tiles
    state[0] = prefix + warp_aggregate
    return prefix


running_total = statefn.stateful(np.int32, name="warp_bench_running_total")(_running_total_op)


@functools.cache
def docs_example() -> ModuleType:
    """tests/doc_examples/examples/warp.py, imported by path."""
    spec = importlib.util.spec_from_file_location("warp_bench_docs_example", DOCS_EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def make_kernel(cfg: Config) -> Any:
    """The project kernel ``[cfg.grid(rows), cfg.threads](src, dst)``."""
    from scan import warp

    if cfg.variant == "default":
        module = docs_example()
        assert cfg.items == module.ITEMS, "docs/warp.md's ITEMS changed: update DEFAULT"
        return module.row_cumsum_per_warp
    if cfg.variant not in PROJECT_VARIANTS:
        raise ValueError(f"not a project variant: {cfg.variant!r}")

    ITEMS, WARPS, TILE = cfg.items, cfg.warps, cfg.tile
    if cfg.variant == "warp_io":

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def row_cumsum_io(src: Any, dst: Any) -> None:
            row = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
            if row >= src.shape[0]:
                return  # the whole warp
            state = cuda.local.array(1, np.int32)
            state[0] = 0
            items = cuda.local.array(ITEMS, np.int32)
            for base in range(0, src.shape[1], TILE):
                warp.load(src[row], base, items, oob_default=0)
                warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
                warp.store(dst[row], base, items)

        return row_cumsum_io
    # the indices: np.int64 leaves them as they are (Numba adds the row's length to a
    # negative index: a compare and a select per access); np.uint64 skips that
    index = np.uint64 if cfg.variant == "uindex" else np.int64

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
        if row >= src.shape[0]:
            return  # the whole warp
        r_src, r_dst = src[row], dst[row]
        first = (cuda.threadIdx.x % 32) * ITEMS  # this lane's items in a tile
        state = cuda.local.array(1, np.int32)
        state[0] = 0
        items = cuda.local.array(ITEMS, np.int32)
        n = r_src.shape[0]
        full = n - n % TILE
        for base in range(0, full, TILE):
            at = index(base + first)
            for i in range(ITEMS):
                items[i] = r_src[at + index(i)]
            warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
            for i in range(ITEMS):
                r_dst[at + index(i)] = items[i]
        if full < n:  # the partial tile, last
            at, end = index(full + first), index(n)
            for i in range(ITEMS):
                j = at + index(i)
                items[i] = r_src[j] if j < end else 0
            warp.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
            for i in range(ITEMS):
                j = at + index(i)
                if j < end:
                    r_dst[j] = items[i]

    return row_cumsum


@functools.cache
def project_kernel(cfg: Config) -> Any:
    """The (one per process) dispatcher of a configuration."""
    return make_kernel(cfg)


def project_signature() -> tuple[Any, ...]:
    """The Numba argument types the project kernels are launched with."""
    from numba import types

    return (types.int32[:, ::1], types.int32[:, ::1])


def _compile_project_job(
    cfg: tuple[int, int, str], cc: tuple[int, int], out_dir: str
) -> dict[str, Any]:
    import scan

    config = Config(*cfg)
    started = time.perf_counter()
    cubin = scan.compile(project_kernel(config), project_signature(), cc=cc, block=config.threads)
    path = Path(out_dir) / f"project_{config.label}.cubin"
    path.write_bytes(bytes(cubin))  # type: ignore[arg-type]
    return {"cubin": str(path), "seconds": time.perf_counter() - started}


def build_project(
    cfgs: Sequence[Config], build_dir: Path, cc: tuple[int, int]
) -> dict[Config, tuple[bool, str]]:
    """``scan.compile`` every project kernel in a spawned process pool (fills the cache).

    Returns ``{cfg: (ok, cubin path or the error)}``.
    """
    from _harness import compile_in_processes

    jobs = {cfg: (cfg.label, ((cfg.items, cfg.warps, cfg.variant),)) for cfg in cfgs}
    done = compile_in_processes("warp_bench", jobs, _compile_project_job, cc, build_dir / "project")
    return {k: (False, r) if isinstance(r, str) else (True, r["cubin"]) for k, r in done.items()}


# ---------------------------------------------------------------------------- CUB C++ units


def _unit_line(cfg: Config) -> str:
    return f"WARP_ROWSCAN_KERNEL({cfg.warps}, {cfg.items}, {cfg.variant})"


def _build_cub_unit(unit: CubUnit, nvcc: str, cc: tuple[int, int]) -> CubUnit:
    """Compile one unit; skipped when its cubin is newer than its inputs, same command."""
    from _harness import build_nvcc_unit

    lines = [
        "// generated by bench/warp_bench.py: the kernels of one nvcc job",
        "#define WARP_GENERATED_INSTANCES",
        f'#include "{CU_SOURCE}"',
        *(_unit_line(cfg) for _, cfg in unit.kernels),
    ]
    built: CubUnit = build_nvcc_unit(unit, nvcc, cc, CU_SOURCE, lines)
    return built


def build_cub(
    cfgs: Sequence[Config], ios: Sequence[str] | None, build_dir: Path, cc: tuple[int, int]
) -> list[CubUnit]:
    """Compile every CUB unit (one per ITEMS x warps, its tile I/Os) in parallel threads."""
    from _harness import build_nvcc_units
    from _toolchain import find_tool

    build_dir.mkdir(parents=True, exist_ok=True)
    grouped: dict[tuple[int, int], list[tuple[str, Config]]] = {}
    for cfg in cub_configs(cfgs, ios):
        grouped.setdefault((cfg.warps, cfg.items), []).append((TASK, cfg))
    units = [
        CubUnit(LANES * w, i, tuple(k), build_dir / f"cub_warp_w{w}_i{i}.cubin")
        for (w, i), k in grouped.items()
    ]
    nvcc = find_tool("nvcc")
    return build_nvcc_units("warp_bench", units, lambda u, n: _build_cub_unit(u, n, cc), nvcc, cc)


# ---------------------------------------------------------------------------- data and checks


def reference(src: Any) -> Any:
    """NumPy's row prefix sums, int32 (wrapping)."""
    return np.cumsum(src, axis=1, dtype=np.int32)


def make_input(rows: int, cols: int) -> Any:
    """int32 uniform in [-1000, 1000], seeded by the shape."""
    rng = np.random.default_rng([SEED, rows, cols])
    return rng.integers(-1000, 1000, (rows, cols), dtype=np.int32, endpoint=True)


@dataclass
class Data:
    """One shape: input, output and NumPy reference on the device."""

    rows: int
    cols: int
    src: Any
    out: Any
    ref: Any

    @classmethod
    def make(cls, rows: int, cols: int) -> Data:
        """Random input, NumPy's reference, on the device."""
        src = make_input(rows, cols)
        return cls(
            rows,
            cols,
            cuda.to_device(src),
            cuda.device_array((rows, cols), np.int32),
            cuda.to_device(reference(src)),
        )

    @property
    def bytes(self) -> int:
        """Bytes read and written by one launch."""
        return BYTES_PER_ELEMENT * self.rows * self.cols

    def poison(self) -> None:
        """The complement of every result: an output no correct kernel leaves."""
        poison_int[self.rows, 256](self.out, self.ref)

    def bad(self) -> int:
        """Elements of the output that differ from the reference."""
        count = cuda.to_device(np.zeros(1, np.int64))
        count_bad_exact[self.rows, 256](self.out, self.ref, count)
        return int(count.copy_to_host()[0])


def _label(data: Data, entry: Entry) -> dict[str, object]:
    return {
        "bench": "warp",
        "task": TASK,
        "dtype": DTYPE,
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
        _common.emit("MISMATCH", **label, stage=stage, bad_elements=bad, of=data.rows * data.cols)
    return bad == 0


# ---------------------------------------------------------------------------- launches


def make_project_launch(kernel: Any, data: Data, cfg: Config) -> Callable[[], None]:
    """``launch()`` of a project kernel (Numba's default stream: the legacy one)."""
    configured = kernel[cfg.grid(data.rows), cfg.threads]
    src, out = data.src, data.out

    def launch() -> None:
        configured(src, out)

    return launch


def make_cub_launch(data: Data, cubin: Path, cfg: Config) -> Callable[[], None]:
    """``launch()`` of one CUB C++ kernel via cuda.core on the legacy default stream."""
    from _harness import cub_runtime as _cub_runtime
    from _harness import device_pointer as _device_pointer
    from _harness import load_cubin as _load_cubin

    core, stream = _cub_runtime()
    kernel = _load_cubin(cubin).get_kernel(cfg.symbol)
    config = core.LaunchConfig(grid=cfg.grid(data.rows), block=cfg.threads)
    args = (
        np.uint64(_device_pointer(data.src)),
        np.uint64(_device_pointer(data.out)),
        np.int32(data.rows),
        np.int32(data.cols),
    )
    launch_fn = core.launch

    def launch() -> None:
        launch_fn(stream, config, kernel, *args)

    return launch


# ---------------------------------------------------------------------------- the run
#: contenders that could not be set up (also ERROR records); main() exits 1 on any
SETUP_ERRORS: list[str] = []


def _fields(cfg: Config, impl: str) -> dict[str, object]:
    if impl == "cub_cpp":
        io = cfg.variant
    else:  # the library's default warp tile I/O, or the hand-indexed loop's
        io = "vectorize" if cfg.variant in ("warp_io", "default") else "blocked"
    return {
        "items": cfg.items,
        "warps": cfg.warps,
        "threads": cfg.threads,
        "io": io,
        "variant": cfg.variant,
    }


def _setup(
    group: Group,
    cfgs: Sequence[Config],
    cub_cfgs: Sequence[Config],
    cubins: dict[Config, CubUnit],
) -> None:
    data = group.data
    for cfg in cfgs:
        try:
            launch = make_project_launch(project_kernel(cfg), data, cfg)
            group.entries.append(Entry("project", cfg.label, launch, _fields(cfg, "project"), cfg))
        except Exception as exc:
            _common.emit_error(exc, bench="warp", task=TASK, impl="project", config=cfg.label)
            SETUP_ERRORS.append(f"project {cfg.label}: {type(exc).__name__}: {exc}")
    for cfg in cub_cfgs:
        unit = cubins.get(cfg)
        if unit is None or not unit.ok:
            message = unit.message[:300] if unit else "no unit"
            label = {"bench": "warp", "task": TASK, "impl": "cub_cpp", "config": cfg.label}
            _common.emit("ERROR", **label, stage="build", msg=message)
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol}: build: {message}")
            continue
        try:
            launch = make_cub_launch(data, unit.cubin, cfg)
        except Exception as exc:
            _common.emit_error(exc, bench="warp", task=TASK, impl="cub_cpp", config=cfg.label)
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol}: load: {type(exc).__name__}: {exc}")
            continue
        group.entries.append(Entry("cub_cpp", cfg.label, launch, _fields(cfg, "cub_cpp"), cfg))


def _cub_at(group: Group, cfg: Config, io: str | None = None) -> Entry | None:
    """The fastest correct CUB entry at ``cfg``'s ITEMS x warps (of tile I/O ``io`` if given)."""
    return min(
        (
            e
            for e in group.entries
            if e.impl == "cub_cpp"
            and e.ok
            and e.times
            and (e.cfg.items, e.cfg.warps) == (cfg.items, cfg.warps)
            and io in (None, e.cfg.variant)
        ),
        key=lambda e: e.median_ms,
        default=None,
    )


def run_group(group: Group, spin: Any, reps: int, warmup: int) -> None:
    """Check, time and check again every contender; emit one record each."""
    from _harness import time_entries

    data = group.data
    print(f"warp_bench: {data.rows}x{data.cols}: {len(group.entries)} contenders", flush=True)
    for entry in group.entries:
        entry.ok = check(data, entry, "check before timing")
    discarded = time_entries(group.entries, spin, reps, warmup, lambda e: _label(data, e))
    if discarded:
        print(f"warp_bench: {discarded} rounds discarded (host slower than the spin)")
    for entry in group.entries:
        if entry.ok:
            entry.ok = check(data, entry, "check after timing")
    best_cub = best_entry(group, "cub_cpp")
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
            rival, direct = _cub_at(group, entry.cfg), _cub_at(group, entry.cfg, "direct")
            if rival is not None:
                fields["cub_median_ms"] = rival.median_ms
                fields["cub_io"] = rival.cfg.variant
                fields["speed_ratio"] = rival.median_ms / ms if entry.ok else float("nan")
            if direct is not None:
                fields["speed_vs_cub_direct"] = direct.median_ms / ms if entry.ok else float("nan")
            fields["vs_best_cub"] = (
                best_cub.median_ms / ms if best_cub and entry.ok else float("nan")
            )
        _common.emit("RESULT", **fields)


def run(
    shapes: Sequence[tuple[int, int]],
    cfgs: Sequence[Config],
    ios: Sequence[str] | None,
    build_dir: Path,
    reps: int,
    warmup: int,
) -> list[Group]:
    """Build everything, then measure every shape."""
    from _harness import Spinner
    from _harness import target_cc as _target_cc

    cc = _target_cc()
    build_dir.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, ios, build_dir, cc)
        try:
            builds = build_project(cfgs, build_dir, cc)
        except Exception as exc:
            _common.emit_error(exc, bench="warp", impl="project", stage="scan.compile pool")
            builds = {}
        try:
            units = cub_future.result()
        except Exception as exc:
            _common.emit_error(exc, bench="warp", impl="cub_cpp", stage="nvcc")
            SETUP_ERRORS.append(f"cub_cpp: nvcc stage: {type(exc).__name__}: {exc}")
            units = []
    for cfg, (ok, message) in builds.items():
        if not ok:
            SETUP_ERRORS.append(f"project {cfg.label}: scan.compile: {message}")
    cubins = {cfg: u for u in units for _, cfg in u.kernels}
    spin = Spinner(cc)
    groups: list[Group] = []
    for rows, cols in shapes:
        started = time.perf_counter()
        data = Data.make(rows, cols)
        print(
            f"warp_bench: {rows}x{cols}: data and NumPy reference in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        group = Group(data)
        _setup(group, cfgs, cub_configs(cfgs, ios), cubins)
        run_group(group, spin, reps, warmup)
        groups.append(group)
        data.src = data.out = data.ref = None
    return groups


# ---------------------------------------------------------------------------- reports


def report_lines(groups: Sequence[Group], ios: Sequence[str] = CUB_IO) -> list[str]:
    """Markdown tables: per shape, the project and each CUB tile I/O side by side, the bests."""
    lines = [
        "# Per-warp row scans: scan.warp against CUB C++ WarpScan",
        "",
        "int32 inclusive row sums, one row per warp. Median of the timed launches (CUDA "
        "events). speed = CUB ms / project ms; 'best CUB' is the fastest CUB tile I/O at the "
        "same ITEMS x warps, 'CUB direct' the one with the project's accesses.",
        "",
    ]
    for group in groups:
        d = group.data
        lines += [f"## {d.rows} x {d.cols} ({DTYPE})", ""]
        lines += [
            "| warps x items | project | project ms | "
            + " | ".join(f"CUB {io} ms" for io in ios)
            + " | speed vs best CUB | speed vs CUB direct |",
            "| --- | --- | --- | " + "--- | " * len(ios) + "--- | --- |",
        ]
        cub = {
            (e.cfg.items, e.cfg.warps, e.cfg.variant): e
            for e in group.entries
            if e.impl == "cub_cpp"
        }
        for e in group.entries:
            if e.impl != "project" or e.cfg is None:
                continue
            p_ms = e.median_ms if e.ok else float("nan")
            cells = []
            for io in ios:
                c = cub.get((e.cfg.items, e.cfg.warps, io))
                cells.append(fmt(c.median_ms if c and c.ok else float("nan"), 4))
            best, direct = _cub_at(group, e.cfg), _cub_at(group, e.cfg, "direct")
            vs_best = best.median_ms / p_ms if best else float("nan")
            vs_direct = direct.median_ms / p_ms if direct else float("nan")
            note = "" if e.ok else " (project WRONG)"
            lines.append(
                f"| {e.cfg.warps} x {e.cfg.items} | {e.cfg.variant} | {fmt(p_ms, 4)} | "
                + " | ".join(cells)
                + f" | {fmt(vs_best)}{note} | {fmt(vs_direct)} |"
            )
        wrong = [e for e in group.entries if not e.ok]
        best = {impl: best_entry(group, impl) for impl in ("project", "cub_cpp")}
        lines.append("")
        for impl, b in best.items():
            gbps = d.bytes / b.median_ms / 1e6 if b else 0.0
            text = f"{b.config} {b.median_ms:.4f} ms ({gbps:.0f} GB/s)" if b else "none"
            lines.append(f"- best {impl}: {text}")
        bp, bc = best["project"], best["cub_cpp"]
        if bp and bc:
            lines.append(f"- best project vs best cub_cpp: speed {bc.median_ms / bp.median_ms:.3f}")
        if wrong:
            lines.append("- wrong or not run: " + ", ".join(f"{e.impl} {e.config}" for e in wrong))
        lines.append("")
    return lines


def write_csv(groups: Sequence[Group], path: Path) -> None:
    """One row per contender."""
    columns = ["task", "dtype", "rows", "cols", "impl", "config", "items", "warps", "io"]
    columns += ["median_ms", "min_ms", "ok", "reps", "speed_vs_cub_same_config"]
    columns += ["speed_vs_cub_direct", "vs_best_cub"]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for group in groups:
            d = group.data
            best_cub = best_entry(group, "cub_cpp")
            for e in group.entries:
                ms = e.median_ms
                ratios = ["", "", ""]
                if e.impl == "project" and e.ok:
                    rivals = (_cub_at(group, e.cfg), _cub_at(group, e.cfg, "direct"), best_cub)
                    ratios = [fmt(r.median_ms / ms, 4) if r else "-" for r in rivals]
                writer.writerow(
                    [
                        *(TASK, DTYPE, d.rows, d.cols, e.impl, e.config),
                        *(e.fields["items"], e.fields["warps"], e.fields["io"]),
                        f"{ms:.5f}",
                        f"{min(e.times):.5f}" if e.times else "nan",
                        *(int(e.ok), len(e.times), *ratios),
                    ]
                )


# ---------------------------------------------------------------------------- build only


def build_only(
    cfgs: Sequence[Config], ios: Sequence[str] | None, build_dir: Path, cc: tuple[int, int]
) -> int:
    """Compile the CUB units and the project kernels without a GPU; print their resources."""
    from _toolchain import SM90_RESERVED_SHARED, cubin_usage, only_kernel

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, ios, build_dir, cc)
        project = build_project(cfgs, build_dir, cc)
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
    cub_cfgs = cub_configs(cfgs, ios)
    for cfg in cfgs:
        ok, where = project.get(cfg, (False, "missing"))
        mine = only_kernel(Path(where).read_bytes()) if ok else None
        print(f"  {cfg.label}: project {text(mine)}")
        if cfg.variant == "default":
            continue
        for c in cub_cfgs:
            if (c.items, c.warps) == (cfg.items, cfg.warps):
                print(f"    {c.symbol}: cub_cpp {text(cub_usage.get(c.symbol))}")
    failed = sum(not u.ok for u in units) + sum(not ok for ok, _ in project.values())
    print(
        f"warp_bench: build-only done in {time.perf_counter() - started:.1f} s wall; "
        f"{failed} failures",
        flush=True,
    )
    return 1 if failed else 0


# ---------------------------------------------------------------------------- the simulator


def simulate(cfgs: Sequence[Config], rows: int, cols: int) -> int:
    """Run each project kernel in the CUDA simulator on host arrays; 1 when one differs."""
    src = make_input(rows, cols)
    want = reference(src)
    failed = 0
    for cfg in cfgs:
        got = np.zeros_like(src)
        project_kernel(cfg)[cfg.grid(rows), cfg.threads](src, got)
        bad = int(np.count_nonzero(got != want))
        failed += bad != 0
        verdict = "ok" if bad == 0 else f"MISMATCH: {bad} of {got.size} elements"
        print(f"warp_bench: simulator {rows}x{cols} project {cfg.label}: {verdict}", flush=True)
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
    parser.add_argument(
        "--items", action="append", type=int, choices=ITEMS, help="items a lane (repeatable)"
    )
    parser.add_argument(
        "--warps", action="append", type=int, choices=WARPS, help="warps a block (repeatable)"
    )
    parser.add_argument(
        "--variant",
        dest="variants",
        action="append",
        choices=PROJECT_VARIANTS,
        help="project kernels over every ITEMS x warps (repeatable; default: blocked)",
    )
    parser.add_argument(
        "--cub-io", dest="ios", action="append", choices=CUB_IO, help="CUB tile I/O (repeatable)"
    )
    parser.add_argument("--reps", type=int, default=30, help="timed rounds per shape")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--out", type=Path, help="also write warp.md and warp.csv here")
    parser.add_argument("--build-dir", type=Path, help="where cubins go (default: a temp folder)")
    parser.add_argument(
        "--build-only", action="store_true", help="compile for sm_90 only (no GPU needed)"
    )
    parser.add_argument(
        "--simulate",
        type=_common.parse_shape,
        metavar="ROWSxCOLS",
        help="run the project kernels in the CUDA simulator on this shape (NUMBA_ENABLE_CUDASIM=1)",
    )
    args = parser.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        parser.error(f"--reps must be >= 1 and --warmup >= 0, got {args.reps}, {args.warmup}")
    if args.quick:
        args.reps = min(args.reps, 5)
        args.warmup = min(args.warmup, 1)
    cfgs = configs(args.quick, args.items, args.warps, args.variants)
    shapes = args.shapes or list(QUICK_SHAPES if args.quick else SHAPES)
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="warp-bench-"))
    if args.build_only:
        return build_only(cfgs, args.ios, build_dir, (9, 0))
    from numba.core import config as numba_config

    if args.simulate:
        if not numba_config.ENABLE_CUDASIM:
            parser.error("--simulate needs NUMBA_ENABLE_CUDASIM=1")
        return simulate(cfgs, *args.simulate)
    if numba_config.ENABLE_CUDASIM:
        print("warp_bench: needs a GPU (not the simulator): the CUB contenders run on it")
        return 1
    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    try:
        name = cuda.get_current_device().name
        _common.emit("DEVICE", name=name.decode() if isinstance(name, bytes) else name)
        groups = run(shapes, cfgs, args.ios, build_dir, args.reps, args.warmup)
    except Exception:
        traceback.print_exc()
        return 1
    lines = report_lines(groups, args.ios or CUB_IO)
    print("\n".join(lines), flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "warp.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        write_csv(groups, args.out / "warp.csv")
    from _harness import run_outcome

    return run_outcome("warp_bench", [e for g in groups for e in g.entries], SETUP_ERRORS)


if __name__ == "__main__":
    sys.exit(main())
