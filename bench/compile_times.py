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
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

CHILD = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda, kernel_fixup
    import statefn
    from scan import _cache, block
    t_import = time.perf_counter() - t0

    @statefn.stateful(np.int64)
    def running_total(state, block_aggregate):
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

    def scan_kernel(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(4, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 512):
            block.load(src[row], base, items, threads=128)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state,
                                threads=128)
            block.store(dst[row], base, items, threads=128)

    def plain_kernel(src, dst):
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 512):
            for j in range(4):
                i = base + cuda.threadIdx.x * 4 + j
                if i < src.shape[1]:
                    dst[row, i] = src[row, i]

    kernel = scan_kernel if sys.argv[1] == "scan" else plain_kernel
    arr = types.int32[:, ::1]
    t1 = time.perf_counter()
    # what a launch does: compile to the kernel's code library, then get_cubin
    cres = compile_cuda(kernel, types.void, (arr, arr), nvvm_options={"opt": 3},
                        cc=(9, 0), lto=True)
    kernel_fixup(cres.library.get_function(cres.fndesc.llvm_func_name), False)
    cres.library._entry_name = cres.fndesc.llvm_func_name
    cres.library.get_ltoir(cc=(9, 0, "a"))
    t2 = time.perf_counter()
    cres.library.get_cubin(cc=(9, 0, "a"))
    t3 = time.perf_counter()
    print(json.dumps({"import": t_import, "compile": t2 - t1, "link": t3 - t2,
                      "total": t3 - t1, "stats": _cache.stats()}))
    """
)


def _env(cache_dir: str) -> dict[str, str]:
    env = dict(os.environ, STATEFN_SCAN_CACHE_DIR=cache_dir)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return env


def _parse(stdout: str) -> dict[str, object]:
    result: dict[str, object] = json.loads(stdout.strip().splitlines()[-1])
    return result


def _run(kind: str, cache_dir: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind],
        env=_env(cache_dir),
        capture_output=True,
        text=True,
        check=True,
    )
    return _parse(out.stdout)


def _together(n: int, cache_dir: str, child: str = CHILD) -> list[dict[str, object]]:
    """`n` cold scan processes (``child``'s source) started at once on one cache folder."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", child, "scan"],
            env=_env(cache_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(err)
        results.append(_parse(out))
    return results


def main(argv: list[str] | None = None) -> int:
    """Print a table of cold/warm/plain compile-and-link times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=4, help="cold processes at once")
    args = parser.parse_args(argv)
    rows: list[tuple[str, dict[str, object]]] = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
            rows.append(("scan, cold cache", _run("scan", cache)))
    if args.concurrent > 1:
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
            rows += [
                (f"scan, cold, {args.concurrent} processes at once", r)
                for r in _together(args.concurrent, cache)
            ]
    with tempfile.TemporaryDirectory(prefix="scan-cache-") as cache:
        _run("scan", cache)
        rows += [("scan, warm cache", _run("scan", cache)) for _ in range(args.repeats)]
        with tempfile.TemporaryDirectory(prefix="scan-cache-") as empty:
            rows += [("plain Numba", _run("plain", empty)) for _ in range(args.repeats)]
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
