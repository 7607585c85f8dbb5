# SPDX-License-Identifier: Apache-2.0
"""The default tile I/O at 256 x 4 with 4-byte items: vector accesses, else warp_transpose.

Where a tile is 16-byte aligned it moves as ``vectorize`` does; where it is
not, it takes CUB's ``warp_transpose`` (coalesced warp-striped accesses and an
exchange through shared memory) instead of the direct accesses of a named
``vectorize``. The call then owns ``warp_transpose``'s temp storage and ends
that branch, and only that branch, with a barrier.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from helpers.plans import tile_plan
from numba import cuda

from scan import block
from scan._primitives.tile_io import render_tile_io

CC = (9, 0)


@pytest.mark.parametrize("direction", ["load", "store"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint32])
def test_default_at_256_by_4_falls_back_to_warp_transpose(direction: str, dtype: Any) -> None:
    plan = tile_plan(direction, dtype, 256, 4, None)
    assert (plan.algorithm, plan.unaligned) == ("vectorize", "warp_transpose")
    assert plan.uses_shared_memory


@pytest.mark.parametrize(
    ("dtype", "threads", "items", "algorithm"),
    [
        (np.int32, 256, 4, "vectorize"),  # named: direct fallback, as CUB
        (np.int32, 128, 4, None),  # the default there is plain vectorize
        (np.int64, 256, 4, None),  # 8-byte items: warp_transpose
        (np.int32, 256, 8, None),
    ],
)
def test_other_plans_have_no_fallback(dtype: Any, threads: int, items: int, algorithm: Any) -> None:
    plan = tile_plan("load", dtype, threads, items, algorithm)
    assert plan.unaligned is None


def test_the_fallback_is_part_of_the_key() -> None:
    named = tile_plan("load", np.int32, 256, 4, "vectorize")
    default = tile_plan("load", np.int32, 256, 4, None)
    assert named.key != default.key
    assert named != default


def test_source_takes_warp_transpose_and_a_barrier_only_when_unaligned() -> None:
    text = render_tile_io(tile_plan("load", np.int32, 256, 4, None))
    assert "cub::BLOCK_LOAD_DIRECT" not in text
    full = text[
        text.index("if (valid >= 1024)") : text.index("} else {\n    const int valid_items")
    ]
    aligned, unaligned = full.split("} else {")
    # the aligned tile: each thread's 16 bytes as one word, written out (CUB's
    # BLOCK_LOAD_VECTORIZE makes the same machine code and costs NVRTC 0.1 s more)
    assert "reinterpret_cast<const uint4*>(p) + cub::RowMajorTid(256, 1, 1) * 1;" in aligned
    assert "memcpy(&thread_items, w, sizeof(w));" in aligned
    assert "block_io_t" not in aligned
    assert "__syncthreads" not in aligned
    assert "block_transpose_t(temp_storage).Load(p, thread_items);" in unaligned
    assert "__syncthreads" in unaligned
    assert text.count("__syncthreads") == 1
    assert "typename cub::BlockLoad<value_t, 256, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE" in text
    named = render_tile_io(tile_plan("store", np.int32, 256, 4, "vectorize"))
    assert "cub::BLOCK_STORE_DIRECT" in named
    assert "uint4* v = reinterpret_cast<uint4*>(p) + cub::RowMajorTid(256, 1, 1) * 1;" in named
    assert "block_io_t(temp_storage).Store" not in named
    # 8 bytes a thread are no 16-byte word: CUB's vectorised accesses (int2)
    assert "block_io_t(temp_storage).Load(p, thread_items);" in render_tile_io(
        tile_plan("load", np.int32, 256, 2, "vectorize")
    )
    assert "__syncthreads" not in named


def test_temp_storage_query_sizes_the_fallback() -> None:
    default = block.temp_storage("load", np.int32, 256, 4, cc=CC)
    transpose = block.temp_storage("load", np.int32, 256, 4, algorithm="warp_transpose", cc=CC)
    named = block.temp_storage("load", np.int32, 256, 4, algorithm="vectorize", cc=CC)
    assert default == transpose
    assert default.size > named.size


def _linked_ptx(algorithm: str | None) -> str:
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from helpers.kernels import compile_kernel
    from numba.cuda import types

    def kernel(src: Any, dst: Any) -> None:
        items = cuda.local.array(4, np.int32)
        for base in range(0, src.shape[0], 1024):
            block.load(src, base, items, threads=256, algorithm=algorithm)
            block.store(dst, base, items, threads=256, algorithm=algorithm)

    codes = compile_kernel(kernel, (types.int32[::1], types.int32[::1]))
    objs = [ObjectCode.from_ltoir(c if isinstance(c, bytes) else c.data) for c in codes]
    opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
    ptx = Linker(*objs, options=opts).link("ptx").code
    return ptx.decode() if isinstance(ptx, bytes) else str(ptx)


@pytest.mark.nvrtc
def test_linked_code_has_both_paths() -> None:
    default = _linked_ptx(None)
    assert re.search(r"ld\.global(\.\w+)*\.v4", default)
    assert re.search(r"st\.global(\.\w+)*\.v4", default)
    # the exchange: through shared memory, one barrier per call after it
    assert re.search(r"st\.shared", default)
    assert len(re.findall(r"\b(?:bar|barrier)(?:\.cta)?\.sync", default)) == 2
    named = _linked_ptx("vectorize")
    assert re.search(r"ld\.global(\.\w+)*\.v4", named)
    assert not re.search(r"\.shared", named)
    assert not re.search(r"\b(?:bar|barrier)(?:\.cta)?\.sync", named)
