# SPDX-License-Identifier: Apache-2.0
"""Row scan through the numba-cuda-mlir front end: GB/s, SASS local memory, first launch.

Rows for the report beside numba-cuda, CUB C++ and Triton (bench/run_all.py):
``scan.block`` load + inclusive_sum with a stateful prefix callback + store,
in a numba-cuda-mlir kernel, with default arguments, int32, for each shape and
(threads, items per thread) the other rows use; a plain device copy by
numba-cuda-mlir as the bandwidth ceiling; local-memory instructions in the
kernel's SASS (cuobjdump); and the first launch of the row scan with a warm
library cache against a plain numba-cuda-mlir kernel's first launch.

    python bench/mlir_rowscan.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

SHAPES = [(8192, 65536), (262144, 2048)]
CONFIGS = [(256, 4), (128, 16), (256, 8)]


def _kernels(threads: int, ipt: int) -> tuple[Any, Any]:
    from numba_cuda_mlir import cuda

    import statefn
    from scan import block

    @statefn.stateful(np.int32)
    def running_total(state: Any, block_aggregate: Any) -> Any:
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

    @cuda.jit
    def row_scan(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int32)
        state[0] = 0
        items = cuda.local.array(ipt, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], threads * ipt):
            block.load(src[row], base, items)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
            block.store(dst[row], base, items)

    @cuda.jit
    def copy(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        for j in range(cuda.threadIdx.x, src.shape[1], cuda.blockDim.x):
            dst[row, j] = src[row, j]

    return row_scan, copy


def _time(kernel: Any, grid: int, threads: int, arrays: Any, sync: Any, repeat: int) -> float:
    def launch() -> None:
        kernel[grid, threads](*arrays)

    launch()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        launch()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def _first_launch() -> dict[str, float]:
    """Cold-process first launches (library cache warm): row scan vs a plain kernel."""
    code = """
import time, numpy as np
t0 = time.perf_counter()
from numba_cuda_mlir import cuda
import sys
sys.path.insert(0, {bench!r})
if {scan}:
    import mlir_rowscan as m
    kernel, _ = m._kernels(256, 4)
else:
    @cuda.jit
    def kernel(src, dst):
        row = cuda.blockIdx.x
        for j in range(cuda.threadIdx.x, src.shape[1], cuda.blockDim.x):
            dst[row, j] = src[row, j] + 1
src = cuda.to_device(np.ones((4, 4096), np.int32)); dst = cuda.device_array_like(src)
t1 = time.perf_counter()
kernel[4, 256](src, dst); cuda.synchronize()
print(time.perf_counter() - t1)
"""
    out = {}
    bench = str(Path(__file__).resolve().parent)
    for name, flag in (("plain", False), ("scan", True)):
        src = code.format(bench=bench, scan=flag)
        runs = []
        for _ in range(3):  # the first run warms the library cache
            res = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(res.stderr[-2000:])
            runs.append(float(res.stdout.strip().splitlines()[-1]))
        out[name] = min(runs[1:])
    return out


def _local_memory(threads: int, ipt: int, kernel: Any) -> int | None:
    from numba_cuda_mlir.numba_cuda import types

    import scan

    arr = types.Array(types.int32, 2, "C")
    cubin = scan.compile(kernel, (arr, arr), cc=(9, 0), block=threads)
    assert isinstance(cubin, bytes)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            sass = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True, text=True)
        except OSError:
            return None
    return sum(1 for line in sass.stdout.splitlines() if " LDL" in line or " STL" in line)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="results")
    args = parser.parse_args()
    from numba_cuda_mlir import cuda

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    repeat = 5 if args.quick else 20
    for rows_n, cols in SHAPES:
        src = np.random.default_rng(0).integers(-9, 9, size=(rows_n, cols)).astype(np.int32)
        d_src = cuda.to_device(src)
        d_dst = cuda.device_array_like(d_src)
        nbytes = 2 * src.nbytes
        for threads, ipt in CONFIGS:
            row_scan, copy = _kernels(threads, ipt)
            t = _time(row_scan, rows_n, threads, (d_src, d_dst), cuda.synchronize, repeat)
            ok = bool(np.array_equal(d_dst.copy_to_host()[:2], np.cumsum(src[:2], axis=1)))
            ldl = _local_memory(threads, ipt, row_scan)
            rows.append(
                {
                    "shape": f"{rows_n}x{cols}",
                    "config": f"{threads}x{ipt}",
                    "gbps": nbytes / t / 1e9,
                    "correct": ok,
                    "local_memory_instructions": ldl,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
        t = _time(copy, rows_n, 256, (d_src, d_dst), cuda.synchronize, repeat)
        rows.append({"shape": f"{rows_n}x{cols}", "config": "copy", "gbps": nbytes / t / 1e9})
        print(json.dumps(rows[-1]), flush=True)
    first = _first_launch()
    ratio = first["scan"] / first["plain"]
    summary = {"rows": rows, "first_launch_s": first, "first_launch_ratio": ratio}
    (out / "bench_mlir.json").write_text(json.dumps(summary, indent=1))
    lines = ["| shape | config | GB/s | correct | LDL/STL |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(
            f"| {r['shape']} | numba-cuda-mlir {r['config']} | {r['gbps']:.0f} | "
            f"{r.get('correct', '')} | {r.get('local_memory_instructions', '')} |"
        )
    lines.append(
        f"\nwarm first launch: row scan {first['scan']:.3f} s, plain numba-cuda-mlir kernel "
        f"{first['plain']:.3f} s, ratio {ratio:.2f} (target <= 1.2)"
    )
    (out / "bench_mlir.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
