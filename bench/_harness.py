# SPDX-License-Identifier: Apache-2.0
"""What the benchmarks share beyond :mod:`_common`: building CUB C++ contenders, launching
them, and timing contenders in interleaved rounds.

- :func:`build_nvcc_unit`, :func:`build_nvcc_units`: a generated unit per
  threads x items compiled by nvcc into a cubin (skipped when up to date),
  in parallel threads; :func:`compile_in_processes`: the project kernels'
  ``scan.compile`` in a process pool;
- :func:`cub_runtime`, :func:`load_cubin`, :func:`device_pointer`: cuda.core on
  numba-cuda's device and stream, to launch a cubin's kernels on numba arrays;
- :class:`Spinner`, :func:`time_entries`: rounds of launches, every live
  contender once a round in an order rotated from round to round, CUDA events
  between consecutive launches, each round behind a kernel that holds the
  stream until the round is enqueued;
- :func:`run_outcome`: a benchmark's last lines and exit status;
- :class:`CubUnit`, :class:`Entry`, :class:`Group`, :func:`best_entry`: a CUB
  unit to build, a timed contender, the contenders of one (task, shape);
  :func:`count_bad_exact`, :func:`poison_int`: device checks of 2-D outputs.
"""

from __future__ import annotations

import concurrent.futures
import functools
import multiprocessing
import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import numpy as np
from _toolchain import cccl_include
from numba import cuda


def _ptxas_usage(text: str) -> dict[str, str]:
    """``{function: "regs=.. stack=.. spill_st=.. spill_ld=.."}`` from ``nvcc --resource-usage``."""
    usage: dict[str, str] = {}
    current = None
    stack = ""
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(
            r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line
        )
        if m and current:
            stack = f"stack={m.group(1)} spill_st={m.group(2)} spill_ld={m.group(3)}"
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            usage[current] = f"regs={m.group(1)} {stack}".strip()
            current, stack = None, ""
    return usage


def _nvcc_argv(nvcc: str, cc: tuple[int, int], source: Path, cubin: Path) -> list[str]:
    argv = [nvcc, "-O3", "-std=c++17", f"-arch=sm_{cc[0]}{cc[1]}", "-cubin", "--resource-usage"]
    cccl = cccl_include()
    if cccl is not None:
        argv.append(f"-I{cccl}")
    return [*argv, "-o", str(cubin), str(source)]


def build_nvcc_unit(
    unit: Any, nvcc: str, cc: tuple[int, int], cu_source: Path, lines: Sequence[str]
) -> Any:
    """Write a generated unit (`lines`, including `cu_source`) beside ``unit.cubin``; compile it.

    Skipped when the cubin is newer than both sources and was built by the same
    command. Sets ``unit.ok``, ``unit.message``, ``unit.seconds`` and, when the
    unit has the field, ``unit.usage`` (ptxas's per-kernel resource usage);
    returns the unit. The CUB contenders of every benchmark are built this way.
    """
    started = time.perf_counter()
    source = unit.cubin.with_suffix(".cu")
    text = "\n".join(lines) + "\n"
    if not source.exists() or source.read_text() != text:
        source.write_text(text)
    argv = _nvcc_argv(nvcc, cc, source, unit.cubin)
    stamp = unit.cubin.with_suffix(".cmd")
    log = unit.cubin.with_suffix(".log")
    usage = hasattr(unit, "usage")
    fresh = (
        unit.cubin.exists()
        and stamp.exists()
        and stamp.read_text() == " ".join(argv)
        and unit.cubin.stat().st_mtime >= max(cu_source.stat().st_mtime, source.stat().st_mtime)
    )
    if fresh:
        unit.ok, unit.message = True, "up to date"
        if usage:
            unit.usage = _ptxas_usage(log.read_text()) if log.exists() else {}
        return unit
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
        log.write_text(" ".join(argv) + "\n" + proc.stdout + proc.stderr)
        unit.ok = proc.returncode == 0 and unit.cubin.exists()
        unit.message = "built" if unit.ok else f"nvcc rc={proc.returncode}: {proc.stderr[-800:]}"
        if usage:
            unit.usage = _ptxas_usage(proc.stdout + proc.stderr)
        if unit.ok:
            stamp.write_text(" ".join(argv))
    except Exception as exc:
        unit.ok, unit.message = False, f"{type(exc).__name__}: {exc}"
    unit.seconds = time.perf_counter() - started
    return unit


def build_nvcc_units(
    bench: str,
    units: list[Any],
    build_one: Callable[[Any, str], Any],
    nvcc: str | None,
    cc: tuple[int, int],
) -> list[Any]:
    """Run ``build_one(unit, nvcc)`` for every unit in parallel threads; print the wall time.

    Without `nvcc` every unit is marked not built (its ``message`` says why).
    """
    if nvcc is None:
        for unit in units:
            unit.message = "nvcc not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin"
        print(f"{bench}: cub_cpp: nvcc not found; no CUB contenders", flush=True)
        return units
    started = time.perf_counter()
    workers = max(1, min(len(units), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda u: build_one(u, nvcc), units))
    wall = time.perf_counter() - started
    failed = [u for u in units if not u.ok]
    print(
        f"{bench}: cub_cpp: {len(units)} nvcc units (sm_{cc[0]}{cc[1]}) in {wall:.1f} s wall, "
        f"{workers} at a time; {len(failed)} failed",
        flush=True,
    )
    for unit in units:
        state = "ok" if unit.ok else "FAILED"
        print(f"  {unit.cubin.name}: {state} {unit.seconds:.1f} s {unit.message[:300]}", flush=True)
    return units


def compile_in_processes(
    bench: str,
    jobs: dict[Any, tuple[str, tuple[Any, ...]]],
    job: Callable[..., dict[str, Any]],
    cc: tuple[int, int],
    out_dir: Path,
) -> dict[Any, dict[str, Any] | str]:
    """Run ``job(*args, cc, str(out_dir))`` for every ``key: (label, args)`` of `jobs`.

    The benchmarks' ``scan.compile`` of their project kernels, in a process
    pool (spawned: no CUDA state; the processes fill the shared disk cache).
    Returns each job's result dict, or its error message; prints each failure
    under its label and one summary line for `bench`.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    results: dict[Any, dict[str, Any] | str] = {}
    started = time.perf_counter()
    seconds = 0.0
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {
            pool.submit(job, *args, cc, str(out_dir)): key for key, (_, args) in jobs.items()
        }
        for future in concurrent.futures.as_completed(futures):
            key = futures[future]
            try:
                done = future.result()
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}".replace("\n", " | ")[:600]
                results[key] = message
                print(f"  project {jobs[key][0]}: FAILED {message}", flush=True)
                continue
            seconds += float(done.get("seconds", 0.0))
            results[key] = done
    failed = sum(isinstance(r, str) for r in results.values())
    print(
        f"{bench}: project: {len(jobs)} kernels via scan.compile (sm_{cc[0]}{cc[1]}) in "
        f"{time.perf_counter() - started:.1f} s wall, {workers} processes "
        f"({seconds:.1f} s summed); {failed} failed",
        flush=True,
    )
    return results


def run_outcome(bench: str, entries: Sequence[Any], setup_errors: Sequence[str]) -> int:
    """Print a benchmark's last lines (contenders, failures, what could not be set up);
    its exit status: 1 when a contender failed its check, one could not be set up, or
    none ran."""
    failed = [e for e in entries if not e.ok]
    print(
        f"{bench}: {len(entries)} contenders, {len(failed)} failed, "
        f"{len(setup_errors)} could not be set up",
        flush=True,
    )
    for line in setup_errors:
        print(f"  not set up: {line[:300]}", flush=True)
    return 1 if failed or setup_errors or not entries else 0


def _cuda_core() -> Any:
    try:
        import cuda.core as core

        if hasattr(core, "launch"):
            return core
    except ImportError:
        pass
    import cuda.core.experimental as core_experimental

    return core_experimental


def _legacy_stream(core: Any) -> Any:
    """The legacy default stream (numba-cuda launches there), as cuda.core names it."""
    stream = getattr(core, "LEGACY_DEFAULT_STREAM", None)
    if stream is not None:
        return stream
    from_handle = getattr(core.Stream, "from_handle", None)
    if from_handle is not None:
        return from_handle(0)
    return core.Device().default_stream


@functools.cache
def cub_runtime() -> tuple[Any, Any]:
    """cuda.core on the device numba-cuda uses (its primary context), and the stream."""
    core = _cuda_core()
    device = core.Device(int(cuda.get_current_device().id))
    device.set_current()
    return core, _legacy_stream(core)


def device_pointer(array: Any) -> int:
    """The device address of a numba (or any CUDA-array-interface) array."""
    return int(array.__cuda_array_interface__["data"][0])


def target_cc() -> tuple[int, int]:
    """The compute capability of numba-cuda's current device."""
    cc = cuda.get_current_device().compute_capability
    return (int(cc[0]), int(cc[1]))


@functools.cache
def load_cubin(cubin: Path) -> Any:
    """A cubin loaded by cuda.core (once a path), to get kernels from."""
    core, _ = cub_runtime()
    return core.ObjectCode.from_cubin(cubin.read_bytes())


#: longest spin of the kernel that holds the stream while a round is enqueued
MAX_SPIN_S = 0.05


SPIN_SOURCE = r"""
extern "C" __global__ void bench_spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
"""


class Spinner:
    """A one-thread kernel that keeps the legacy default stream busy for ``ns`` nanoseconds.

    Compiled with NVRTC through cuda.core (no nvcc needed) and launched on the
    stream the contenders use, so the launches enqueued behind it start back to
    back when it ends. Where it cannot be built, ``available`` is False and
    ``time_group`` keeps the device busy with an untimed launch instead.
    """

    def __init__(self, cc: tuple[int, int]) -> None:

        self.available = False
        try:
            core, self.stream = cub_runtime()
            options = core.ProgramOptions(arch=f"sm_{cc[0]}{cc[1]}")
            code = core.Program(SPIN_SOURCE, "c++", options).compile("cubin")
            self.kernel = code.get_kernel("bench_spin")
            self.config = core.LaunchConfig(grid=1, block=1)
            self.launch_fn = core.launch
            self.available = True
        except Exception as exc:
            print(
                f"!!!!! no spin kernel ({type(exc).__name__}: {exc}); each round "
                "starts behind an untimed launch instead, which covers the host's enqueueing "
                "only while it is faster than the kernels",
                flush=True,
            )

    def __call__(self, ns: int) -> None:
        self.launch_fn(self.stream, self.config, self.kernel, np.uint64(ns))


def rotate(items: list[Any], r: int) -> list[Any]:
    if not items:
        return items
    k = r % len(items)
    return items[k:] + items[:k]


def time_entries(
    entries: Sequence[Any],
    spin: Any,
    reps: int,
    warmup: int,
    label: Callable[[Any], dict[str, object]],
) -> int:
    """Time the live entries (``ok``, ``launch()``, ``times``) in interleaved rounds.

    Each round starts behind the spin kernel (or an untimed launch), so that no
    interval includes the host's enqueueing; an entry that raises is dropped
    with an ERROR record labelled by `label`. Returns the rounds discarded.
    """
    live = [e for e in entries if e.ok]

    def drop(entry: Any, exc: BaseException, stage: str) -> None:
        _common.emit_error(exc, **label(entry), stage=stage)
        entry.ok = False
        live.remove(entry)

    enqueue_s = 0.0
    for _ in range(max(1, warmup)):
        started = time.perf_counter()
        for entry in list(live):
            try:
                entry.launch()
            except Exception as exc:
                drop(entry, exc, "warmup")
        enqueue_s = max(enqueue_s, time.perf_counter() - started)
        cuda.synchronize()
    spin_s = min(MAX_SPIN_S, max(1e-4, 3.0 * enqueue_s))
    discarded = 0
    done = 0
    for r in range(4 * reps):
        if done == reps or not live:
            break
        order = rotate(live, r)
        events = [cuda.event() for _ in range(len(order) + 1)]
        launched: list[Any] = []
        if spin.available:
            spin(int(spin_s * 1e9))
        else:
            order[0].launch()  # untimed: the device is busy while the round is enqueued
        started = time.perf_counter()
        events[0].record()
        for k, entry in enumerate(order):
            try:
                entry.launch()
                launched.append(entry)
            except Exception as exc:
                drop(entry, exc, "timing")
                launched.append(None)
            events[k + 1].record()
        enqueued = time.perf_counter() - started
        events[-1].synchronize()
        if spin.available and enqueued > 0.8 * spin_s and spin_s < MAX_SPIN_S:
            # the device may have waited for the host inside the round: not a clean sample
            discarded += 1
            spin_s = min(MAX_SPIN_S, 2.0 * spin_s)
            continue
        for k, launched_entry in enumerate(launched):
            if launched_entry is not None:
                launched_entry.times.append(float(events[k].elapsed_time(events[k + 1])))
        done += 1
    return discarded


# ---------------------------------------------------------------------------- contenders


@dataclass
class CubUnit:
    """One nvcc job: the kernels of one (threads, items)."""

    threads: int
    items: int
    kernels: tuple[tuple[str, Any], ...]
    cubin: Path
    ok: bool = False
    seconds: float = 0.0
    message: str = ""


@dataclass
class Entry:
    """One contender and what it measured."""

    impl: str  # "project", "cub_cpp", "triton"
    config: str
    launch: Callable[[], None]
    fields: dict[str, object]
    cfg: Any = None
    ok: bool = False
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        """Median of the timed intervals (NaN without any)."""
        return _common.median(self.times) if self.times else float("nan")


@dataclass
class Group:
    """The contenders of one (task, shape)."""

    data: Any
    entries: list[Entry] = field(default_factory=list)


def best_entry(group: Group, impl: str) -> Entry | None:
    """The fastest checked entry of `impl` in `group` (by median), or None."""
    return min(
        (e for e in group.entries if e.impl == impl and e.ok and e.times),
        key=lambda e: e.median_ms,
        default=None,
    )


# ---------------------------------------------------------------------------- checks


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def count_bad_exact(out: Any, ref: Any, bad: Any) -> None:
    row = cuda.blockIdx.x
    n = 0
    for t in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
        if out[row, t] != ref[row, t]:
            n += 1
    if n:
        cuda.atomic.add(bad, 0, n)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def poison_int(out: Any, ref: Any) -> None:
    row = cuda.blockIdx.x
    for t in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
        out[row, t] = ~ref[row, t]
