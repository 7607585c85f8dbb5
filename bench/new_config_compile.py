# SPDX-License-Identifier: Apache-2.0
"""A new kernel configuration in a warm process: compile + link time, without a GPU.

One fresh process per run, with an empty cache folder: it compiles and links
the README's row-scan kernel (load, inclusive_sum with a stateful prefix
callback, store; int32 values, int64 state:
``_matrix_kernels.make_default_kernel``) for sm_90 with ``scan.compile`` at
several (threads, items) one after the other, and before each a plain Numba
row-copy kernel of the same shape (``_rowscan_kernels.make_plain_copy_kernel``; Numba
to PTX, nvJitLink to a cubin). The first configuration is the process's
first compile; the later ones are what a user trying configurations in a
warm process (a notebook) waits for. Runs with the process's precompiled
CUB headers on (the default) and off (``STATEFN_SCAN_PCH=0``) alternate:

    python bench/new_config_compile.py [--runs 3] [--pause 0]

``--pause S`` waits S seconds after each configuration, as a user who
looks at a kernel's results before trying the next; 0 (the default) is the
slowest case for a new configuration.

One line per configuration and run: seconds for scan (and of them, the
library's NVRTC runs and the nvJitLink link of the kernel) and plain, and
their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from _compile_timing import TIMED

CONFIGS = [(256, 8), (128, 4), (256, 4), (512, 2), (128, 8)]
BENCH = Path(__file__).resolve().parent

CHILD = TIMED + textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[2])
    import numpy as np
    from numba import cuda
    from numba.cuda.np.numpy_support import from_dtype
    from cuda.core import Linker, LinkerOptions, ObjectCode
    import _matrix_kernels
    import _rowscan_kernels as rk
    import scan
    import cuda.core as core
    from scan import _compile

    class TimedLinker(core.Linker):
        def link(self, *args, **kwargs):
            return _timed(super().link, "link_s")(*args, **kwargs)

    _compile._nvrtc = _timed(_compile._nvrtc, "nvrtc_s")
    core.Linker = TimedLinker  # the library imports it where it links
    sig = (from_dtype(np.dtype(np.int32))[:, ::1],) * 2
    out = []
    for threads, items in json.loads(sys.argv[1]):
        PHASES.update(nvrtc_s=0.0, link_s=0.0)
        scan_kernel = _matrix_kernels.make_default_kernel("int32", threads, items)
        copy = rk.make_plain_copy_kernel(rk.KernelConfig(threads, items, "direct"))
        t = time.perf_counter()
        ptx, _ = cuda.compile(copy.py_func, sig, cc=(9, 0), output="ptx")
        opts = LinkerOptions(arch="sm_90")
        Linker(ObjectCode.from_ptx(ptx.encode()), options=opts).link("cubin")
        plain = time.perf_counter() - t
        t = time.perf_counter()
        scan.compile(scan_kernel, sig, cc=(9, 0), block=threads)
        out.append({"config": f"{threads}x{items}", "plain_s": plain,
                    "scan_s": time.perf_counter() - t, **PHASES})
        time.sleep(float(sys.argv[3]))  # a user looking at the results
    print(json.dumps(out))
    """
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3, help="processes per setting")
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds between configurations (0: back to back, the slowest case)",
    )
    args = parser.parse_args()
    for run in range(args.runs):
        for pch in ("1", "0"):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "STATEFN_SCAN_CACHE_DIR": cache, "STATEFN_SCAN_PCH": pch}
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, json.dumps(CONFIGS), str(BENCH), str(args.pause)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
            for k, rec in enumerate(json.loads(proc.stdout.splitlines()[-1])):
                print(
                    f"run {run} pause={args.pause:g} pch={pch} #{k} {rec['config']:>6}: "
                    f"scan {rec['scan_s']:.3f} s "
                    f"(NVRTC {rec['nvrtc_s']:.3f} s, link {rec['link_s']:.3f} s), "
                    f"plain {rec['plain_s']:.3f} s, {rec['scan_s'] / rec['plain_s']:.1f}x",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
