# SPDX-License-Identifier: Apache-2.0
"""numba-cuda-mlir against numba-cuda on the same row kernel, with parts of the lowering off.

The README's row kernel with the library's defaults (as ``bench/matrix.py``
writes it), compiled by numba-cuda and by numba-cuda-mlir in four ways:

- ``mlir``: as the library lowers it (one NVRTC unit per kernel with overlaid
  temp storage, the launch's thread count as ``nvvm.maxntid``);
- ``mlir_no_bounds``: without the ``nvvm.maxntid`` declaration;
- ``mlir_own_units``: every call in an NVRTC unit of its own, with its own
  temp storage (the front end's lowering before the shared units);
- ``mlir_launch_bounds``: ``@cuda.jit(launch_bounds=(threads, 2048 // threads))``
  (numba-cuda-mlir's own option, which the library leaves as declared): as
  many blocks an SM as 2048 threads hold, so ptxas caps registers at 32 a
  thread, what numba-cuda's kernels of these shapes get on their own.

Every kernel's output is checked before and after timing; the five are timed
in interleaved rounds (CUDA events, launches back to back, medians), in one
process:

    python bench/mlir_ablation.py [--rounds 10] [--reps 10] [--shape 8192x65536]

One line per (dtype, threads x items): GB/s of each and their ratios to numba-cuda.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import _common
import _matrix_kernels
import numpy as np
from _ablations import mlir_kernel, mlir_variant
from numba import cuda

CONFIGS = [(256, 4), (512, 4), (256, 8), (512, 16)]
VARIANTS = (
    "numba",
    "mlir",
    "mlir_no_bounds",
    "mlir_own_units",
    "mlir_launch_bounds",
)


def _launcher(kernel: Any, grid: int, threads: int, src: Any, dst: Any) -> Any:
    def launch() -> None:
        kernel[grid, threads](src, dst)

    return launch


def _correct(launch: Any, src: Any, dst: Any, bad: Any) -> bool:
    """Run `launch` on a poisoned output and count wrong elements on the device."""
    dst[:] = 7
    launch()
    cuda.synchronize()
    bad[:] = 0
    _matrix_kernels.count_bad[256, 256](src, dst, bad)
    return int(bad.copy_to_host()[0]) == 0


def main() -> None:
    from numba_cuda_mlir import cuda as mcuda

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--shape", type=_common.parse_shape, default=(8192, 65536))
    parser.add_argument("--dtypes", default="int32,float32")
    args = parser.parse_args()
    rows, cols = args.shape
    rng = np.random.default_rng(0)
    new_event = lambda: cuda.event(timing=True)  # noqa: E731
    elapsed = lambda a, b: cuda.event_elapsed_time(a, b)  # noqa: E731
    print(f"shape {rows}x{cols}; rounds {args.rounds} x {args.reps} launches; defaults")
    print(
        "| dtype | threads x items | "
        + " | ".join(f"{v} GB/s" for v in VARIANTS)
        + " | "
        + " | ".join(f"{v} / numba" for v in VARIANTS[1:])
        + " |"
    )
    print("| --- | --- | " + " | ".join("---" for _ in VARIANTS[1:] + VARIANTS) + " |")
    for dtype in args.dtypes.split(","):
        host = rng.integers(-3, 4, size=(rows, cols)).astype(dtype)
        src = cuda.to_device(host)
        dst = cuda.device_array_like(host)
        views = {"numba": (src, dst), "mlir": (mcuda.as_cuda_array(src), mcuda.as_cuda_array(dst))}
        bad = cuda.device_array(1, np.int64)
        for threads, items in CONFIGS:
            launches = {}
            for name in VARIANTS:
                if name == "numba":
                    kernel = _matrix_kernels.make_default_kernel(dtype, threads, items)
                    launch = _launcher(kernel, rows, threads, *views["numba"])
                    ok = _correct(launch, src, dst, bad)
                else:
                    kernel = mlir_kernel(name, dtype, threads, items)
                    launch = _launcher(kernel, rows, threads, *views["mlir"])
                    try:
                        with mlir_variant(name):
                            ok = _correct(launch, src, dst, bad)  # compiles with the variant
                    except Exception as exc:  # e.g. own units: 512 x 16 needs > 48 KiB
                        print(f"{dtype} {threads}x{items} {name}: does not compile: {exc!r:.300}")
                        continue
                if not ok:
                    raise SystemExit(f"wrong result: {dtype} {threads}x{items} {name}")
                launches[name] = launch
            ran = [v for v in VARIANTS if v in launches]
            samples: dict[str, list[float]] = {v: [] for v in ran}
            for r in range(args.rounds):
                for name in ran[r % len(ran) :] + ran[: r % len(ran)]:
                    samples[name] += _common.time_launches(
                        launches[name], new_event, elapsed, reps=args.reps, warmup=2
                    )
            for name in ran:
                if not _correct(launches[name], src, dst, bad):
                    raise SystemExit(f"wrong result after timing: {dtype} {threads}x{items} {name}")
            gb = {
                v: _common.gbps(rows, cols, host.dtype.itemsize, statistics.median(samples[v]))
                for v in ran
            }
            ratios = " | ".join(
                f"{gb[v] / gb['numba']:.3f}" if v in gb else "-" for v in VARIANTS[1:]
            )
            print(
                f"| {dtype} | {threads} x {items} | "
                + " | ".join(f"{gb[v]:.0f}" if v in gb else "-" for v in VARIANTS)
                + f" | {ratios} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
