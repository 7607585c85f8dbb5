# SPDX-License-Identifier: Apache-2.0
"""What the compile-time benchmarks share (``compile_times``, ``compile_phases``,
``new_config_compile``): child-process sources and the runs of fresh processes.

- :data:`CHILD`: compiles and links the README's row-scan kernel (``scan``) or
  a plain Numba row copy (``plain``) for sm_90 without a GPU and prints a JSON
  record (import, compile, link and total seconds, the library's build counters);
- :data:`TIMED`: child-process source in which ``_timed(fn, name)`` adds fn's
  wall time to ``PHASES[name]``;
- :func:`run_child`, :func:`run_together`: one such process, or several at once on
  one cache folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def child_env(cache_dir: str) -> dict[str, str]:
    """A child's environment: the library's cache in `cache_dir`, never the simulator."""
    env = dict(os.environ, STATEFN_SCAN_CACHE_DIR=cache_dir)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return env


def parse_child(stdout: str) -> dict[str, object]:
    """The JSON record a child prints last."""
    result: dict[str, object] = json.loads(stdout.strip().splitlines()[-1])
    return result


def run_child(kind: str, cache_dir: str) -> dict[str, object]:
    """One :data:`CHILD` process of `kind` (``scan`` or ``plain``) on `cache_dir`; its record."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind],
        env=child_env(cache_dir),
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_child(out.stdout)


def run_together(n: int, cache_dir: str, child: str = CHILD) -> list[dict[str, object]]:
    """`n` cold scan processes (``child``'s source) started at once on one cache folder."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", child, "scan"],
            env=child_env(cache_dir),
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
        results.append(parse_child(out))
    return results


#: Child-process source: ``_timed(fn, name)`` adds fn's wall time to ``PHASES[name]``.
TIMED = """
import time as _time
PHASES = {}

def _timed(fn, name):
    def run(*args, **kwargs):
        start = _time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            PHASES[name] = PHASES.get(name, 0.0) + _time.perf_counter() - start
    return run
"""
