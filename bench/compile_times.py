# SPDX-License-Identifier: Apache-2.0
"""Time to a compiled, linked kernel without a GPU: cold cache, warm cache, plain Numba.

Each measurement is a fresh process that compiles the row-scan kernel of the
README (load, inclusive_sum with a stateful prefix callback, store; 128 threads
x 4 items, int32 values, int64 state) for sm_90 the way a launch does
(numba-cuda's ``compile_cuda``, the kernel's LTO-IR from NVVM) and links it
(the code library's ``get_cubin``: nvJitLink, or the library's cache of linked
kernels), or a plain Numba row-copy kernel of the same shape. The first scan
process starts with an empty cache directory, later ones reuse it; each
reports the library's build counters, so a warm process must show zero NVRTC,
callback and link builds.

    python bench/compile_times.py [--repeats 3] [--concurrent 4]

``--concurrent N`` starts N cold processes at once on one cache folder (each
artifact must be built once among them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

from _compile_timing import run_child, run_together


def main(argv: list[str] | None = None) -> int:
    """Print a table of cold/warm/plain compile-and-link times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=4, help="cold processes at once")
    args = parser.parse_args(argv)
    rows: list[tuple[str, dict[str, object]]] = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
            rows.append(("scan, cold cache", run_child("scan", cache)))
    if args.concurrent > 1:
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
            rows += [
                (f"scan, cold, {args.concurrent} processes at once", r)
                for r in run_together(args.concurrent, cache)
            ]
    with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
        run_child("scan", cache)
        rows += [("scan, warm cache", run_child("scan", cache)) for _ in range(args.repeats)]
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as empty:
            rows += [("plain Numba", run_child("plain", empty)) for _ in range(args.repeats)]
    print(
        "| kernel | compile (s) | link (s) | total (s) | NVRTC builds | callback builds "
        "| link builds |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in rows:
        stats = r["stats"]
        assert isinstance(stats, dict)
        print(
            f"| {name} | {r['compile']:.2f} | {r['link']:.2f} | {r['total']:.2f} | "
            f"{stats.get('builds:provider', 0)} | {stats.get('builds:callback', 0)} | "
            f"{stats.get('builds:kernel', 0)} |"
        )

    def median(label: str) -> float:
        return statistics.median(float(str(r["total"])) for n, r in rows if n == label)

    warm, plain = median("scan, warm cache"), median("plain Numba")
    cold = median("scan, cold cache")
    print(f"\nwarm / plain (medians): {warm:.2f} s / {plain:.2f} s = {warm / plain:.2f}x")
    print(f"cold: {cold:.2f} s")
    if args.concurrent > 1:
        together = [float(str(r["total"])) for n, r in rows if n.endswith("processes at once")]
        print(
            f"{args.concurrent} cold processes at once: slowest {max(together):.2f} s "
            f"= {max(together) / cold:.2f}x one alone; NVRTC builds in all: "
            + str(
                sum(
                    int(r["stats"].get("builds:provider", 0))  # type: ignore[union-attr]
                    for n, r in rows
                    if n.endswith("processes at once")
                )
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
