# SPDX-License-Identifier: Apache-2.0
"""Launch the prefix_op and hand-carried row scans of one configuration, for a profiler.

Each kernel runs twice on the same random input (the first launch compiles),
and its result is checked. Meant to run under Nsight Compute, e.g.::

    ncu --clock-control none --section WarpStateStats --section SchedulerStats \\
        -k regex:row_cumsum --launch-skip 1 --launch-count 1 \\
        python bench/ncu_callback.py --config b256_i8_direct_warp_scans --which prefix_op

``--which both`` launches the two kernels one after the other.
"""

from __future__ import annotations

import argparse
import sys

import _rowscan_kernels as rk
from numba import cuda


def main(argv: list[str] | None = None) -> int:
    """Run the selected kernels; returns 1 if a result is wrong."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="e.g. b256_i8_direct_warp_scans")
    parser.add_argument("--dtype", default="int32", choices=rk.DTYPES)
    parser.add_argument("--shape", default="8192x65536")
    parser.add_argument("--which", default="both", choices=("prefix_op", "hand_carried", "both"))
    args = parser.parse_args(argv)
    configs = {c.name: c for c in rk.CONFIGS}
    cfg = configs[args.config]
    rows, cols = (int(v) for v in args.shape.lower().split("x"))
    state = rk.MAIN_STATE[args.dtype]
    kernels = []
    if args.which in ("prefix_op", "both"):
        kernels.append(("prefix_op", rk.make_prefix_kernel(cfg, args.dtype, state)))
    if args.which in ("hand_carried", "both"):
        kernels.append(("hand_carried", rk.make_hand_carried_kernel(cfg, args.dtype, state)))
    d_src = cuda.device_array((rows, cols), dtype=args.dtype)
    d_dst = cuda.device_array((rows, cols), dtype=args.dtype)
    rk.fill(d_src)
    failures = 0
    for name, kernel in kernels:
        for _ in range(2):
            kernel[rows, cfg.block](d_src, d_dst)
        cuda.synchronize()
        ok = rk.check(d_src, d_dst, {"impl": name, "config": cfg.name})
        print(f"{name} {cfg.name} {args.dtype} {args.shape}: {'ok' if ok else 'WRONG'}")
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
