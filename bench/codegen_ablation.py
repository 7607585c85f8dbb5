# SPDX-License-Identifier: Apache-2.0
"""Two choices of the generated code for integer scans, each measured both ways.

``--toggle items_first`` (the default): for integer sums with a prefix
callback and several items a thread the library scans each thread's items
before the block scan (``thread_items_first`` of
``scan._primitives.block_scan._unit``); CUB scans them after it. ``--toggle
plus``: the built-in ``+`` given to CUB as ``::cuda::std::plus<>`` or as a
functor of the unit's own (``cub_plus``, same module). This script compiles the row-scan kernel of
``bench/matrix.py`` (int32 data, int64 state) both ways for each
configuration, checks every output, and times the two in interleaved rounds
(CUDA events, back to back, medians), in one process:

    python bench/codegen_ablation.py [--toggle items_first|plus] [--rounds 15] [--reps 10]
        [--shape 8192x65536] [--config THREADS,ITEMS,SCAN,IO ...]

One line per configuration: GB/s of each way and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import _common
import _matrix_kernels
import numpy as np
from _ablations import items_first, plus
from numba import cuda

CONFIGS = [
    (128, 4, "raking", "vectorize"),
    (256, 4, "raking", "vectorize"),
    (256, 4, "raking", "warp_transpose"),
    (128, 4, "warp_scans", "warp_transpose"),
    (256, 4, "warp_scans", "vectorize"),
    (256, 4, "warp_scans", "warp_transpose"),
    (512, 4, "warp_scans", "vectorize"),
    (512, 4, "raking", "vectorize"),
    (512, 4, "raking", "warp_transpose"),
    (256, 8, "raking", "warp_transpose"),
    (256, 8, "raking", "direct"),
    (128, 16, "raking", "warp_transpose"),
]


TOGGLES = {
    "items_first": (items_first, "items first", "CUB order"),
    "plus": (plus, "plus<>", "functor"),
}


def _config(text: str) -> tuple[int, int, str, str]:
    threads, items, algo, io = text.split(",")
    return int(threads), int(items), algo, io


def _launcher(kernel: Any, rows: int, threads: int, src: Any, dst: Any) -> Any:
    def launch() -> None:
        kernel[rows, threads](src, dst)

    return launch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--shape", type=_common.parse_shape, default=(8192, 65536))
    parser.add_argument("--toggle", choices=sorted(TOGGLES), default="items_first")
    parser.add_argument(
        "--config",
        action="append",
        type=_config,
        help="THREADS,ITEMS,SCAN,IO (repeatable; default: a fixed list)",
    )
    args = parser.parse_args()
    toggle, on_name, off_name = TOGGLES[args.toggle]
    rows, cols = args.shape
    rng = np.random.default_rng(0)
    host = rng.integers(-3, 4, size=(rows, cols), dtype=np.int32)
    src = cuda.to_device(host)
    dst = cuda.device_array_like(host)
    bad = cuda.device_array(1, np.int64)

    def check(kernel: Any, threads: int) -> bool:
        dst[:] = 7
        kernel[rows, threads](src, dst)
        bad[:] = 0
        _matrix_kernels.count_bad[256, 256](src, dst, bad)
        return int(bad.copy_to_host()[0]) == 0

    new_event = lambda: cuda.event(timing=True)  # noqa: E731
    elapsed = lambda a, b: cuda.event_elapsed_time(a, b)  # noqa: E731
    print(f"shape {rows}x{cols} int32, int64 state; rounds {args.rounds} x {args.reps} launches")
    columns = ["threads x items", "scan / tile I/O", f"{on_name} GB/s", f"{off_name} GB/s"]
    print(f"toggle: {args.toggle}")
    print("| " + " | ".join([*columns, f"{on_name} / {off_name}"]) + " |")
    print("| --- | --- | --- | --- | --- |")
    for threads, items, algo, io in args.config or CONFIGS:
        kernels = {}
        for enabled in (True, False):
            kernel = _matrix_kernels.make_explicit_kernel("int32", threads, items, algo, io)
            with toggle(enabled):
                ok = check(kernel, threads)  # compiles under the chosen order
            if not ok:
                raise SystemExit(f"wrong result: {threads}x{items} {algo}/{io} {enabled=}")
            kernels[enabled] = kernel
        samples: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.rounds):
            for enabled in (True, False) if r % 2 == 0 else (False, True):
                k = kernels[enabled]
                samples[enabled] += _common.time_launches(
                    _launcher(k, rows, threads, src, dst),
                    new_event,
                    elapsed,
                    reps=args.reps,
                    warmup=2,
                )
        gb = {e: _common.gbps(rows, cols, 4, statistics.median(samples[e])) for e in (True, False)}
        for enabled in (True, False):
            if not check(kernels[enabled], threads):
                raise SystemExit(f"wrong result after timing: {threads}x{items} {algo}/{io}")
        print(
            f"| {threads} x {items} | {algo} / {io} | {gb[True]:.0f} | {gb[False]:.0f} "
            f"| {gb[True] / gb[False]:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
