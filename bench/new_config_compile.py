# SPDX-License-Identifier: Apache-2.0
"""A new kernel configuration in a warm process: compile + link time, without a GPU.

One fresh process per run, with an empty cache folder: it compiles and links
the README's row-scan kernel (load, inclusive_sum with a stateful prefix
callback, store; int32 values, int64 state) for sm_90 with ``scan.compile``
at several (threads, items) one after the other, and before each a plain
Numba row-copy kernel of the same shape (Numba to PTX, nvJitLink to a
cubin). The first configuration is the process's first compile; the later
ones are what a user trying configurations in a warm process (a notebook)
waits for. Runs with the process's precompiled CUB headers on (the default)
and off (``STATEFN_SCAN_PCH=0``) alternate:

    python bench/new_config_compile.py [--runs 3]

One line per configuration and run: seconds for scan and plain, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

CONFIGS = [(256, 8), (128, 4), (256, 4), (512, 2), (128, 8)]

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from numba import cuda
    from numba.cuda.np.numpy_support import from_dtype
    from cuda.core import Linker, LinkerOptions, ObjectCode
    import statefn, scan
    from scan import block

    @statefn.stateful(np.int64)
    def running_total(state, block_aggregate):
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

    def kernels(threads, items):
        @cuda.jit
        def row_cumsum(src, dst):
            state = cuda.local.array(1, np.int64)
            state[0] = 0
            values = cuda.local.array(items, np.int32)
            for base in range(0, src.shape[1], block.tile_size(values)):
                block.load(src[cuda.blockIdx.x], base, values, oob_default=0)
                block.inclusive_sum(values, values, prefix_op=running_total, prefix_state=state)
                block.store(dst[cuda.blockIdx.x], base, values)

        def row_copy(src, dst):
            for base in range(0, src.shape[1], threads * items):
                for i in range(items):
                    j = base + i * threads + cuda.threadIdx.x
                    if j < src.shape[1]:
                        dst[cuda.blockIdx.x, j] = src[cuda.blockIdx.x, j]

        return row_cumsum, row_copy

    sig = (from_dtype(np.dtype(np.int32))[:, ::1],) * 2
    out = []
    for threads, items in json.loads(sys.argv[1]):
        scan_kernel, copy = kernels(threads, items)
        t = time.perf_counter()
        ptx, _ = cuda.compile(copy, sig, cc=(9, 0), output="ptx")
        opts = LinkerOptions(arch="sm_90")
        Linker(ObjectCode.from_ptx(ptx.encode()), options=opts).link("cubin")
        plain = time.perf_counter() - t
        t = time.perf_counter()
        scan.compile(scan_kernel, sig, cc=(9, 0), block=threads)
        out.append({"config": f"{threads}x{items}", "plain_s": plain,
                    "scan_s": time.perf_counter() - t})
    print(json.dumps(out))
    """
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3, help="processes per setting")
    args = parser.parse_args()
    for run in range(args.runs):
        for pch in ("1", "0"):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "STATEFN_SCAN_CACHE_DIR": cache, "STATEFN_SCAN_PCH": pch}
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, json.dumps(CONFIGS)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
            for k, rec in enumerate(json.loads(proc.stdout.splitlines()[-1])):
                print(
                    f"run {run} pch={pch} #{k} {rec['config']:>6}: scan {rec['scan_s']:.3f} s, "
                    f"plain {rec['plain_s']:.3f} s, {rec['scan_s'] / rec['plain_s']:.1f}x",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
