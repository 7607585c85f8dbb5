# SPDX-License-Identifier: Apache-2.0
"""Row-wise adjacent differences and run heads: ``block.adjacent_difference`` and
``block.flag_heads`` against the same CUB calls in CUDA C++.

One thread block per row walks its row tile by tile (int32 items): a tile
load, then

``diff``
    ``out[i] = x[i] - x[i - 1]`` (``x[-1] = 0``): the library's
    ``block.adjacent_difference(items, carry=carry)``; CUB's
    ``BlockAdjacentDifference::SubtractLeft`` with the tile's predecessor;
``heads``
    ``out[i] = x[i] != x[i - 1]`` (``x[-1] = 0``): the library's
    ``block.flag_heads(flags, items, carry=carry)``; CUB's
    ``BlockDiscontinuity::FlagHeads`` with the tile's predecessor;

and a tile store. The library's kernels are the docs' (docs/neighbours.md):
``carry=`` hands each tile's last item to the next tile through the call (a
shared slot and a barrier); the CUB C++ kernels (``bench/cub_neighbours.cu``)
read the predecessor from global memory in thread 0, as a CUB user writes it.

Configurations: threads x items (128, 4), (256, 4), (256, 8), (512, 4), tile
I/O ``vectorize`` and ``warp_transpose`` named in both (``--quick``: 256 x 4
only). Shapes 16384 x 8192 and 262144 x 512 (512 MiB each way; ``--quick``:
small ones with partial tiles). The target: the library's best at 0.98 of
CUB's best, per task and shape (and the same-configuration ratios beside).

Checks: every output is poisoned (-1), computed once and compared with NumPy
exactly, again after timing; a wrong kernel fails the run.

Timing: ``_harness.time_entries``: every contender once a round, in an order
rotated from round to round, CUDA events between consecutive launches on the
legacy default stream, each round behind a kernel holding the stream until
the round is enqueued; the result is the median of ``--reps`` rounds after
``--warmup``.

Outputs (``--out``): ``neighbours.md`` (the tables), ``neighbours.csv`` (every
contender's median) and ``neighbours_samples.json.gz`` (every timed sample).

    python bench/neighbours_bench.py [--quick] [--reps 30] [--out DIR]
    python bench/neighbours_bench.py --build-only     # compile everything, no GPU
"""

from __future__ import annotations

import argparse
import csv
import functools
import gzip
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import _common  # noqa: E402
import _harness  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

BENCH_NAME = "neighbours"
CU_SOURCE = BENCH / "cub_neighbours.cu"
TASKS: tuple[str, ...] = ("diff", "heads")
SHAPES: tuple[tuple[int, int], ...] = ((16384, 8192), (262144, 512))
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 8708), (1024, 516))
THREADS_ITEMS: tuple[tuple[int, int], ...] = ((128, 4), (256, 4), (256, 8), (512, 4))
IO: tuple[str, ...] = ("vectorize", "warp_transpose")
SPEED_TARGET = 0.98
SEED = 20261206


@dataclass(frozen=True)
class Config:
    """One kernel configuration: threads x items and the tile I/O algorithm."""

    threads: int
    items: int
    io: str

    @property
    def label(self) -> str:
        return f"t{self.threads}_i{self.items}_{self.io}"


def configs(quick: bool = False) -> tuple[Config, ...]:
    """The configurations of a run."""
    pairs = ((256, 4),) if quick else THREADS_ITEMS
    return tuple(Config(t, i, io) for t, i in pairs for io in IO)


# ---------------------------------------------------------------------------- the library's kernels


@functools.cache
def project_kernel(task: str, cfg: Config) -> Any:
    """The docs' kernel of `task` with `cfg`'s shape and tile I/O."""
    from scan import block

    ITEMS, IO_NAME = cfg.items, cfg.io

    if task == "diff":

        def kernel(src: Any, dst: Any) -> None:
            row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
            items = cuda.local.array(ITEMS, np.int32)
            carry = cuda.local.array(1, np.int32)
            carry[0] = 0
            for base in block.tiles(row.shape[0], items):
                block.load(row, base, items, oob_default=0, algorithm=IO_NAME)
                block.adjacent_difference(items, carry=carry)
                block.store(out, base, items, algorithm=IO_NAME)

    else:

        def kernel(src: Any, dst: Any) -> None:
            row, out = src[cuda.blockIdx.x], dst[cuda.blockIdx.x]
            items = cuda.local.array(ITEMS, np.int32)
            flags = cuda.local.array(ITEMS, np.int32)
            carry = cuda.local.array(1, np.int32)
            carry[0] = 0
            for base in block.tiles(row.shape[0], items):
                block.load(row, base, items, oob_default=0, algorithm=IO_NAME)
                block.flag_heads(flags, items, carry=carry)
                block.store(out, base, flags, algorithm=IO_NAME)

    return cuda.jit(kernel)


def project_signature() -> tuple[Any, ...]:
    """The project kernels' argument types: int32 rows in and out."""
    from numba.cuda import types

    return (types.int32[:, ::1], types.int32[:, ::1])


# ---------------------------------------------------------------------------- the CUB C++ kernels


@dataclass
class CubUnit:
    """One nvcc job: every task and tile I/O of one threads x items."""

    threads: int
    items: int
    cubin: Path
    ok: bool = False
    seconds: float = 0.0
    message: str = ""
    usage: dict[str, str] = field(default_factory=dict)


def cub_symbol(task: str, cfg: Config) -> str:
    return f"neighbours_{task}_t{cfg.threads}_i{cfg.items}_{cfg.io}"


def build_cub(cfgs: Sequence[Config], build_dir: Path, cc: tuple[int, int]) -> dict[Config, Path]:
    """Compile the CUB kernels of `cfgs` (one nvcc job a threads x items); their cubins."""
    from _toolchain import find_tool

    build_dir.mkdir(parents=True, exist_ok=True)
    pairs = sorted({(c.threads, c.items) for c in cfgs})
    units = [CubUnit(t, i, build_dir / f"cub_neighbours_t{t}_i{i}.cubin") for t, i in pairs]

    def build_one(unit: CubUnit, nvcc: str) -> CubUnit:
        lines = [
            "// generated by bench/neighbours_bench.py: the kernels of one nvcc job",
            "#define NEIGHBOURS_GENERATED_INSTANCES",
            f'#include "{CU_SOURCE}"',
            *(
                f"NEIGHBOURS_KERNEL({task}, {unit.threads}, {unit.items}, {io})"
                for task in TASKS
                for io in IO
            ),
        ]
        built: CubUnit = _harness.build_nvcc_unit(unit, nvcc, cc, CU_SOURCE, lines)
        return built

    _harness.build_nvcc_units(BENCH_NAME, units, build_one, find_tool("nvcc"), cc)
    ok = {(u.threads, u.items): u.cubin for u in units if u.ok}
    return {c: ok[(c.threads, c.items)] for c in cfgs if (c.threads, c.items) in ok}


# ---------------------------------------------------------------------------- data, contenders


@dataclass
class Data:
    """One shape's input on the device and each task's NumPy result."""

    rows: int
    cols: int
    src: Any
    out: Any
    refs: dict[str, Any]

    @property
    def bytes(self) -> int:
        """Bytes read and written: 4 each way an item."""
        return 8 * self.rows * self.cols


def make_data(rows: int, cols: int) -> Data:
    """Rows of runs (each value repeated 1 to a few times), so both tasks have work."""
    rng = np.random.default_rng(SEED + rows)
    steps = rng.integers(-5, 6, (rows, cols), dtype=np.int32)
    steps[rng.random((rows, cols)) < 0.5] = 0
    host = np.cumsum(steps, axis=1, dtype=np.int32)
    previous = np.concatenate([np.zeros((rows, 1), np.int32), host[:, :-1]], axis=1)
    refs = {"diff": host - previous, "heads": (host != previous).astype(np.int32)}
    return Data(rows, cols, cuda.to_device(host), cuda.device_array_like(host), refs)


@dataclass
class Entry:
    """One contender of one (task, shape)."""

    impl: str  # "project" or "cub_cpp"
    task: str
    cfg: Config
    launch: Callable[[], None]
    ok: bool = True
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


def check(entry: Entry, data: Data, stage: str) -> bool:
    """Poison the output, launch once, compare with NumPy exactly."""
    data.out.copy_to_device(np.full((data.rows, data.cols), -1, np.int32))
    entry.launch()
    cuda.synchronize()
    got = data.out.copy_to_host()
    bad = int(np.count_nonzero(got != data.refs[entry.task]))
    if bad:
        _common.emit(
            "MISMATCH",
            bench=BENCH_NAME,
            impl=entry.impl,
            task=entry.task,
            config=entry.cfg.label,
            stage=stage,
            bad_elements=bad,
            of=got.size,
        )
    entry.ok = entry.ok and bad == 0
    return bad == 0


def entries(
    task: str, data: Data, cfgs: Sequence[Config], cubins: dict[Config, Path]
) -> list[Entry]:
    """The project's and CUB's contenders of `task` on `data`."""
    out: list[Entry] = []
    for cfg in cfgs:
        configured = project_kernel(task, cfg)[data.rows, cfg.threads]

        def project(configured: Any = configured) -> None:
            configured(data.src, data.out)

        out.append(Entry("project", task, cfg, project))
        if cfg in cubins:
            out.append(Entry("cub_cpp", task, cfg, _cub_launch(data, cubins[cfg], task, cfg)))
    return out


def _cub_launch(data: Data, cubin: Path, task: str, cfg: Config) -> Callable[[], None]:
    core, stream = _harness.cub_runtime()
    kernel = _harness.load_cubin(cubin).get_kernel(cub_symbol(task, cfg))
    config = core.LaunchConfig(grid=data.rows, block=cfg.threads)
    args = (
        np.uint64(_harness.device_pointer(data.src)),
        np.uint64(_harness.device_pointer(data.out)),
        np.int32(data.cols),
    )

    def launch() -> None:
        core.launch(stream, config, kernel, *args)

    return launch


# ---------------------------------------------------------------------------- run and report


def run(
    shapes: Sequence[tuple[int, int]], cfgs: Sequence[Config], reps: int, warmup: int, build: Path
) -> list[tuple[Data, list[Entry]]]:
    """Every (task, shape): check, time in interleaved rounds, check again."""
    cc = _harness.target_cc()
    cubins = build_cub(cfgs, build, cc)
    spin = _harness.Spinner(cc)
    results = []
    for rows, cols in shapes:
        data = make_data(rows, cols)
        for task in TASKS:
            group = entries(task, data, cfgs, cubins)
            for entry in group:
                check(entry, data, "before")
            _harness.time_entries(
                group,
                spin,
                reps,
                warmup,
                lambda e: {"bench": BENCH_NAME, "impl": e.impl, "config": e.cfg.label},
            )
            for entry in group:
                if entry.ok:
                    check(entry, data, "after")
            results.append((data, group))
            print(f"[{BENCH_NAME}] {task} {rows}x{cols}: {len(group)} contenders", flush=True)
    return results


def _best(group: Sequence[Entry], impl: str) -> Entry | None:
    live = [e for e in group if e.impl == impl and e.ok and e.times]
    return min(live, key=lambda e: e.median_ms) if live else None


def report_lines(results: Sequence[tuple[Data, list[Entry]]]) -> list[str]:
    """Markdown: per task and shape, every configuration, then the best against the best."""
    lines = [
        "# Adjacent differences and run heads: the library against CUB C++",
        "",
        "Median ms of the timed rounds (CUDA events); GB/s counts 4 bytes read and 4 written "
        f"an item; speed = CUB ms / project ms (target: best against best >= {SPEED_TARGET}).",
    ]
    for data, group in results:
        task = group[0].task if group else "?"
        lines += [
            "",
            f"## {task}, {data.rows} x {data.cols}",
            "",
            "| threads x items | io | CUB ms | project ms | project GB/s | speed |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for cfg in dict.fromkeys(e.cfg for e in group):
            p = next((e for e in group if e.impl == "project" and e.cfg == cfg), None)
            c = next((e for e in group if e.impl == "cub_cpp" and e.cfg == cfg), None)
            pm = p.median_ms if p and p.ok else float("nan")
            cm = c.median_ms if c and c.ok else float("nan")
            lines.append(
                f"| {cfg.threads} x {cfg.items} | {cfg.io} | {cm:.4f} | {pm:.4f} | "
                f"{data.bytes / pm / 1e6:.0f} | {cm / pm:.3f} |"
            )
        bp, bc = _best(group, "project"), _best(group, "cub_cpp")
        if bp and bc:
            speed = bc.median_ms / bp.median_ms
            verdict = "PASS" if speed >= SPEED_TARGET else "FAIL"
            lines += [
                "",
                f"- best project: {bp.cfg.label} {bp.median_ms:.4f} ms; best CUB: "
                f"{bc.cfg.label} {bc.median_ms:.4f} ms; speed {speed:.3f} ({verdict})",
            ]
    return lines


def write_outputs(results: Sequence[tuple[Data, list[Entry]]], out: Path, lines: list[str]) -> None:
    """The report, the CSV of medians and every timed sample."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{BENCH_NAME}.md").write_text("\n".join(lines) + "\n")
    samples = []
    with open(out / f"{BENCH_NAME}.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["task", "rows", "cols", "impl", "config", "ok", "median_ms", "gbps"])
        for data, group in results:
            for e in group:
                gbps = data.bytes / e.median_ms / 1e6 if e.times else float("nan")
                row = [e.task, data.rows, data.cols, e.impl, e.cfg.label, e.ok, e.median_ms, gbps]
                writer.writerow(row)
                samples.append(
                    {
                        "task": e.task,
                        "shape": [data.rows, data.cols],
                        "impl": e.impl,
                        "config": e.cfg.label,
                        "ms": e.times,
                    }
                )
    with gzip.open(out / f"{BENCH_NAME}_samples.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(samples, fh)


def build_only(cfgs: Sequence[Config], build: Path, cc: tuple[int, int]) -> int:
    """Compile every project kernel (``scan.compile``, no GPU) and, with nvcc, CUB's."""
    import scan

    failed = 0
    for task in TASKS:
        for cfg in cfgs:
            try:
                scan.compile(
                    project_kernel(task, cfg), project_signature(), cc=cc, block=cfg.threads
                )
            except Exception as exc:
                failed += 1
                print(f"  project {task} {cfg.label}: FAILED {type(exc).__name__}: {exc}")
    built = build_cub(cfgs, build, cc)
    print(
        f"[{BENCH_NAME}] project: {len(TASKS) * len(cfgs) - failed} compiled, {failed} failed; "
        f"cub_cpp: {len(built)} of {len(cfgs)} configurations built"
    )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small shapes, 256 x 4 only")
    parser.add_argument("--reps", type=int, default=30, help="timed rounds")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--out", type=Path, help="write the report, CSV and samples here")
    parser.add_argument("--build-dir", type=Path, help="where cubins go (default: a temp folder)")
    parser.add_argument("--build-only", action="store_true", help="compile only (no GPU needed)")
    args = parser.parse_args(argv)
    cfgs = configs(args.quick)
    build = args.build_dir or Path(tempfile.mkdtemp(prefix="neighbours_bench_"))
    if args.build_only:
        return build_only(cfgs, build, (9, 0))
    results = run(QUICK_SHAPES if args.quick else SHAPES, cfgs, args.reps, args.warmup, build)
    lines = report_lines(results)
    print("\n".join(lines), flush=True)
    if args.out:
        write_outputs(results, args.out, lines)
    return _harness.run_outcome(BENCH_NAME, [e for _, group in results for e in group], [])


if __name__ == "__main__":
    sys.exit(main())
