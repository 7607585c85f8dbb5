# SPDX-License-Identifier: Apache-2.0
"""The row-wise running total: a tiled scan kernel with a stateful prefix callback.

Run it with ``python -m scan.demo`` (``./run demo`` from a checkout). On a
machine with a CUDA GPU it compiles and launches the kernel on a large array and
reports throughput; under ``NUMBA_ENABLE_CUDASIM=1``, or when no GPU is found
(it says so and starts itself again in the simulator), it runs the same kernel
in numba's simulator on a small array. Either way the result is checked against
NumPy.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda
from numba.core import config as numba_config

import statefn
from scan import block

THREADS = 128
ITEMS = 4
TILE = THREADS * ITEMS


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    """Carry the row's total from one tile to the next."""
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@cuda.jit  # type: ignore[untyped-decorator]
def row_cumsum(src: Any, dst: Any, totals: Any) -> None:
    """One block per row: load a tile, scan it seeded by the carried prefix, store it."""
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0  # every thread initialises its copy equally
    items = cuda.local.array(ITEMS, np.int32)
    for base in block.tiles(src.shape[1], items):  # THREADS x ITEMS apart
        block.load(src[row], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[row], base, items)
    if cuda.threadIdx.x == 0:  # thread 0 holds the authoritative state
        totals[row] = state[0]


def _bench(launch: Callable[[], object], reps: int) -> float:
    launch()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = cuda.event(), cuda.event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cuda.event_elapsed_time(start, stop))
    return float(np.median(times))


def _rerun_in_simulator(argv: list[str]) -> int:
    """Run the demo again in a process where numba simulates the GPU.

    Numba chooses between the device and its simulator once, when it is
    imported, so the fallback needs a new process.
    """
    print(
        "no CUDA GPU found (numba.cuda.is_available() is False): running the demo in the "
        "CUDA simulator at a small size (NUMBA_ENABLE_CUDASIM=1)",
        flush=True,
    )
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    small = [] if "--small" in argv else ["--small"]
    return subprocess.call([sys.executable, "-m", "scan.demo", *small, *argv], env=env)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--cols", type=int, default=None)
    parser.add_argument("--small", action="store_true", help="a size the simulator runs quickly")
    args = parser.parse_args(argv)
    simulated = bool(numba_config.ENABLE_CUDASIM)
    if not simulated and not cuda.is_available():
        return _rerun_in_simulator(list(sys.argv[1:] if argv is None else argv))
    small = args.small or simulated
    rows = args.rows or (2 if small else 8192)
    cols = args.cols or (TILE * 3 + 100 if small else 65536)

    where = "CUDA simulator (no GPU)" if simulated else cuda.get_current_device().name
    if isinstance(where, bytes):
        where = where.decode()
    print(f"row-wise running total, {rows} x {cols} int32, on {where}")
    rng = np.random.default_rng(0)
    src = rng.integers(-3, 4, size=(rows, cols), dtype=np.int32)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(d_src)
    d_totals = cuda.device_array(rows, dtype=np.int64)

    t0 = time.perf_counter()
    row_cumsum[rows, THREADS](d_src, d_dst, d_totals)
    cuda.synchronize()
    first = time.perf_counter() - t0

    got = d_dst.copy_to_host()
    want = np.cumsum(src, axis=1, dtype=np.int64).astype(np.int32)
    ok = np.array_equal(got, want) and np.array_equal(
        d_totals.copy_to_host(), src.sum(axis=1, dtype=np.int64)
    )
    print(f"first launch (compile + run): {first:.2f} s")
    print(f"matches numpy.cumsum and row totals: {ok}")
    if not simulated:
        ms = _bench(lambda: row_cumsum[rows, THREADS](d_src, d_dst, d_totals), reps=20)
        gbps = 2 * src.nbytes / ms / 1e6
        print(f"median of 20 launches: {ms:.3f} ms, {gbps:.0f} GB/s (bytes read + written)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
