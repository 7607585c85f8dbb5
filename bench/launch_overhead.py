# SPDX-License-Identifier: Apache-2.0
"""Where the host time of a launch goes: numba-cuda's dispatcher, ``scan.launcher``, cuda.core.

The README's row scan (load, inclusive_sum with a stateful prefix callback,
store; int32, 256 x 4; ``_matrix_kernels.make_default_kernel``) and a plain
numba-cuda row copy of the same shape (``_rowscan_kernels.make_plain_copy_kernel``),
on a grid small enough (``--rows``, default 132 rows of 1024) that the
kernels themselves take microseconds, launched:

- ``numba``: ``kernel[rows, threads](src, dst)``, as users write it;
- ``launcher``: ``scan.launcher(kernel, rows, threads)(src, dst)``;
- ``core``: ``cuda.core.launch`` of the same compiled kernel with its
  parameters packed once (the floor: what CUB's C++ kernels pay when
  launched from Python);

each timed two ways, in interleaved rounds: ``enqueue`` (host time of N
launches in a row, no synchronisation, over N: what a launch costs the host
while the GPU keeps up) and ``sync`` (host time of one launch plus
``cuda.synchronize()``, median), and ``gpu``: CUDA events recorded on the
legacy default stream just before and after the launch call in the sync loop,
so that a slower kernel and a slower host can be told apart. Then the parts of numba-cuda's launch
alone, each over N calls: making the launch configuration
(``kernel[rows, threads]``), typing the arguments (``typeof``), and
converting them into parameters. Every kernel's output is checked.

    python bench/launch_overhead.py [--rounds 5] [--launches 2000] [--out DIR]
    python bench/launch_overhead.py --rows 8192 --cols 65536 --launches 20 --sync-reps 10
    python bench/launch_overhead.py --profile 2000   # also: where kernel[...] spends its time

``--profile N`` runs N launches of each kernel through ``kernel[rows,
threads](src, dst)`` under ``cProfile`` (after the timed rounds) and prints,
for each, the functions with the most own time, in microseconds a launch,
and then the functions whose own time differs most between the two kernels:
where the scan kernel's dispatch spends what the copy's does not.

Prints a table of microseconds a launch (medians over the rounds) and writes
``launch_overhead.json`` with every sample to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def _kernels(threads: int, items: int) -> tuple[Any, Any]:
    """The matrix benchmark's default row scan and rowscan.py's plain row copy, int32."""
    import _matrix_kernels
    import _rowscan_kernels as rk

    return (
        _matrix_kernels.make_default_kernel("int32", threads, items),
        rk.make_plain_copy_kernel(rk.KernelConfig(threads, items, "direct")),
    )


def _core_launch(launch: Any, kernel: Any, rows: int, threads: int, src: Any, dst: Any) -> Any:
    """``cuda.core.launch`` of the kernel numba-cuda compiled, parameters packed once."""
    from cuda.core import LaunchConfig, Stream
    from cuda.core import launch as core_launch

    launch(src, dst)  # compiles; the launcher keeps the compiled kernel
    bound = launch._bound
    assert bound is not None, "scan.launcher did not bind (simulator?)"
    params: list[Any] = []
    for value, pack in zip((src, dst), bound._packers, strict=True):
        pack(value, params)
    config = LaunchConfig(grid=rows, block=threads)
    stream = Stream.from_handle(0)
    function = bound._function

    def run() -> None:
        core_launch(stream, config, function, *params)

    return run


def _own_times(run: Any, launches: int) -> dict[str, float]:
    """Own (not cumulative) time of each function over `launches` calls of `run`, us a launch."""
    import cProfile
    import pstats

    from numba import cuda

    profile = cProfile.Profile()
    cuda.synchronize()
    profile.enable()
    for _ in range(launches):
        run()
    profile.disable()
    cuda.synchronize()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    own: dict[str, float] = {}
    for (path, line, func), (_cc, _nc, tottime, _ct, _callers) in stats.items():
        short = "/".join(Path(path).parts[-2:]) if path != "~" else ""
        own[f"{short}:{line}({func})"] = tottime / launches * 1e6
    return own


def _profile(contenders: dict[str, Any], launches: int) -> None:
    """Print where ``kernel[...]`` spends its host time, for the scan and the plain kernel."""
    own = {kind: _own_times(contenders[f"{kind} numba"], launches) for kind in ("scan", "plain")}
    for kind, times in own.items():
        total = sum(times.values())
        print(f"\nPROFILE {kind} kernel[...]: {total:.2f} us a launch under cProfile; top 12:")
        for name, us in sorted(times.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {us:8.3f} us  {name}")
    names = set(own["scan"]) | set(own["plain"])
    diff = {n: own["scan"].get(n, 0.0) - own["plain"].get(n, 0.0) for n in names}
    print("\nPROFILE scan - plain, own time a launch (largest differences):")
    for name, us in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:12]:
        print(f"  {us:+8.3f} us  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=132)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--sync-reps", type=int, default=50, help="sync launches per round")
    parser.add_argument("--out", help="write launch_overhead.json here")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="cProfile N kernel[...] launches each"
    )
    args = parser.parse_args()

    from numba import cuda
    from numba.cuda.typing.typeof import Purpose, typeof

    import scan

    threads, items = 256, 4
    rows, cols = args.rows, args.cols
    host = np.random.default_rng(0).integers(-3, 4, (rows, cols)).astype(np.int32)
    src = cuda.to_device(host)
    dst = cuda.device_array_like(host)
    want = {"scan": np.cumsum(host, axis=1, dtype=np.int64).astype(np.int32), "plain": host}

    contenders: dict[str, Any] = {}
    for kind, kernel in zip(("scan", "plain"), _kernels(threads, items), strict=True):
        launch = scan.launcher(kernel, rows, threads)
        contenders[f"{kind} numba"] = lambda k=kernel: k[rows, threads](src, dst)
        contenders[f"{kind} launcher"] = lambda bound=launch: bound(src, dst)
        contenders[f"{kind} core"] = _core_launch(launch, kernel, rows, threads, src, dst)
        # the parts of numba-cuda's launch alone
        contenders[f"{kind} numba: kernel[grid, block]"] = lambda k=kernel: k[rows, threads]
        contenders[f"{kind} numba: typeof x2"] = lambda: (
            typeof(src, Purpose.argument),
            typeof(dst, Purpose.argument),
        )
    checks: dict[str, bool] = {}
    for name, run in contenders.items():
        if ":" in name:
            continue
        dst[:] = 0
        run()
        cuda.synchronize()
        checks[name] = bool(np.array_equal(dst.copy_to_host(), want[name.split()[0]]))

    samples: dict[str, dict[str, list[float]]] = {
        n: {"enqueue": [], "sync": [], "gpu": []} for n in contenders
    }
    start, stop = cuda.event(timing=True), cuda.event(timing=True)
    names = list(contenders)
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            run = contenders[name]
            cuda.synchronize()
            t = time.perf_counter()
            for _ in range(args.launches):
                run()
            samples[name]["enqueue"].append((time.perf_counter() - t) / args.launches * 1e6)
            cuda.synchronize()
            if ":" in name:
                continue
            one, gpu = [], []
            for _ in range(args.sync_reps):
                t = time.perf_counter()
                run()
                cuda.synchronize()
                one.append((time.perf_counter() - t) * 1e6)
            for _ in range(args.sync_reps):
                start.record()
                run()
                stop.record()
                stop.synchronize()
                gpu.append(cuda.event_elapsed_time(start, stop) * 1e3)
            samples[name]["sync"].append(statistics.median(one))
            samples[name]["gpu"].append(statistics.median(gpu))

    import _common

    for name in names:
        kind, _, how = name.partition(" ")
        _common.emit(
            "LAUNCH",
            kernel=kind,
            how=how,
            enqueue_us=statistics.median(samples[name]["enqueue"]),
            sync_us=statistics.median(samples[name]["sync"]) if samples[name]["sync"] else "",
            gpu_us=statistics.median(samples[name]["gpu"]) if samples[name]["gpu"] else "",
            ok=checks.get(name, True),
        )
    print(f"{rows} x {cols}, {threads} x {items}; {args.rounds} rounds of {args.launches}")
    print("| launch | enqueue us/launch | sync us/launch | events around it, us | output |")
    print("| --- | --- | --- | --- | --- |")
    for name in names:
        enq = statistics.median(samples[name]["enqueue"])
        sync = samples[name]["sync"]
        sync_txt = f"{statistics.median(sync):.1f}" if sync else "-"
        gpu = samples[name]["gpu"]
        gpu_txt = f"{statistics.median(gpu):.1f}" if gpu else "-"
        check = "-" if name not in checks else ("ok" if checks[name] else "WRONG")
        print(f"| {name} | {enq:.2f} | {sync_txt} | {gpu_txt} | {check} |", flush=True)
    if args.profile:
        _profile(contenders, args.profile)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "launch_overhead.json").write_text(
            json.dumps({"samples": samples, "checks": checks}, indent=1)
        )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
