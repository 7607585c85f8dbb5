# SPDX-License-Identifier: Apache-2.0
"""bfloat16 rows, a float32 scan with a carried prefix, bfloat16 out: the library against
CUB C++, ``torch.cumsum`` and Triton.

One thread block (or Triton program) per row walks its row tile by tile: the
bfloat16 items are widened to float32, scanned with the float32 total of the
earlier tiles carried from tile to tile, and the sums rounded back to
bfloat16 (to nearest, ties to even). Shapes 8192 x 65536 and 262144 x 2048
(rows x cols: 1 GiB of bfloat16 each way, rows of one tile or less); the
bytes counted are the bfloat16 data's, 2 read and 2 written an item.

Contenders
----------
``project``
    docs/half-precision.md's kernel generalised over threads x items:
    ``block.load`` of the bfloat16 row into float32 items (``oob_default=0``),
    ``block.inclusive_sum`` with a ``@statefn.stateful(np.float32)`` carry,
    ``block.store`` back to bfloat16. The scan's ``algorithm=`` is ``raking``,
    ``warp_scans`` or ``default`` (none named), the tile I/O's ``vectorize``,
    ``warp_transpose`` or ``default``. Launched through ``scan.launcher``
    with the torch tensors as they are (no copy, no view).
``cub_cpp``
    Hand-written CUDA C++ (``bench/cub_bf16_rowscan.cu``):
    ``BlockLoad<__nv_bfloat16>`` (the warp-striped exchange of two-byte
    items; for ``vectorize``, 16-byte words of a thread's items in full
    tiles, since CUB moves bfloat16 "vectors" item by item), the items
    widened in registers,
    ``BlockScan<float>::InclusiveSum`` with a stateful prefix functor,
    ``__float2bfloat16_rn``, ``BlockStore<__nv_bfloat16>``; full tiles
    unguarded in the loop, the partial tile once. Compiled with ``nvcc -O3
    -std=c++17 -arch=sm_XY -cubin`` (one job per threads x items, in
    parallel) and launched with ``cuda.core``.
``torch``
    ``torch.cumsum(x, dim=1, out=y)`` on the bfloat16 tensor.
``triton``
    ``tl.load(...).to(tl.float32)``, ``tl.cumsum`` plus the carried total,
    ``.to(tl.bfloat16)`` (``bench/_triton_bf16.py``), tuned per shape over
    BLOCK x num_warps x num_stages.
``copy``
    ``y.copy_(x)``: a device-to-device copy of the same bytes, the memory
    roofline (no contender is timed against it as a rival; each best is
    reported as a fraction of it).

Configurations: threads x items in (128, 8), (256, 8), (256, 16), (512, 8);
CUB's with ``vectorize`` and ``warp_transpose`` tile I/O and both scan
algorithms; the project's with every default, and with the tile I/O and scan
algorithm named as CUB's (the same-configuration ratios).

Checks
------
Every output is poisoned (NaN), computed once, and compared on the device
with torch's float32 running sums of the widened input: every item within one
bfloat16 step (2**-7 of its magnitude) plus 2**-12 of its row's largest sum
(float32 sums in another order). Checked again after timing. A wrong peer
(``torch``, ``triton``) is reported (``PEER_WRONG``) and left out of the
bests; a wrong project or CUB kernel fails the run.

Timing
------
Per shape, every contender is launched ``--warmup`` times, then timed in
``--reps`` rounds: each round launches every contender once, in an order
rotated from round to round, CUDA events between consecutive launches on the
legacy default stream, behind a spinning kernel that holds the stream until
the round is enqueued (bench/reduce_bench.py's scheme). The result is the
median.

Output
------
``RESULT`` records (``bench=bf16_rowscan``, ``impl``, ``rows``, ``cols``,
``config``, ``threads``, ``items``, ``algo``, ``io``, ``block``, ``warps``,
``stages``, ``median_ms``, ``min_ms``, ``gbps``, ``ok``, ``reps``); the
project's also ``cub_median_ms`` and ``speed_ratio`` (CUB ms / project ms,
same configuration), ``vs_best_cub``, ``vs_best_triton`` and ``vs_torch``
(their ms / project ms). With ``--out DIR``: ``bf16_rowscan.md``,
``bf16_rowscan.csv`` and every timed sample in ``bf16_rowscan_samples.json.gz``.

``--build-only`` compiles the CUB units with nvcc and the project kernels with
``scan.compile`` for sm_90, without a GPU, and prints their resources.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import functools
import gzip
import json
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

CU_SOURCE = BENCH / "cub_bf16_rowscan.cu"
BENCH_NAME = "bf16_rowscan"
#: bytes read and written an item: the bfloat16 data's
BYTES_PER_ITEM = 4
SHAPES: tuple[tuple[int, int], ...] = ((8192, 65536), (262144, 2048))
#: ``--quick``: full tiles and a partial one; rows shorter than one tile
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 8708), (1024, 516))
THREADS_ITEMS: tuple[tuple[int, int], ...] = ((128, 8), (256, 8), (256, 16), (512, 8))
CUB_IO: tuple[str, ...] = ("vectorize", "warp_transpose")
CUB_ALGORITHMS: tuple[str, ...] = ("raking", "warp_scans")
#: one bfloat16 step, and float32 sums in another order
STEP, ORDER = 2.0**-7, 2.0**-12


@dataclass(frozen=True)
class Config:
    """One configuration: threads x items, scan algorithm, tile I/O (``default``: none named)."""

    threads: int
    items: int
    algo: str
    io: str

    @property
    def label(self) -> str:
        """``t<threads>_i<items>_<io>_<algo>``."""
        return f"t{self.threads}_i{self.items}_{self.io}_{self.algo}"

    @property
    def symbol(self) -> str:
        """The CUB C++ kernel's name (cub_bf16_rowscan.cu)."""
        return f"bf16_rowscan_{self.label}"


def configs(quick: bool = False) -> tuple[Config, ...]:
    """The project's configurations: every default, then CUB's own."""
    pairs = ((256, 8), (512, 8)) if quick else THREADS_ITEMS
    out = [Config(t, i, "default", "default") for t, i in pairs]
    out += [Config(t, i, a, io) for t, i in pairs for io in CUB_IO for a in CUB_ALGORITHMS]
    return tuple(out)


def cub_configs(cfgs: Sequence[Config]) -> tuple[Config, ...]:
    """The CUB configurations: every threads x items of ``cfgs``, both tile I/O and algorithms."""
    pairs = dict.fromkeys((c.threads, c.items) for c in cfgs)
    return tuple(Config(t, i, a, io) for t, i in pairs for io in CUB_IO for a in CUB_ALGORITHMS)


@dataclass(frozen=True)
class TritonConfig:
    """One Triton configuration."""

    block: int
    warps: int
    stages: int

    @property
    def label(self) -> str:
        """``BLOCK<b>_w<warps>_s<stages>``."""
        return f"BLOCK{self.block}_w{self.warps}_s{self.stages}"


def triton_configs(quick: bool, cols: int) -> tuple[TritonConfig, ...]:
    """BLOCK 1024..8192 x num_warps 4..16 x num_stages 1..3, 4 to 16 items a thread, no
    BLOCK longer than the row but the smallest."""
    if quick:
        return (TritonConfig(1024, 4, 1), TritonConfig(2048, 8, 2))
    out = []
    for block in (1024, 2048, 4096, 8192):
        if block > cols and block != 1024:
            continue
        for warps in (4, 8, 16):
            if not 4 <= block // (32 * warps) <= 16:
                continue
            for stages in (1, 3):
                out.append(TritonConfig(block, warps, stages))
    return tuple(out)


# ---------------------------------------------------------------------------- the project


def _carry_op(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]  # the float32 total of every earlier tile
    state[0] = prefix + block_aggregate
    return prefix


carry = statefn.stateful(np.float32, name="bf16_rowscan_carry")(_carry_op)


def make_kernel(cfg: Config) -> Any:
    """The project kernel: ``[rows, threads](src, dst)`` over bfloat16 rows."""
    from scan import block

    ITEMS = cfg.items
    ALGO = None if cfg.algo == "default" else cfg.algo
    IO = None if cfg.io == "default" else cfg.io

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def bf16_rowscan(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, np.float32)
        state[0] = 0
        items = cuda.local.array(ITEMS, np.float32)
        for base in range(0, src.shape[1], block.tile_size(items)):
            block.load(src[row], base, items, oob_default=0, algorithm=IO)
            block.inclusive_sum(items, items, prefix_op=carry, prefix_state=state, algorithm=ALGO)
            block.store(dst[row], base, items, algorithm=IO)

    return bf16_rowscan


@functools.cache
def project_kernel(cfg: Config) -> Any:
    """The (one per process) dispatcher of a configuration."""
    return make_kernel(cfg)


def project_signature() -> tuple[Any, ...]:
    """The Numba argument types the project kernels are launched with."""
    from numba.cuda import types

    return (types.bfloat16[:, ::1], types.bfloat16[:, ::1])


def _compile_project_job(
    cfg: tuple[int, int, str, str], cc: tuple[int, int], out_dir: str
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
    """``scan.compile`` every project kernel in a spawned process pool (fills the cache)."""
    from _harness import compile_in_processes

    jobs = {cfg: (cfg.label, ((cfg.threads, cfg.items, cfg.algo, cfg.io),)) for cfg in cfgs}
    done = compile_in_processes(BENCH_NAME, jobs, _compile_project_job, cc, build_dir / "project")
    return {k: (False, r) if isinstance(r, str) else (True, r["cubin"]) for k, r in done.items()}


# ---------------------------------------------------------------------------- CUB C++ units


@dataclass
class CubUnit:
    """One nvcc job: the kernels of one (threads, items)."""

    threads: int
    items: int
    kernels: tuple[Config, ...]
    cubin: Path
    ok: bool = False
    seconds: float = 0.0
    message: str = ""


def _build_cub_unit(unit: CubUnit, nvcc: str, cc: tuple[int, int]) -> CubUnit:
    from _harness import build_nvcc_unit

    lines = [
        "// generated by bench/bf16_rowscan.py: the kernels of one nvcc job",
        "#define BF16_GENERATED_INSTANCES",
        f'#include "{CU_SOURCE}"',
        *(f"BF16_ROWSCAN_KERNEL({c.threads}, {c.items}, {c.io}, {c.algo})" for c in unit.kernels),
    ]
    built: CubUnit = build_nvcc_unit(unit, nvcc, cc, CU_SOURCE, lines)
    return built


def build_cub(cfgs: Sequence[Config], build_dir: Path, cc: tuple[int, int]) -> list[CubUnit]:
    """Compile every CUB unit in parallel threads."""
    from _harness import build_nvcc_units
    from _toolchain import find_tool

    build_dir.mkdir(parents=True, exist_ok=True)
    grouped: dict[tuple[int, int], list[Config]] = {}
    for cfg in cub_configs(cfgs):
        grouped.setdefault((cfg.threads, cfg.items), []).append(cfg)
    units = [
        CubUnit(t, i, tuple(k), build_dir / f"cub_bf16_rowscan_t{t}_i{i}.cubin")
        for (t, i), k in grouped.items()
    ]
    return build_nvcc_units(
        BENCH_NAME, units, lambda u, n: _build_cub_unit(u, n, cc), find_tool("nvcc"), cc
    )


# ---------------------------------------------------------------------------- data and checks


@dataclass
class Data:
    """One shape: the bfloat16 input and output (torch tensors), the float32 reference."""

    rows: int
    cols: int
    x: Any
    y: Any
    ref: Any  # float32 running sums of the widened input
    bound: Any  # each item's tolerance

    @classmethod
    def make(cls, rows: int, cols: int) -> Data:
        """Standard normal bfloat16 rows (seeded by the shape) and torch's float32 reference."""
        import torch  # type: ignore[import-not-found, unused-ignore]

        generator = torch.Generator(device="cuda").manual_seed(rows * 100003 + cols)
        x = torch.randn(rows, cols, device="cuda", generator=generator).to(torch.bfloat16)
        ref = torch.cumsum(x.float(), dim=1)
        bound = STEP * ref.abs() + ORDER * ref.abs().amax(dim=1, keepdim=True)
        return cls(rows, cols, x, torch.empty_like(x), ref, bound)

    @property
    def bytes(self) -> int:
        """Bytes read and written by one launch: the bfloat16 data's."""
        return BYTES_PER_ITEM * self.rows * self.cols

    def bad(self) -> int:
        """Items of the output outside their tolerance (NaN included)."""
        err = (self.y.float() - self.ref).abs()
        return int((~(err <= self.bound)).sum().item())


@dataclass
class Entry:
    """One contender and what it measured."""

    impl: str  # "project", "cub_cpp", "torch", "triton", "copy"
    config: str
    launch: Callable[[], None]
    fields: dict[str, object]
    cfg: Config | None = None
    ok: bool = False
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        """Median of the timed intervals (NaN without any)."""
        return _common.median(self.times) if self.times else float("nan")


def _label(data: Data, entry: Entry) -> dict[str, object]:
    return {
        "bench": BENCH_NAME,
        "task": "bf16_cumsum",
        "dtype": "bfloat16",
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
        data.y.fill_(float("nan"))
        cuda.synchronize()
        entry.launch()
        cuda.synchronize()
        bad = int((data.y != data.x).sum().item()) if entry.impl == "copy" else data.bad()
    except Exception as exc:
        _common.emit_error(exc, **label, stage=stage)
        return False
    if bad:
        tag = "PEER_WRONG" if entry.impl in ("torch", "triton") else "MISMATCH"
        _common.emit(tag, **label, stage=stage, bad_elements=bad, of=data.rows * data.cols)
    return bad == 0


# ---------------------------------------------------------------------------- launches


def make_project_launch(kernel: Any, data: Data, threads: int) -> Callable[[], None]:
    """``launch()`` of a project kernel: ``scan.launcher`` over the torch tensors as they are."""
    import scan

    launcher = scan.launcher(kernel, data.rows, threads)
    x, y = data.x, data.y

    def launch() -> None:
        launcher(x, y)

    return launch


def make_cub_launch(data: Data, cubin: Path, symbol: str, threads: int) -> Callable[[], None]:
    """``launch()`` of one CUB C++ kernel via cuda.core on the legacy default stream."""
    from _harness import cub_runtime as _cub_runtime
    from _harness import load_cubin as _load_cubin

    core, stream = _cub_runtime()
    kernel = _load_cubin(cubin).get_kernel(symbol)
    config = core.LaunchConfig(grid=data.rows, block=threads)
    args = (np.uint64(data.x.data_ptr()), np.uint64(data.y.data_ptr()), np.int32(data.cols))
    launch_fn = core.launch

    def launch() -> None:
        launch_fn(stream, config, kernel, *args)

    return launch


def make_torch_launch(data: Data) -> Callable[[], None]:
    """``launch()`` of ``torch.cumsum`` on the bfloat16 tensor, into the output."""
    import torch  # type: ignore[import-not-found, unused-ignore]

    x, y = data.x, data.y

    def launch() -> None:
        torch.cumsum(x, dim=1, out=y)

    return launch


def make_copy_launch(data: Data) -> Callable[[], None]:
    """``launch()`` of a device-to-device copy of the input into the output: the same bytes
    read and written as a scan's, the memory roofline no scan of them can beat."""
    x, y = data.x, data.y

    def launch() -> None:
        y.copy_(x)

    return launch


def triton_status() -> str:
    """``""`` when triton imports here, else why not."""
    try:
        import _triton_bf16  # noqa: F401
    except Exception as exc:
        return f"triton unavailable: {type(exc).__name__}: {exc}".replace("\n", " | ")[:300]
    return ""


def make_triton_launch(data: Data, cfg: TritonConfig) -> Callable[[], None]:
    """``launch()`` of the Triton kernel (torch's current stream: the legacy default one)."""
    import _triton_bf16

    kernel = _triton_bf16.bf16_cumsum
    x, y, cols = data.x, data.y, data.cols
    meta = {
        "BLOCK": cfg.block,
        "EVEN": cols % cfg.block == 0,
        "num_warps": cfg.warps,
        "num_stages": cfg.stages,
    }
    grid = (data.rows,)

    def launch() -> None:
        kernel[grid](x, y, cols, **meta)

    return launch


# ---------------------------------------------------------------------------- the run

#: contenders that could not be set up (also ERROR records); main() exits 1 on any
SETUP_ERRORS: list[str] = []


def _setup(
    data: Data,
    cfgs: Sequence[Config],
    cubins: dict[Config, CubUnit],
    quick: bool,
    no_triton: str,
) -> list[Entry]:
    entries: list[Entry] = []
    for cfg in cfgs:
        fields = {"threads": cfg.threads, "items": cfg.items, "algo": cfg.algo, "io": cfg.io}
        try:
            launch = make_project_launch(project_kernel(cfg), data, cfg.threads)
            entries.append(Entry("project", cfg.label, launch, fields, cfg))
        except Exception as exc:
            _common.emit_error(exc, bench=BENCH_NAME, impl="project", config=cfg.label)
            SETUP_ERRORS.append(f"project {cfg.label}: {type(exc).__name__}: {exc}")
    for cfg in cub_configs(cfgs):
        fields = {"threads": cfg.threads, "items": cfg.items, "algo": cfg.algo, "io": cfg.io}
        unit = cubins.get(cfg)
        if unit is None or not unit.ok:
            message = unit.message[:300] if unit else "no unit"
            label = {"bench": BENCH_NAME, "impl": "cub_cpp", "config": cfg.label}
            _common.emit("ERROR", **label, stage="build", msg=message)
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol}: build: {message}")
            continue
        try:
            launch = make_cub_launch(data, unit.cubin, cfg.symbol, cfg.threads)
        except Exception as exc:
            _common.emit_error(exc, bench=BENCH_NAME, impl="cub_cpp", config=cfg.label)
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol}: load: {type(exc).__name__}: {exc}")
            continue
        entries.append(Entry("cub_cpp", cfg.label, launch, fields, cfg))
    entries.append(Entry("torch", "cumsum", make_torch_launch(data), {}))
    entries.append(Entry("copy", "device_to_device", make_copy_launch(data), {}))
    if not no_triton:
        for tcfg in triton_configs(quick, data.cols):
            fields = {"block": tcfg.block, "warps": tcfg.warps, "stages": tcfg.stages}
            entries.append(Entry("triton", tcfg.label, make_triton_launch(data, tcfg), fields))
    return entries


def _best(entries: Sequence[Entry], impl: str) -> Entry | None:
    return min(
        (e for e in entries if e.impl == impl and e.ok and e.times),
        key=lambda e: e.median_ms,
        default=None,
    )


def run_shape(data: Data, entries: list[Entry], spin: Any, reps: int, warmup: int) -> None:
    """Check, time and check again every contender; emit one record each."""
    from _harness import time_entries

    print(f"{BENCH_NAME}: {data.rows}x{data.cols}: {len(entries)} contenders", flush=True)
    started = time.perf_counter()
    for entry in entries:  # the first launch of a configuration compiles it (Triton, Numba)
        entry.ok = check(data, entry, "check before timing")
    print(f"{BENCH_NAME}: first checks in {time.perf_counter() - started:.1f} s", flush=True)
    discarded = time_entries(entries, spin, reps, warmup, lambda e: _label(data, e))
    if discarded:
        print(f"{BENCH_NAME}: {discarded} rounds discarded (host slower than the spin)")
    for entry in entries:
        if entry.ok:
            entry.ok = check(data, entry, "check after timing")
    best = {impl: _best(entries, impl) for impl in ("cub_cpp", "triton", "torch", "copy")}
    cub = {e.cfg: e for e in entries if e.impl == "cub_cpp"}
    for entry in entries:
        ms = entry.median_ms
        fields: dict[str, object] = {
            **_label(data, entry),
            "median_ms": ms,
            "min_ms": min(entry.times) if entry.times else float("nan"),
            "gbps": data.bytes / (ms * 1e-3) / 1e9 if ms > 0 else float("nan"),
            "ok": entry.ok,
            "reps": len(entry.times),
        }
        if entry.impl == "project":
            rival = cub.get(entry.cfg)
            if rival is not None:
                both = entry.ok and rival.ok
                fields["cub_median_ms"] = rival.median_ms
                fields["speed_ratio"] = rival.median_ms / ms if both else float("nan")
            for impl, key in (
                ("cub_cpp", "vs_best_cub"),
                ("triton", "vs_best_triton"),
                ("torch", "vs_torch"),
                ("copy", "vs_copy"),
            ):
                b = best[impl]
                fields[key] = b.median_ms / ms if b and entry.ok else float("nan")
        _common.emit("RESULT", **fields)


def run(
    shapes: Sequence[tuple[int, int]],
    cfgs: Sequence[Config],
    build_dir: Path,
    reps: int,
    warmup: int,
    quick: bool,
) -> list[tuple[Data, list[Entry]]]:
    """Build everything, then measure every shape."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    from _harness import Spinner
    from _harness import target_cc as _target_cc

    cc = _target_cc()
    build_dir.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, build_dir, cc)
        try:
            builds = build_project(cfgs, build_dir, cc)
        except Exception as exc:
            _common.emit_error(exc, bench=BENCH_NAME, impl="project", stage="scan.compile pool")
            builds = {}
        try:
            units = cub_future.result()
        except Exception as exc:
            _common.emit_error(exc, bench=BENCH_NAME, impl="cub_cpp", stage="nvcc")
            SETUP_ERRORS.append(f"cub_cpp: nvcc stage: {type(exc).__name__}: {exc}")
            units = []
    for cfg, (ok, message) in builds.items():
        if not ok:
            SETUP_ERRORS.append(f"project {cfg.label}: scan.compile: {message}")
    cubins = {cfg: u for u in units for cfg in u.kernels}
    no_triton = triton_status()
    if no_triton:
        print(f"{BENCH_NAME}: no triton contenders: {no_triton}", flush=True)
    spin = Spinner(cc)
    results = []
    for rows, cols in shapes:
        data = Data.make(rows, cols)
        entries = _setup(data, cfgs, cubins, quick, no_triton)
        run_shape(data, entries, spin, reps, warmup)
        results.append((data, entries))
        data.x = data.y = data.ref = data.bound = None
        for entry in entries:  # the launches hold the tensors
            entry.launch = _gone
        torch.cuda.empty_cache()
    return results


def _gone() -> None:
    raise RuntimeError("this shape's data is released")


# ---------------------------------------------------------------------------- reports


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def report_lines(results: Sequence[tuple[Data, list[Entry]]]) -> list[str]:
    """Markdown: per shape, the project against CUB (same configuration), then the bests."""
    lines = [
        "# bfloat16 row scans with a float32 carry: the library against CUB C++, torch, Triton",
        "",
        "Median of the timed launches (CUDA events). GB/s counts the bfloat16 data, 2 + 2 "
        "bytes an item. speed = other ms / project ms.",
        "",
    ]
    for data, entries in results:
        lines += [f"## {data.rows} x {data.cols}", ""]
        lines += [
            "| threads x items | io | algo | CUB ms | project ms | project GB/s | speed vs CUB |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        cub = {e.cfg: e for e in entries if e.impl == "cub_cpp"}
        for e in entries:
            if e.impl != "project" or e.cfg is None:
                continue
            c = cub.get(e.cfg)
            p_ms = e.median_ms if e.ok else float("nan")
            c_ms = c.median_ms if c and c.ok else float("nan")
            gbps = data.bytes / (p_ms * 1e-3) / 1e9 if p_ms == p_ms else float("nan")
            lines.append(
                f"| {e.cfg.threads} x {e.cfg.items} | {e.cfg.io} | {e.cfg.algo} | "
                f"{_fmt(c_ms, 4)} | {_fmt(p_ms, 4)} | {_fmt(gbps, 0)} | {_fmt(c_ms / p_ms)} |"
            )
        lines.append("")
        best = {
            impl: _best(entries, impl) for impl in ("project", "cub_cpp", "triton", "torch", "copy")
        }
        for impl, b in best.items():
            text = "none"
            if b:
                gbps = data.bytes / (b.median_ms * 1e-3) / 1e9
                text = f"{b.config} {b.median_ms:.4f} ms ({gbps:.0f} GB/s)"
            lines.append(f"- best {impl}: {text}")
        bp = best["project"]
        for impl in ("cub_cpp", "triton", "torch"):
            b = best[impl]
            if bp and b:
                lines.append(
                    f"- best project vs best {impl}: speed {b.median_ms / bp.median_ms:.3f}"
                )
        copy = best["copy"]
        if copy:
            fractions = ", ".join(
                f"{impl} {copy.median_ms / b.median_ms:.3f}"
                for impl in ("project", "cub_cpp", "triton")
                if (b := best[impl])
            )
            lines.append(f"- best of each against the copy of the same bytes: {fractions}")
        defaults = [e for e in entries if e.impl == "project" and e.cfg and e.cfg.algo == "default"]
        best_default = _best(defaults, "project")
        if best_default and best["cub_cpp"]:
            lines.append(
                f"- best project with every default ({best_default.config}) vs best CUB: speed "
                f"{best['cub_cpp'].median_ms / best_default.median_ms:.3f}"
            )
        wrong = [e for e in entries if not e.ok]
        if wrong:
            lines.append("- wrong or not run: " + ", ".join(f"{e.impl} {e.config}" for e in wrong))
        lines.append("")
    return lines


def write_outputs(results: Sequence[tuple[Data, list[Entry]]], out: Path, lines: list[str]) -> None:
    """``bf16_rowscan.md``, ``.csv`` (one row per contender) and every timed sample (JSON)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{BENCH_NAME}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    columns = ["rows", "cols", "impl", "config", "median_ms", "min_ms", "gbps", "ok", "reps"]
    samples = []
    with (out / f"{BENCH_NAME}.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for data, entries in results:
            for e in entries:
                ms = e.median_ms
                gbps = data.bytes / (ms * 1e-3) / 1e9 if ms == ms else float("nan")
                writer.writerow(
                    [
                        *(data.rows, data.cols, e.impl, e.config),
                        f"{ms:.5f}",
                        f"{min(e.times):.5f}" if e.times else "nan",
                        f"{gbps:.1f}",
                        *(int(e.ok), len(e.times)),
                    ]
                )
                samples.append(
                    {"rows": data.rows, "cols": data.cols, "impl": e.impl, "config": e.config}
                    | {"ok": e.ok, "ms": e.times}
                )
    with gzip.open(out / f"{BENCH_NAME}_samples.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(samples, fh)


# ---------------------------------------------------------------------------- build only


def build_only(cfgs: Sequence[Config], build_dir: Path, cc: tuple[int, int]) -> int:
    """Compile the CUB units and the project kernels without a GPU; print their resources."""
    from _toolchain import SM90_RESERVED_SHARED, cubin_usage, only_kernel

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, cfgs, build_dir, cc)
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
    for cfg in cfgs:
        ok, where = project.get(cfg, (False, "missing"))
        mine = only_kernel(Path(where).read_bytes()) if ok else None
        print(f"  {cfg.label}: project {text(mine)}" + ("" if ok else f" ({where[:200]})"))
    for cfg in cub_configs(cfgs):
        print(f"  {cfg.symbol}: cub_cpp {text(cub_usage.get(cfg.symbol))}")
    failed = sum(not u.ok for u in units) + sum(not ok for ok, _ in project.values())
    for unit in units:
        if not unit.ok:
            print(f"  cub_cpp unit t{unit.threads}_i{unit.items}: {unit.message[:500]}")
    print(
        f"{BENCH_NAME}: build-only done in {time.perf_counter() - started:.1f} s wall; "
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
    parser.add_argument("--reps", type=int, default=30, help="timed rounds per shape")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--out", type=Path, help="also write the table, CSV and samples here")
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
    cfgs = configs(args.quick)
    shapes = args.shapes or list(QUICK_SHAPES if args.quick else SHAPES)
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="bf16-rowscan-"))
    if args.build_only:
        return build_only(cfgs, build_dir, (9, 0))
    from numba.core import config as numba_config

    if numba_config.ENABLE_CUDASIM:
        print(f"{BENCH_NAME}: needs a GPU (not the simulator): the CUB contenders run on it")
        return 1
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        print(f"{BENCH_NAME}: needs torch (the data, the checks and a contender)", flush=True)
        return 1
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        print(
            f"{BENCH_NAME}: needs ml_dtypes (numba-cuda and cuda.core type bfloat16 tensors "
            "through it): pip install ml_dtypes",
            flush=True,
        )
        return 1
    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    try:
        name = cuda.get_current_device().name
        _common.emit("DEVICE", name=name.decode() if isinstance(name, bytes) else name)
        results = run(shapes, cfgs, build_dir, args.reps, args.warmup, args.quick)
    except Exception:
        traceback.print_exc()
        return 1
    lines = report_lines(results)
    print("\n".join(lines), flush=True)
    if args.out is not None:
        write_outputs(results, args.out, lines)
    entries = [e for _, es in results for e in es]
    failed = [e for e in entries if not e.ok and e.impl in ("project", "cub_cpp")]
    peers_wrong = [e for e in entries if not e.ok and e.impl in ("torch", "triton")]
    print(
        f"{BENCH_NAME}: {len(entries)} contenders, {len(failed)} project/CUB failed, "
        f"{len(peers_wrong)} torch/Triton wrong or not run (reported, not failing), "
        f"{len(SETUP_ERRORS)} could not be set up",
        flush=True,
    )
    for line in SETUP_ERRORS:
        print(f"  not set up: {line[:300]}", flush=True)
    return 1 if failed or SETUP_ERRORS or not entries else 0


if __name__ == "__main__":
    sys.exit(main())
