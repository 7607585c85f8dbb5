# SPDX-License-Identifier: Apache-2.0
"""How many block barriers a tile loop's scan costs, counted in the linked PTX.

A scan with a stateful prefix callback, algorithm ``warp_scans`` and
library-owned storage ends with CUB's own barrier after the callback, and the
provider adds none (see ``scan._codegen.callback_barrier_suffices``); with
caller-owned storage, another algorithm or no callback it adds one. The loop
body is linked to PTX with the CCCL headers of the pip wheels and, when a
CUDA 13.0 toolkit is installed, with its CCCL 3.0 headers too (the GPU
machine's), and the barrier instructions are counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.cccl import skip_reason, toolkit_cccl

pytestmark = pytest.mark.nvrtc

CHILD = textwrap.dedent(
    """
    import json, re
    import numpy as np
    from numba import cuda
    from numba.cuda import types
    from cuda.core import Linker, LinkerOptions, ObjectCode
    import statefn
    from scan import block
    from helpers.kernels import compile_kernel

    @statefn.stateful(np.int64)
    def running_total(state, block_aggregate):
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

    TEMP_BYTES, TEMP_ALIGN = block.temp_storage(
        "scan", np.int32, 256, 8, algorithm="warp_scans", cc=(9, 0)
    )

    def callback_scan(algorithm):
        def kernel(a):
            state = cuda.local.array(1, np.int64)
            state[0] = 0
            items = cuda.local.array(8, np.int32)
            for base in range(0, a.shape[0], 2048):
                block.load(a, base, items, threads=256, algorithm="direct")
                block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state,
                                    threads=256, algorithm=algorithm)
                block.store(a, base, items, threads=256, algorithm="direct")
        return kernel

    def callback_caller_storage(a):
        temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=TEMP_ALIGN)
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(8, np.int32)
        for base in range(0, a.shape[0], 2048):
            block.load(a, base, items, threads=256, algorithm="direct")
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state,
                                threads=256, algorithm="warp_scans", temp_storage=temp)
            block.store(a, base, items, threads=256, algorithm="direct")

    def no_callback(a):
        items = cuda.local.array(8, np.int32)
        for base in range(0, a.shape[0], 2048):
            block.load(a, base, items, threads=256, algorithm="direct")
            block.inclusive_sum(items, items, threads=256, algorithm="warp_scans")
            block.store(a, base, items, threads=256, algorithm="direct")

    counts = {}
    kernels = {
        "callback_implicit": callback_scan("warp_scans"),
        "callback_caller_storage": callback_caller_storage,
        "callback_raking": callback_scan("raking"),
        "no_callback": no_callback,
    }
    for name, kernel in kernels.items():
        codes = compile_kernel(kernel, (types.int32[::1],))
        objs = [ObjectCode.from_ltoir(c if isinstance(c, bytes) else c.data) for c in codes]
        opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
        ptx = Linker(*objs, options=opts).link("ptx").code
        text = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
        counts[name] = len(re.findall(r"\\b(?:bar|barrier)(?:\\.cta)?\\.sync", text))
    print(json.dumps(counts))
    """
)


def _barrier_counts(tmp_path: Path, cccl_include: Path | None) -> dict[str, int]:
    root = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ,
        STATEFN_SCAN_CACHE_DIR=str(tmp_path),
        PYTHONPATH=os.pathsep.join([str(root), str(root / "tests")]),
    )
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.pop("STATEFN_SCAN_CCCL_INCLUDE", None)
    if cccl_include is not None:
        env["STATEFN_SCAN_CCCL_INCLUDE"] = str(cccl_include)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr[-3000:]
    counts: dict[str, int] = json.loads(out.stdout.strip().splitlines()[-1])
    return counts


def _check(counts: dict[str, int]) -> None:
    # warp_scans: one barrier to share the warp aggregates, one after the callback
    assert counts["callback_implicit"] == 2, counts
    # caller-owned storage may be reused by anything: the trailing barrier stays
    assert counts["callback_caller_storage"] == 3, counts
    assert counts["no_callback"] == 2, counts
    # raking keeps its trailing barrier
    assert counts["callback_raking"] == counts["callback_implicit"] + 1, counts


def test_callback_scan_in_a_loop_has_no_trailing_barrier(tmp_path):
    _check(_barrier_counts(tmp_path, None))


@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_callback_scan_in_a_loop_has_no_trailing_barrier_with_cccl_3_0(tmp_path):
    _check(_barrier_counts(tmp_path, toolkit_cccl()))
