# SPDX-License-Identifier: Apache-2.0
"""A second process compiles and links a kernel without NVRTC, callbacks or nvJitLink.

Real toolchain, no GPU: kernels are compiled for sm_90 with ``compile_all``
and through numba-cuda's own ``compile_cuda`` (the code path of a launch,
which creates the kernel's code library), and linked by that library's
``get_cubin``, which the library wires to its cache of linked kernels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numba_cuda
import numpy as np
import pytest
from helpers.kernels import kernel_library
from numba import cuda
from numba.cuda import types

import statefn
from scan import _cache, block
from scan._numba_cuda import _linkcache

pytestmark = pytest.mark.nvrtc

ROOT = Path(__file__).resolve().parents[2]
ARCH = (9, 0, "a")

_CHILD = textwrap.dedent(
    """
    import hashlib, json
    import numpy as np
    from numba import cuda
    from numba.cuda import types
    from helpers.kernels import kernel_library
    import statefn
    from scan import _cache, block

    @statefn.stateful(np.int64)
    def running_total(state, block_aggregate):
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

    def row_scan(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(4, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 512):
            block.load(src[row], base, items, threads=128)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state,
                                threads=128)
            block.store(dst[row], base, items, threads=128)

    arr = types.int32[:, ::1]
    cuda.compile_all(row_scan, (arr, arr), device=False, abi="numba", output="ltoir",
                     cc=(9, 0))
    library = kernel_library(row_scan, (arr, arr))
    cubin = bytes(library.get_cubin(cc=(9, 0, "a")).code)
    sass_functions = cubin.count(b".text." + library._entry_name.encode())
    print(json.dumps({"stats": _cache.stats(), "elf": cubin[:4] == b"\\x7fELF",
                      "kernel_code": sass_functions > 0,
                      "sha256": hashlib.sha256(cubin).hexdigest()}))
    """
)


def _child(cache_dir: Path) -> dict[str, Any]:
    env = dict(os.environ, STATEFN_SCAN_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join((str(ROOT), str(ROOT / "tests")))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.pop(_cache.ENV_CACHE, None)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_second_process_compiles_and_links_nothing(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cold = _child(cache_dir)
    assert cold["elf"]
    assert cold["kernel_code"]  # the kernel is in the cubin, not stripped as unused
    assert cold["stats"]["builds:provider"] == 1  # load, scan and store in one unit
    assert cold["stats"]["builds:callback"] == 1
    assert cold["stats"]["builds:kernel"] == 1

    # No NVRTC compilation and no callback compilation from the second process on.
    warm = _child(cache_dir)
    assert warm["stats"].get("builds:provider", 0) == 0, warm["stats"]
    assert warm["stats"].get("builds:callback", 0) == 0, warm["stats"]
    # Compiling the callback in the cold process advanced Numba's function
    # counter, so the kernel compiled after compile_all may have another symbol
    # name there than in a warm process: the second process may link it once
    # more (a miss, never a wrong hit); from then on nothing is built.
    assert warm["stats"].get("builds:kernel", 0) <= 1, warm["stats"]

    again = _child(cache_dir)
    assert again["stats"]["builds"] == 0, again["stats"]
    assert again["stats"]["disk_hits"] == 3  # the providers' unit, the callback, the kernel
    assert again["kernel_code"]
    assert again["sha256"] == warm["sha256"]


# ---------------------------------------------------------------------------- in process


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.int64)
def running_total_plus_one(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate + 1
    return prefix


def _library(prefix_op: Any, **options: Any) -> Any:
    def kernel(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(2, np.int32)
        block.load(src, 0, items, threads=32)
        block.inclusive_sum(items, items, prefix_op=prefix_op, prefix_state=state, threads=32)
        block.store(dst, 0, items, threads=32)

    arr = types.int32[::1]
    return kernel_library(kernel, (arr, arr), **options)


@pytest.fixture(scope="module")
def library() -> Any:
    return _library(running_total)


def test_numba_cuda_still_offers_what_the_link_cache_patches(library: Any) -> None:
    # The cache wraps numba-cuda's CUDACodeLibrary.get_cubin and reads its
    # private state; a numba-cuda that renamed any of it would silently turn
    # the cache off (attach() leaves unknown libraries alone). Fail loudly here.
    missing = [name for name in _linkcache.NEEDED if not hasattr(library, name)]
    assert not missing, (
        f"numba-cuda {numba_cuda.__version__} changed CUDACodeLibrary (no {missing}): "
        "the linked-kernel cache is off; update scan/_numba_cuda/_linkcache.py"
    )


def test_kernel_library_is_wired_once(library: Any) -> None:
    assert getattr(library, _linkcache._MARK) is True
    wired = library.get_cubin
    _linkcache.attach(library)
    assert library.get_cubin is wired


def test_key_follows_every_link_input(library: Any) -> None:
    key = _linkcache.link_key(library, ARCH)
    assert key is not None
    assert _linkcache.link_key(library, ARCH) == key
    # another architecture (the kernel's LTO-IR is recompiled for it)
    assert _linkcache.link_key(library, (9, 0, "")) != key
    # another register limit
    assert _linkcache.link_key(_library(running_total, max_registers=32), ARCH) != key
    # another callback: another linked object
    assert _linkcache.link_key(_library(running_total_plus_one), ARCH) != key


def test_links_it_cannot_read_by_content_are_not_cached(library: Any) -> None:
    library.needs_cudadevrt = True
    try:
        assert _linkcache.link_key(library, ARCH) is None
    finally:
        library.needs_cudadevrt = False

    class Opaque:
        kind = "ltoir"

    assert _linkcache._input_digest(Opaque()) is None
    assert _linkcache._input_digest(str(ROOT / "no-such-file.ltoir")) is None
