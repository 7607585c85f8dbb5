# SPDX-License-Identifier: Apache-2.0
"""Launch one look-back configuration of ``bench/lookback_bench.py``, for a profiler.

The project's kernel runs twice on the benchmark's input (the first launch
compiles; the tile statuses are reset before each), then its output is
checked against the float64 (recurrence) or exact (cumsum) reference. Meant
to run under Nsight Compute beside the C++ program's variant of the same
shape, e.g.::

    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \\
        -k regex:recurrence --launch-skip 1 --launch-count 1 \\
        python bench/ncu_lookback.py --task recurrence --config 128x32
    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \\
        -k regex:DeviceScanKernel --launch-skip 1 --launch-count 1 \\
        cub_lookback recurrence --n 134217728 --variants inclusive_scan_tuned_t128_i32 \\
        --reps 1 --warmup 1

``--ordered`` launches it with a deterministic tile status instead.
"""

from __future__ import annotations

import argparse
import sys

import lookback_bench as lb
from numba import cuda

import scan


def main(argv: list[str] | None = None) -> int:
    """Run the kernel; returns 1 if its result is wrong."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="recurrence", choices=("recurrence", "cumsum"))
    parser.add_argument("--dtype", default="int32", choices=lb.CUMSUM_DTYPES)
    parser.add_argument("--n", type=int, default=None, help="elements (default: the benchmark's)")
    parser.add_argument("--config", type=lb.parse_threads_items, default=(128, 32))
    parser.add_argument("--ordered", action="store_true", help="deterministic=True statuses")
    args = parser.parse_args(argv)
    threads, items = args.config
    dtype = "pair" if args.task == "recurrence" else args.dtype
    cfg = lb.Config(args.task, threads, items, dtype)
    n = args.n or lb.SIZES[args.task][1]
    data = lb.Data.make(args.task, args.dtype, 1, n)
    status = scan.tile_status(cfg.tiles(n), lb.value_dtype(cfg), deterministic=args.ordered)
    launch = lb.project_kernel(cfg)[cfg.grid(1, n), threads]
    for _ in range(2):
        data.poison()
        status.reset()
        launch(data.src, data.out, status)
    cuda.synchronize()
    bad = data.bad()
    print(f"{cfg.key} n={n} ordered={args.ordered}: {bad} wrong elements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
