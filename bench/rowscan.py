# SPDX-License-Identifier: Apache-2.0
"""Row-wise inclusive sum with ``scan.block`` and a ``statefn`` prefix callback.

Three jobs, one per mode:

``python bench/rowscan.py [--dtype int32] [--shape RxC] ...``
    Times the project's kernels (one block per row, a tile loop of
    ``block.load`` / ``block.inclusive_sum`` / ``block.store``) in two variants:
    ``prefix_op`` (the running total is a ``@statefn.stateful`` callback) and
    ``hand_carried`` (the same scan without a callback; every thread adds a
    carried total, of the callback state's dtype, that the block's last thread
    broadcasts through shared memory). Each result is checked in full on the
    device and on several rows on the host. Also reports registers, local
    memory and LDL/STL/LDS/STS counts of every kernel's SASS (``cuobjdump``),
    and writes the full SASS of the headline kernel to ``--sass-file``.

``python bench/rowscan.py --first-launch``
    Time to first launch, in fresh processes (see ``docs/performance.md``): a
    plain Numba row-copy kernel with the same tile loop, the scan kernel with an
    empty provider cache (cold) and the scan kernel again with that cache filled
    (warm).

``python bench/rowscan.py --first-launch-child {plain,scan}``
    One such fresh process (used by ``--first-launch``).
"""

from __future__ import annotations

import time

# Taken before any heavy import: the first-launch children measure from here.
_T0 = time.perf_counter()

import argparse  # noqa: E402
import functools  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402
from _rowscan_kernels import (  # noqa: E402
    CONFIGS,
    DTYPES,
    EXTRA_STATE,
    HEADLINE,
    MAIN_STATE,
    KernelConfig,
    check,
    elapsed_ms,
    fill,
    kernel_sass,
    make_hand_carried_kernel,
    make_plain_copy_kernel,
    make_prefix_kernel,
    poison,
)
from numba import cuda  # noqa: E402

# ---------------------------------------------------------------------------- timing


@dataclass
class _Job:
    impl: str
    cfg: KernelConfig
    state: str
    build: Callable[[], Any]
    kernel: Any = None
    compile_s: float | None = None
    sass_done: bool = False


def _jobs(dtype: str, configs: tuple[KernelConfig, ...]) -> list[_Job]:
    jobs: list[_Job] = []
    main_state = MAIN_STATE[dtype]
    for cfg in configs:
        jobs.append(
            _Job(
                "scan_prefix_op",
                cfg,
                main_state,
                functools.partial(make_prefix_kernel, cfg, dtype, main_state),
            )
        )
        jobs.append(
            _Job(
                "scan_hand_carried",
                cfg,
                main_state,
                functools.partial(make_hand_carried_kernel, cfg, dtype, main_state),
            )
        )
        if cfg == HEADLINE:
            extra = EXTRA_STATE[dtype]
            jobs.append(
                _Job(
                    "scan_prefix_op",
                    cfg,
                    extra,
                    functools.partial(make_prefix_kernel, cfg, dtype, extra),
                )
            )
            jobs.append(
                _Job(
                    "scan_hand_carried",
                    cfg,
                    extra,
                    functools.partial(make_hand_carried_kernel, cfg, dtype, extra),
                )
            )
    return jobs


def _context_alive() -> bool:

    try:
        cuda.synchronize()
    except Exception:
        return False
    return True


def run_timings(args: argparse.Namespace) -> int:
    """Time every configuration for the requested dtypes and shapes; return a failure count."""
    # small grids (--quick) make numba-cuda warn about occupancy; that is expected here
    warnings.filterwarnings("ignore", message=".*[Gg]rid size.*")
    warnings.filterwarnings("ignore", category=Warning, module=r"numba\..*")
    device = cuda.get_current_device()
    name = getattr(device, "name", "unknown")
    name = name.decode() if isinstance(name, bytes) else str(name)
    cc = getattr(device, "compute_capability", ())
    _common.emit("DEVICE", name=name, cc=".".join(map(str, cc)))
    configs = CONFIGS if args.configs == "all" else (HEADLINE,)
    sass_file = Path(args.sass_file) if args.sass_file else None
    failures = 0

    for dtype in args.dtypes:
        jobs = _jobs(dtype, configs)
        for rows, cols in args.shapes:
            d_src = cuda.device_array((rows, cols), dtype=getattr(np, dtype))
            d_dst = cuda.device_array((rows, cols), dtype=getattr(np, dtype))
            fill(d_src)
            cuda.synchronize()
            for job in jobs:
                label: dict[str, object] = {
                    "impl": job.impl,
                    "dtype": dtype,
                    "rows": rows,
                    "cols": cols,
                    "config": job.cfg.name,
                    "state": job.state,
                }
                try:
                    _time_one(job, d_src, d_dst, label, args, sass_file)
                except Exception as exc:
                    failures += 1
                    _common.emit_error(exc, **label)
                    if not _context_alive():
                        _common.emit("ERROR", **label, fatal=1, msg="CUDA context lost; stopping")
                        return failures + 1
            del d_src, d_dst
    return failures


def _time_one(
    job: _Job,
    d_src: Any,
    d_dst: Any,
    label: dict[str, object],
    args: argparse.Namespace,
    sass_file: Path | None,
) -> None:

    rows, cols = d_src.shape
    if job.kernel is None:
        started = time.perf_counter()
        job.kernel = job.build()
        # the first launch below compiles; its time is reported once
        poison(d_dst)
        job.kernel[rows, job.cfg.block](d_src, d_dst)
        cuda.synchronize()
        job.compile_s = time.perf_counter() - started
    kernel = job.kernel

    def launch() -> None:
        kernel[rows, job.cfg.block](d_src, d_dst)

    poison(d_dst)
    launch()
    cuda.synchronize()
    ok = check(d_src, d_dst, label)
    times = _common.time_launches(
        launch,
        cuda.event,  # timing is on by default
        elapsed_ms,
        reps=args.reps,
        warmup=args.warmup,
    )
    ok = check(d_src, d_dst, label) and ok
    med = _common.median(times)
    extra: dict[str, object] = {}
    if job.compile_s is not None:
        extra["first_launch_s"] = job.compile_s
        job.compile_s = None
    _common.emit(
        "RESULT",
        **label,
        block=job.cfg.block,
        items=job.cfg.items,
        io=job.cfg.io,
        algo=job.cfg.algo,
        median_ms=med,
        min_ms=min(times),
        gbps=_common.gbps(rows, cols, d_src.dtype.itemsize, med),
        ok=ok,
        reps=len(times),
        **extra,
    )
    if not job.sass_done:
        job.sass_done = True
        _report_sass(job, label, sass_file)


def _report_sass(job: _Job, label: dict[str, object], sass_file: Path | None) -> None:
    try:
        text, stats = kernel_sass(job.kernel)
    except Exception as exc:
        _common.emit_error(exc, **label, stage="sass")
        return
    _common.emit(
        "SASS",
        impl=job.impl,
        dtype=label["dtype"],
        config=job.cfg.name,
        state=job.state,
        function=stats.function,
        instructions=stats.instructions,
        regs=stats.regs if stats.regs is not None else -1,
        local_bytes=stats.local_bytes if stats.local_bytes is not None else -1,
        stack_bytes=stats.stack_bytes if stats.stack_bytes is not None else -1,
        shared_bytes=stats.shared_bytes if stats.shared_bytes is not None else -1,
        ldl=stats.ldl,
        stl=stats.stl,
        lds=stats.lds,
        sts=stats.sts,
    )
    if sass_file is not None and job.cfg == HEADLINE and text:
        with sass_file.open("a", encoding="utf-8") as fh:
            fh.write(
                f"\n==== {job.impl} dtype={label['dtype']} config={job.cfg.name} "
                f"state={job.state} ====\n{text}\n"
            )


# ---------------------------------------------------------------------------- first launch

#: configurations a warm first-launch process compiles next (none is HEADLINE)
NEW_CONFIGS = (
    KernelConfig(128, 4, "vectorize"),
    KernelConfig(256, 4, "vectorize"),
    KernelConfig(512, 2, "direct"),
    KernelConfig(128, 8, "warp_transpose"),
)
FIRST_LAUNCH_SHAPE = (1024, 16384)
QUICK_FIRST_LAUNCH_SHAPE = (64, 4096)


def first_launch_child(mode: str, label: str, rows: int, cols: int) -> int:
    """Measure one process's first launch (see the module docstring) and print a record."""

    if mode == "scan":
        import statefn  # noqa: F401
        from scan import block  # noqa: F401
    t_import = time.perf_counter()

    cuda.current_context()
    host = _common.element_value(np.arange(rows * cols, dtype=np.int64)).astype(np.int32)
    host = host.reshape(rows, cols)
    d_src = cuda.to_device(host)
    d_dst = cuda.device_array_like(d_src)
    cuda.synchronize()
    t_ready = time.perf_counter()

    def launch(cfg: KernelConfig) -> None:
        if mode == "scan":
            kernel = make_prefix_kernel(cfg, "int32", MAIN_STATE["int32"])
        else:
            kernel = make_plain_copy_kernel(cfg)
        kernel[rows, cfg.block](d_src, d_dst)
        cuda.synchronize()

    launch(HEADLINE)
    t_done = time.perf_counter()

    out = d_dst.copy_to_host()
    expected = np.cumsum(host, axis=1, dtype=np.int64) if mode == "scan" else host
    ok = bool(np.array_equal(out.astype(np.int64), expected.astype(np.int64)))

    # the same process, warm: kernels of configurations it has not compiled
    # yet (threads, items), launched one after the other (the first of them
    # makes the process's precompiled CUB headers, the others use them)
    new_config_s = []
    for cfg in NEW_CONFIGS:
        t = time.perf_counter()
        launch(cfg)
        new_config_s.append(time.perf_counter() - t)
        out = d_dst.copy_to_host()
        ok = ok and bool(np.array_equal(out.astype(np.int64), expected.astype(np.int64)))
    _common.emit(
        "FL_CHILD",
        mode=mode,
        cache=label,
        rows=rows,
        cols=cols,
        import_s=t_import - _T0,
        setup_s=t_ready - t_import,
        first_launch_s=t_done - t_ready,
        to_first_launch_s=t_done - _T0,
        new_config_s=",".join(f"{x:.4f}" for x in new_config_s),
        new_config_median_s=float(np.median(new_config_s)),
        ok=ok,
    )
    return 0 if ok else 1


def _compile_project_sources() -> None:
    """Byte-compile the library's sources when run from a source tree, as pip does for a wheel.

    Otherwise, where bytecode is not written (``PYTHONDONTWRITEBYTECODE``),
    every child would compile the library's modules from source on import
    (about 0.05 s on the 2-core machine), which an installed library never does,
    while numba-cuda comes installed.
    """
    import compileall

    import scan
    import statefn

    for package in (scan, statefn):
        folder = Path(package.__file__).parent
        if not os.access(folder, os.W_OK):
            continue
        ok = compileall.compile_dir(str(folder), quiet=1)
        print(f"first launch: byte-compiled {folder} ({'ok' if ok else 'with errors'})")


def first_launch(args: argparse.Namespace) -> int:
    """Run the first-launch children in order and print one FIRST_LAUNCH record each."""
    rows, cols = QUICK_FIRST_LAUNCH_SHAPE if args.quick else FIRST_LAUNCH_SHAPE
    repeats = 1 if args.quick else 7
    scan_cache = tempfile.mkdtemp(prefix="statefn-scan-cache-")
    # cold ones first, each with an empty cache (the last one's fills the
    # cache), then plain and warm in turns, so that drift in the machine's load
    # hits both kinds alike
    colds = 1 if args.quick else args.cold_repeats
    plan = [("scan", "cold")] * colds + [("plain", "none"), ("scan", "warm")] * repeats
    _compile_project_sources()
    failures = 0
    try:
        for mode, label in plan:
            env = dict(os.environ)
            env["PYTHONUNBUFFERED"] = "1"
            if label == "cold":
                shutil.rmtree(scan_cache, ignore_errors=True)
                os.makedirs(scan_cache)
            if mode == "scan":
                env["STATEFN_SCAN_CACHE_DIR"] = scan_cache
            argv = [sys.executable, str(Path(__file__).resolve()), "--first-launch-child", mode]
            argv += ["--cache-label", label, "--shape", f"{rows}x{cols}"]
            started = time.perf_counter()
            proc = subprocess.run(
                argv, env=env, capture_output=True, text=True, timeout=args.child_timeout
            )
            process_s = time.perf_counter() - started
            record = None
            for line in proc.stdout.splitlines():
                parsed = _common.parse_record(line)
                if parsed is not None and parsed["tag"] == "FL_CHILD":
                    record = parsed
                else:
                    print(line)
            if proc.returncode != 0 or record is None:
                failures += 1
                sys.stderr.write(proc.stderr[-4000:])
                _common.emit(
                    "ERROR",
                    impl="first_launch",
                    mode=mode,
                    cache=label,
                    msg=f"child exited with {proc.returncode}; stderr tail above",
                )
                continue
            fields = {k: v for k, v in record.items() if k != "tag"}
            _common.emit("FIRST_LAUNCH", **fields, process_s=process_s)
    finally:
        shutil.rmtree(scan_cache, ignore_errors=True)
    return failures


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    _common.add_common_args(parser, dtypes=DTYPES)
    parser.add_argument(
        "--configs",
        choices=("all", "headline"),
        default="all",
        help="all configurations of cub_rowscan.cu, or only the headline one",
    )
    parser.add_argument("--sass-file", help="append the headline kernels' full SASS here")
    parser.add_argument("--first-launch", action="store_true", help="time to first launch")
    parser.add_argument("--first-launch-child", choices=("plain", "scan"), help=argparse.SUPPRESS)
    parser.add_argument("--cache-label", default="none", help=argparse.SUPPRESS)
    parser.add_argument("--child-timeout", type=float, default=180.0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--cold-repeats", type=int, default=3, help="first launches with an empty cache (default 3)"
    )
    args = parser.parse_args(argv)

    if args.first_launch_child:
        rows, cols = args.shapes[0] if args.shapes else FIRST_LAUNCH_SHAPE
        return first_launch_child(args.first_launch_child, args.cache_label, rows, cols)
    _common.resolve_common_args(args, DTYPES)
    if args.first_launch:
        return 1 if first_launch(args) else 0
    return 1 if run_timings(args) else 0


if __name__ == "__main__":
    sys.exit(main())
