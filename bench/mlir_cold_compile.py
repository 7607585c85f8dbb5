# SPDX-License-Identifier: Apache-2.0
"""Cold compile and link of a numba-cuda-mlir row kernel: one NVRTC unit per kernel or one per call.

Each run is a fresh process with an empty cache folder that compiles and links
the README's row kernel (int32, 256 x 8, defaults; as ``bench/matrix.py``
writes it) for sm_90 with ``scan.compile``, either as the library lowers it
(``mlir``: the kernel's calls in one unit) or with a unit per call
(``mlir_own_units``, see ``bench/mlir_ablation.py``). No GPU needed; the two
variants alternate:

    python bench/mlir_cold_compile.py [--repeats 3]

One line per run: seconds for the compile and link, and the cache's build counters.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import sys, time
import _ablations, _matrix_kernels, scan
from scan import _cache
from numba_cuda_mlir.numba_cuda import types
arr = types.Array(types.int32, 2, "C")
kernel = _matrix_kernels.make_mlir_kernel("int32", 256, 8)
t0 = time.perf_counter()
with _ablations.mlir_variant(sys.argv[1]):
    scan.compile(kernel, (arr, arr), cc=(9, 0), block=256)
print(f"{sys.argv[1]}: compile + link {time.perf_counter() - t0:.2f} s, {_cache.stats()}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent
    for _ in range(args.repeats):
        for variant in ("mlir", "mlir_own_units"):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, STATEFN_SCAN_CACHE_DIR=cache)
                env["PYTHONPATH"] = os.pathsep.join(
                    p for p in (str(here), env.get("PYTHONPATH", "")) if p
                )
                out = subprocess.run(
                    [sys.executable, "-W", "ignore", "-c", CHILD, variant],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                print(out.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
