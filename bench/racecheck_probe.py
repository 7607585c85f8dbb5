# SPDX-License-Identifier: Apache-2.0
"""Launch one small row-scan kernel for compute-sanitizer's racecheck.

compute-sanitizer --tool racecheck python bench/racecheck_probe.py prefix_nosync
"""

from __future__ import annotations

import sys

import numpy as np
import rowscan
from numba import cuda

from scan import block


def main() -> int:
    which = sys.argv[1]
    cfg = rowscan.KernelConfig(256, 8, "direct")
    rows, cols = 2, 16384
    if which == "prefix_nosync":
        kernel = rowscan.make_prefix_kernel(cfg, "int32", "int64", auto_sync=False)
    elif which == "prefix":
        kernel = rowscan.make_prefix_kernel(cfg, "int32", "int64")
    elif which == "plain_nosync":  # control: racy by construction

        @cuda.jit
        def kernel(src, dst):  # type: ignore[no-untyped-def]
            row = cuda.blockIdx.x
            items = cuda.local.array(8, np.int32)
            for base in range(0, src.shape[1], 2048):
                block.load(src[row], base, items, algorithm="direct")
                block.inclusive_sum(items, items, auto_sync=False)
                block.store(dst[row], base, items, algorithm="direct")
    else:
        raise SystemExit(f"unknown kernel {which}")
    src = np.random.default_rng(1).integers(-100, 100, size=(rows, cols)).astype(np.int32)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(d_src)
    kernel[rows, cfg.block](d_src, d_dst)
    got = d_dst.copy_to_host()
    ok = which == "plain_nosync" or np.array_equal(got, np.cumsum(src, axis=1, dtype=np.int32))
    print(f"{which}: {'ok' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
