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
from typing import Any, Literal  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

DTYPES = ("int32", "float32")

#: ``block.load`` / ``block.store`` algorithms used here
TileIO = Literal["direct", "striped", "vectorize", "transpose", "warp_transpose"]
#: ``block.inclusive_sum`` algorithms
ScanAlgorithm = Literal["raking", "raking_memoize", "warp_scans"]

# ---------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class KernelConfig:
    """One kernel configuration.

    Attributes
    ----------
    block : int
        Threads per block.
    items : int
        Items per thread (the local array's length).
    io : str
        ``block.load`` / ``block.store`` algorithm.
    algo : str
        ``block.inclusive_sum`` algorithm.
    launch_bounds : bool
        Whether the project's kernels declare the block size to the compiler
        (``cuda.jit(launch_bounds=block)``; the C++ kernels declare none). With
        it, ptxas allocates registers knowing how many threads share the
        multiprocessor.
    """

    block: int
    items: int
    io: TileIO
    algo: ScanAlgorithm = "warp_scans"
    launch_bounds: bool = False

    @property
    def tile(self) -> int:
        """Items per tile (``block * items``)."""
        return self.block * self.items

    @property
    def name(self) -> str:
        """Configuration label, as the C++ benchmark spells it."""
        return f"b{self.block}_i{self.items}_{self.io}_{self.algo}"


#: the configurations of ``cub_rowscan.cu``
CONFIGS: tuple[KernelConfig, ...] = (
    KernelConfig(128, 16, "warp_transpose"),
    KernelConfig(256, 8, "warp_transpose"),
    KernelConfig(256, 4, "vectorize"),
    KernelConfig(512, 4, "vectorize"),
    # declaring the block size makes the hand-carried kernel 3-6% faster here
    # (and gives prefix_op 32 registers instead of 39-40, at the same speed)
    KernelConfig(256, 8, "direct", launch_bounds=True),
    KernelConfig(256, 8, "warp_transpose", "raking"),
)
#: the configuration whose SASS is written in full and that first-launch timing uses
HEADLINE = KernelConfig(256, 8, "warp_transpose")
#: state dtype of the prefix callback, per value dtype (all configurations)
MAIN_STATE = {"int32": "int64", "float32": "float32"}
#: a second state dtype, per value dtype, run for the headline configuration only
EXTRA_STATE = {"int32": "int32", "float32": "float64"}

# ---------------------------------------------------------------------------- kernels


def kernel_jit(cfg: KernelConfig) -> Any:
    """``cuda.jit``, with ``launch_bounds=cfg.block`` where the configuration asks for it.

    The simulator takes no launch bounds (nor needs them).
    """
    from numba.core import config

    if cfg.launch_bounds and not config.ENABLE_CUDASIM:
        return cuda.jit(launch_bounds=cfg.block)
    return cuda.jit


def kernel_constants(
    cfg: KernelConfig, dtype: str, second_dtype: str
) -> tuple[Any, Any, int, int, TileIO, ScanAlgorithm]:
    """What a tile-loop kernel closes over: the value type, a second type (the
    callback state's or the carried total's), items per thread, tile, and the
    I/O and scan algorithms."""
    return getattr(np, dtype), getattr(np, second_dtype), cfg.items, cfg.tile, cfg.io, cfg.algo


def _running_total_op(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@functools.cache
def running_total(state_dtype: str) -> Any:
    """The ``running_total`` prefix callback with the given state dtype."""

    import statefn

    return statefn.stateful(getattr(np, state_dtype), name=f"running_total_{state_dtype}")(
        _running_total_op
    )


def make_prefix_kernel(
    cfg: KernelConfig, dtype: str, state_dtype: str, *, auto_sync: bool = True
) -> Any:
    """Row-wise inclusive sum carrying the running total in a stateful prefix callback.

    Parameters
    ----------
    cfg : KernelConfig
        Block size, items per thread and algorithms (closed over as constants).
    dtype, state_dtype : str
        Value and callback-state dtype names (``"int32"``, ``"int64"``, ...).
    auto_sync : bool
        Passed to the scan (``bench/callback_variants.py`` compares both).

    Returns
    -------
    numba.cuda.dispatcher.CUDADispatcher
        ``kernel[rows, cfg.block](src, dst)`` for 2-D C-contiguous arrays.
    """

    from scan import block

    VALUE, STATE, ITEMS, TILE, IO, ALGO = kernel_constants(cfg, dtype, state_dtype)
    AUTO_SYNC = auto_sync
    total = running_total(state_dtype)

    @kernel_jit(cfg)  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, STATE)
        state[0] = 0
        items = cuda.local.array(ITEMS, VALUE)
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, items, algorithm=IO)
            block.inclusive_sum(
                items,
                items,
                prefix_op=total,
                prefix_state=state,
                algorithm=ALGO,
                auto_sync=AUTO_SYNC,
            )
            block.store(dst[row], base, items, algorithm=IO)

    return row_cumsum


def make_hand_carried_kernel(
    cfg: KernelConfig, dtype: str, carry_dtype: str, *, auto_sync: bool = False
) -> Any:
    """The same tile loop without a callback: the running total is carried by hand.

    The arithmetic is the callback's: the carried total has the callback
    state's dtype, each tile adds it (converted to the value dtype) to every
    scanned item, then adds the tile's aggregate to it. The block's last thread
    publishes the aggregate (its last scanned item) in shared memory and every
    thread reads it after a barrier; two slots alternate, so a slot is never
    rewritten before every thread has read it.

    Parameters
    ----------
    cfg : KernelConfig
        Block size, items per thread and algorithms.
    dtype, carry_dtype : str
        Value dtype name, and dtype of the carried total (the compared
        callback's state dtype).
    auto_sync : bool
        Passed to the scan. The default ``False`` is safe here, since the
        kernel's own barrier separates one tile's scan from the next, and
        gives the fewest barriers: two per tile, as in the ``prefix_op`` kernel.

    Returns
    -------
    numba.cuda.dispatcher.CUDADispatcher
        ``kernel[rows, cfg.block](src, dst)``.
    """

    from scan import block

    VALUE, CARRY, ITEMS, TILE, IO, ALGO = kernel_constants(cfg, dtype, carry_dtype)
    ZERO = CARRY(0)
    LAST_ITEM = cfg.items - 1
    LAST_THREAD = cfg.block - 1
    AUTO_SYNC = auto_sync

    @kernel_jit(cfg)  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum_by_hand(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        last = cuda.shared.array(2, VALUE)
        items = cuda.local.array(ITEMS, VALUE)
        carry = ZERO
        slot = 0
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, items, algorithm=IO)
            block.inclusive_sum(items, items, algorithm=ALGO, auto_sync=AUTO_SYNC)
            if cuda.threadIdx.x == LAST_THREAD:
                last[slot] = items[LAST_ITEM]
            prefix = VALUE(carry)
            for i in range(ITEMS):
                items[i] += prefix
            cuda.syncthreads()
            carry += CARRY(last[slot])
            slot ^= 1
            block.store(dst[row], base, items, algorithm=IO)

    return row_cumsum_by_hand


def make_plain_copy_kernel(cfg: KernelConfig) -> Any:
    """A plain Numba row copy with the same grid and tile loop (first-launch baseline)."""

    ITEMS = cfg.items
    BLOCK = cfg.block
    TILE = cfg.tile

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_copy(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        cols = src.shape[1]
        for base in range(0, cols, TILE):
            for i in range(ITEMS):
                col = base + i * BLOCK + tid
                if col < cols:
                    dst[row, col] = src[row, col]

    return row_copy


# ---------------------------------------------------------------------------- device helpers


@dataclass(frozen=True)
class _Helpers:
    fill: Any
    poison: Any
    count_bad: Any


@functools.cache
def _helpers() -> _Helpers:

    value_of = cuda.jit(device=True)(_common.element_value)

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def fill(flat: Any) -> None:
        for i in range(cuda.grid(1), flat.size, cuda.gridsize(1)):
            flat[i] = value_of(i)

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def poison(flat: Any, value: Any) -> None:
        for i in range(cuda.grid(1), flat.size, cuda.gridsize(1)):
            flat[i] = value

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def count_bad(src: Any, dst: Any, bad: Any) -> None:
        # out[r, 0] == in[r, 0] and out[r, c] - out[r, c - 1] == in[r, c]: exact for
        # integer-valued data, so this checks every element of every row.
        cols = src.shape[1]
        local = 0
        for i in range(cuda.grid(1), src.size, cuda.gridsize(1)):
            r = i // cols
            c = i - r * cols
            left = dst[r, c - 1] if c > 0 else 0
            if dst[r, c] - left != src[r, c]:
                local += 1
        if local != 0:
            cuda.atomic.add(bad, 0, local)

    return _Helpers(fill, poison, count_bad)


def _grid(n: int) -> tuple[int, int]:
    """Grid-stride launch shape for ``n`` elements: at most 4096 blocks of 256 threads."""
    return (max(1, min(4096, -(-n // 256))), 256)


def _fill(d_src: Any) -> None:
    helpers = _helpers()
    helpers.fill[_grid(d_src.size)](d_src.reshape(d_src.size))


def _poison(d_dst: Any) -> None:

    bad_value = d_dst.dtype.type(np.nan if d_dst.dtype.kind == "f" else -1)
    _helpers().poison[_grid(d_dst.size)](d_dst.reshape(d_dst.size), bad_value)


def _check(d_src: Any, d_dst: Any, label: dict[str, object]) -> bool:
    """Full device check plus exact host comparison of a few rows; prints MISMATCH lines."""

    bad = cuda.to_device(np.zeros(1, dtype=np.int64))
    _helpers().count_bad[_grid(d_src.size)](d_src, d_dst, bad)
    n_bad = int(bad.copy_to_host()[0])
    if n_bad:
        _common.emit("MISMATCH", **label, bad_elements=n_bad)
        return False
    rows, cols = d_dst.shape
    row_ids = _common.rows_to_check(rows)
    expected = _common.host_reference_rows(row_ids, cols)
    for k, r in enumerate(row_ids):
        got = d_dst[r].copy_to_host().astype(np.int64)
        if not np.array_equal(got, expected[k]):
            col = int(np.flatnonzero(got != expected[k])[0])
            _common.emit(
                "MISMATCH",
                **label,
                row=r,
                col=col,
                got=int(got[col]),
                expected=int(expected[k][col]),
            )
            return False
    return True


# ---------------------------------------------------------------------------- SASS


def _find_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / name).is_file():
            return str(Path(root) / "bin" / name)
    return None


def kernel_sass(kernel: Any) -> tuple[str, _common.SassStats]:
    """SASS text and statistics of a kernel's (single) compiled overload.

    The cubin comes from ``overload.library.get_cubin()`` (the final, linked
    image, LTO included); ``cuobjdump -sass`` and ``-res-usage`` read it. Without
    ``cuobjdump`` the SASS comes from ``kernel.inspect_sass()`` (``nvdisasm``).
    """
    overload = next(iter(kernel.overloads.values()))
    stats = _common.SassStats(getattr(kernel.py_func, "__name__", "kernel"))
    text = ""
    cuobjdump = _find_tool("cuobjdump")
    if cuobjdump is not None:
        cubin = overload.library.get_cubin()
        cubin = bytes(getattr(cubin, "code", cubin))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(cubin)
            text, parsed = _common.cubin_sass(cuobjdump, str(path))
        if parsed:
            # the kernel is the function with most instructions (helpers are inlined)
            stats = max(parsed.values(), key=lambda s: s.instructions)
    else:
        text = next(iter(kernel.inspect_sass().values()))
        parsed = _common.parse_sass(text)
        if parsed:
            stats = max(parsed.values(), key=lambda s: s.instructions)
    stats.regs = int(overload.regs_per_thread)
    stats.local_bytes = int(overload.local_mem_per_thread)
    return text, stats


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
            _fill(d_src)
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
        _poison(d_dst)
        job.kernel[rows, job.cfg.block](d_src, d_dst)
        cuda.synchronize()
        job.compile_s = time.perf_counter() - started
    kernel = job.kernel

    def launch() -> None:
        kernel[rows, job.cfg.block](d_src, d_dst)

    _poison(d_dst)
    launch()
    cuda.synchronize()
    ok = _check(d_src, d_dst, label)
    times = _common.time_launches(
        launch,
        cuda.event,  # timing is on by default
        _elapsed_ms,
        reps=args.reps,
        warmup=args.warmup,
    )
    ok = _check(d_src, d_dst, label) and ok
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


def _elapsed_ms(start: Any, end: Any) -> float:
    return float(start.elapsed_time(end))


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
