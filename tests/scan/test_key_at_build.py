# SPDX-License-Identifier: Apache-2.0
"""Compiled callbacks are cached under the key of the values they were compiled with.

Real toolchain, no GPU: kernels are compiled and linked for sm_90 with
``scan.compile``, in child processes that share (or do not share) one cache
folder, so a key that did not describe the compiled code would hand a later
process another program's cubin.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import scan
import statefn
from scan import block

pytestmark = pytest.mark.nvrtc

_CHILD = textwrap.dedent(
    """
    import hashlib, sys
    import numpy as np
    from numba import cuda
    import scan, statefn
    from scan import block

    CAP = int(sys.argv[1])

    @statefn.stateful(np.int64)
    def capped_total(state, block_aggregate):
        prefix = state[0]
        state[0] = min(prefix + block_aggregate, CAP)
        return prefix

    @cuda.jit
    def capped_scan(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(4, np.int32)
        for base in range(0, src.shape[0], 128 * 4):
            block.load(src, base, items, oob_default=0)
            block.inclusive_sum(items, items, prefix_op=capped_total, prefix_state=state)
            block.store(dst, base, items)

    if len(sys.argv) > 2:  # read the key, then change the global, then compile
        capped_total.key
        CAP = int(sys.argv[2])
    cubin = scan.compile(capped_scan, "void(int32[::1], int32[::1])", cc=(9, 0), block=128)
    print(hashlib.sha256(cubin).hexdigest())
    """
)


def _cubin_digest(cache: Path, *caps: int) -> str:
    env = {**os.environ, "STATEFN_SCAN_CACHE_DIR": str(cache), "NUMBA_ENABLE_CUDASIM": "0"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, caps)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_global_changed_after_a_key_read_never_poisons_the_cache(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    # CAP = 1000, key read, CAP = 200, compile: built and cached with 200
    changed = _cubin_digest(shared, 1000, 200)
    # a later process with CAP = 1000 and the same cache gets what a fresh cache builds
    later = _cubin_digest(shared, 1000)
    fresh = _cubin_digest(tmp_path / "fresh", 1000)
    assert later == fresh
    # and the first process built the program it ran: the one of CAP = 200
    assert changed == _cubin_digest(tmp_path / "fresh200", 200)
    assert changed != fresh


LIMIT = 1000


@statefn.stateful(np.int64)
def limited_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = min(prefix + block_aggregate, LIMIT)
    return prefix


def _kernel() -> Any:
    def limited_scan(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(4, np.int32)
        for base in range(0, src.shape[0], 128 * 4):
            block.load(src, base, items, oob_default=0)
            block.inclusive_sum(items, items, prefix_op=limited_total, prefix_state=state)
            block.inclusive_sum(items, items, prefix_op=limited_total, prefix_state=state)
            block.store(dst, base, items)

    return cuda.jit(limited_scan)


def test_a_kernel_compiled_after_a_global_changes_sees_the_new_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from statefn import _descriptors

    counted: list[str] = []
    original = _descriptors.descriptor_key

    def counting(kind: str, **kwargs: Any) -> str:
        if kind == "stateful":
            counted.append(kind)
        return original(kind, **kwargs)

    monkeypatch.setattr(_descriptors, "descriptor_key", counting)
    signature = "void(int32[::1], int32[::1])"
    first = scan.compile(_kernel(), signature, cc=(9, 0), block=128, output="ltoir")
    # one key computation for the kernel's two calls naming the callback
    assert len(counted) == 1
    monkeypatch.setitem(globals(), "LIMIT", 200)
    second = scan.compile(_kernel(), signature, cc=(9, 0), block=128, output="ltoir")
    assert len(counted) == 2
    # the callback's LTO-IR (its symbol carries the key) differs with the new value
    digests = [{hashlib.sha256(obj).hexdigest() for obj in objs} for objs in (first, second)]
    assert digests[0] != digests[1]
    monkeypatch.setitem(globals(), "LIMIT", 1000)
    third = scan.compile(_kernel(), signature, cc=(9, 0), block=128, output="ltoir")
    assert {hashlib.sha256(obj).hexdigest() for obj in third[1:]} == {
        hashlib.sha256(obj).hexdigest() for obj in first[1:]
    }
