# SPDX-License-Identifier: Apache-2.0
"""scan.compile: a kernel that uses scan.block, compiled and linked for a cc without a GPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import _cache, block

pytestmark = pytest.mark.nvrtc

SIG = "void(int32[:, ::1], int32[:, ::1])"


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@cuda.jit
def row_cumsum(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(8, np.int32)
    for base in range(0, src.shape[1], 256 * 8):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)


def test_cubin_links_the_kernel_with_its_cub_code_through_the_cache() -> None:
    cubin = scan.compile(row_cumsum, SIG, cc=(9, 0), block=256)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    assert b"row_cumsum" in cubin  # the kernel's entry point
    before = _cache.stats()
    again = scan.compile(row_cumsum, SIG, cc=(9, 0), block=256)
    after = _cache.stats()
    assert again == cubin
    assert after.get("builds", 0) == before.get("builds", 0)  # nothing compiled or linked


def test_ltoir_output_is_every_object_kernel_first() -> None:
    args = (types.int32[:, ::1], types.int32[:, ::1])
    objects = scan.compile(row_cumsum.py_func, args, cc=(9, 0), output="ltoir", block=256)
    assert isinstance(objects, list)
    # the kernel, one unit with the load, scan and store providers, the callback
    assert len(objects) == 3
    assert all(isinstance(o, bytes) and o for o in objects)


def test_block_shape_comes_from_block_or_threads() -> None:
    with pytest.raises(scan.PlanError, match=r"scan\.compile takes the launch's block shape"):
        scan.compile(row_cumsum, SIG, cc=(9, 0))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cc": (9, 0), "output": "ptx"}, ValueError, "output must be 'cubin' or 'ltoir'"),
        ({"cc": 90}, TypeError, r"cc must be a \(major, minor\) tuple"),
        ({"cc": (9, 0), "block": 2048}, scan.PlanError, "CUDA allows at most 1024"),
    ],
)
def test_bad_arguments_are_refused_before_compiling(kwargs: Any, error: Any, match: str) -> None:
    with pytest.raises(error, match=match):
        scan.compile(row_cumsum, SIG, **kwargs)


def test_a_kernel_returns_nothing() -> None:
    with pytest.raises(TypeError, match="a kernel returns nothing"):
        scan.compile(row_cumsum, "int32(int32[:, ::1], int32[:, ::1])", cc=(9, 0), block=256)
