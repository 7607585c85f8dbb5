# SPDX-License-Identifier: Apache-2.0
"""Tile loops a GPU gets silently wrong, refused by the simulator; block.tile_size.

- flags computed from items a partial tile left unfilled (loaded without
  ``oob_default=``) reaching a carried scan (``sim_only``: a GPU counts
  whatever the items held);
- a loop whose step is not the tile (written for another block shape or
  another items array) with a prefix carried between its tiles (``sim_only``);
- static shared arrays over the 48 KiB a compiled kernel may declare
  (``sim_only``: the compiled path refuses it when linking);
- what stays accepted: guarded flags, reverse walks of reverse scans,
  independent tiles, and loops stepped by ``block.tile_size`` (these also run
  on a GPU). The iterators and the order of carried tiles:
  tests/sim/test_sim_tile_iterators.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import cuda

import scan
import statefn
from scan import PlanError, ScanError, block

pytestmark = pytest.mark.sim

HERE = __file__
ITEMS = 4
THREADS = 32


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _refused(launch, line: str, start: str, *, cls=ScanError) -> str:
    """Run *launch*; check the kernel's line is named and the message starts with *start*."""
    with pytest.raises(cls) as info:
        launch()
    text = str(info.value)
    assert re.match(r"tid=\[\d+, \d+, \d+\] ctaid=\[\d+, \d+, \d+\]: ", text), text
    text = text.split(": ", 1)[1]
    if line:
        where, source, text = text.split("\n", 2)
        assert re.fullmatch(rf'File "{re.escape(HERE)}", line \d+, in \w+', where), where
        assert source.strip() == line
    assert text.startswith(start), text
    return text


# ------------------------------------------------ values computed from unfilled items


@cuda.jit
def count_positive(src, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    flags = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items)
        for i in range(ITEMS):
            flags[i] = 1 if items[i] > 0 else 0
        block.exclusive_sum(flags, flags, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@cuda.jit
def count_positive_if_else(src, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    flags = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items)
        for i in range(ITEMS):
            if items[i] > 0:
                flags[i] = 1
            else:
                flags[i] = 0
        block.exclusive_sum(flags, flags, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@cuda.jit
def sum_doubled(src, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items)
        for i in range(ITEMS):
            items[i] = items[i] * 2
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


SCAN_LINE = "block.exclusive_sum(flags, flags, prefix_op=running_total, prefix_state=state)"
DERIVED = (
    "exclusive_sum: values hold an item computed from an item that no load filled: item 0 of "
    "thread 11 was computed from (or chosen by a comparison of) an item past a partial tile's "
    "valid range, which block.load leaves as it was without oob_default=, and the prefix "
    "callback takes in the whole tile's aggregate; pass oob_default= to block.load (a value "
    "whose result is the scan's identity, e.g. 0 when the flags are items[i] > 0), or compute "
    "only from items before the valid count (flags[i] = 1 if base + cuda.threadIdx.x * "
    "len(items) + i < n and items[i] > 0 else 0)"
)
# 300 items: two full tiles of 128, then 44 items (threads 0 to 10); every item is kept
KEPT = (np.arange(300) % 5 + 1).astype(np.int32)


@pytest.mark.sim_only
@pytest.mark.parametrize("kernel", [count_positive, count_positive_if_else])
def test_flags_from_unfilled_items_are_refused_at_the_scan(kernel):
    total = np.zeros(1, np.int64)
    got = _refused(lambda: kernel[1, THREADS](KEPT, total), SCAN_LINE, "exclusive_sum")
    assert got == DERIVED


@pytest.mark.sim_only
def test_arithmetic_on_unfilled_items_is_refused_at_the_scan():
    total = np.zeros(1, np.int64)
    _refused(
        lambda: sum_doubled[1, THREADS](KEPT, total),
        "block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)",
        "inclusive_sum: values hold an item computed from an item that no load filled: item 0 "
        "of thread 11",
    )


@cuda.jit
def count_positive_guarded(src, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    flags = cuda.local.array(ITEMS, np.int32)
    n = src.shape[0]
    for base in range(0, n, block.tile_size(items)):
        block.load(src, base, items)
        for i in range(ITEMS):
            # the guard second: the unfilled comparison alone decides nothing
            flags[i] = 1 if items[i] > 0 and base + cuda.threadIdx.x * ITEMS + i < n else 0
        block.exclusive_sum(flags, flags, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@cuda.jit
def count_positive_oob(src, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    flags = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items, oob_default=0)
        for i in range(ITEMS):
            flags[i] = 1 if items[i] > 0 else 0
        block.exclusive_sum(flags, flags, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@pytest.mark.parametrize("kernel", [count_positive_guarded, count_positive_oob])
def test_guarded_or_padded_flags_count_right(kernel):
    src = np.where(np.arange(300) % 3 == 0, -1, 1).astype(np.int32)
    total = np.zeros(1, np.int64)
    kernel[1, THREADS](src, total)
    assert total[0] == (src > 0).sum()


# ------------------------------------------------ tile steps


@cuda.jit
def step_for_128_threads(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(8, np.int32)
    for base in range(0, src.shape[1], 128 * 8):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)


@cuda.jit
def step_for_4_items(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(8, np.int32)
    for base in range(0, src.shape[1], 64 * 4):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)


@cuda.jit
def step_by_tile_size(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(8, np.int32)
    for base in range(0, src.shape[1], block.tile_size(items)):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)


LOAD_LINE = "block.load(src[cuda.blockIdx.x], base, items, oob_default=0)"
FIX = (
    "walk the tiles with for base in block.tiles(n, items), whose step is the launch's tile, "
    "or launch the block shape the step was written for (threads= states it in the call)"
)


@pytest.mark.sim_only
def test_step_written_for_more_threads_is_refused():
    src = np.ones((1, 2000), np.int32)
    got = _refused(lambda: step_for_128_threads[1, 64](src, np.zeros_like(src)), LOAD_LINE, "load")
    assert got == (
        "load: this thread's tiles on one row start at offset 0 and then 1024, a step of 1024 "
        "items, but a tile of this launch is 64 threads x 8 items per thread = 512 items: "
        "items 512 to 1023 of the row are in no tile, and the prefix the scan between them "
        f"carries misses them; {FIX}"
    )


@pytest.mark.sim_only
def test_step_written_for_fewer_items_is_refused():
    src = np.ones((1, 2000), np.int32)
    got = _refused(lambda: step_for_4_items[1, 64](src, np.zeros_like(src)), LOAD_LINE, "load")
    assert got == (
        "load: this thread's tiles on one row start at offset 0 and then 256, a step of 256 "
        "items, but a tile of this launch is 64 threads x 8 items per thread = 512 items: "
        "items 256 to 511 of the row are in both tiles, and the prefix the scan between them "
        f"carries counts them twice; {FIX}"
    )


@pytest.mark.parametrize("threads", [32, 64, 96])
def test_step_by_tile_size_follows_the_launch(threads):
    src = np.arange(2 * 1000, dtype=np.int32).reshape(2, 1000) % 7
    dst = np.zeros_like(src)
    step_by_tile_size[2, threads](src, dst)
    np.testing.assert_array_equal(dst, np.cumsum(src, axis=1))


@cuda.jit
def reverse_suffix_total(src, total):
    # walks the row from its end, tile by tile, as a reverse scan's carried suffix needs
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    tile = block.tile_size(items)
    last = (src.shape[0] - 1) // tile * tile
    for base in range(last, -1, -tile):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(
            items, items, prefix_op=running_total, prefix_state=state, reverse=True
        )
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@cuda.jit
def every_other_tile(src, dst):
    # independent tiles (no carried prefix): a stride on purpose
    items = cuda.local.array(2, np.int32)
    for base in range(0, src.shape[0], 2 * block.tile_size(items)):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items)
        block.store(dst, base, items)


def test_reverse_walks_and_independent_tiles_are_accepted():
    src = np.arange(500, dtype=np.int32) % 5
    total = np.zeros(1, np.int64)
    reverse_suffix_total[1, THREADS](src, total)
    assert total[0] == src.sum()
    dst = np.zeros_like(src)
    every_other_tile[1, THREADS](src, dst)
    for base in range(0, 500, 128):
        tile = src[base : base + 64]
        np.testing.assert_array_equal(dst[base : base + 64], np.cumsum(tile))
        assert not dst[base + 64 : base + 128].any()


# ------------------------------------------------ block.tile_size


@cuda.jit
def sizes(out):
    items = cuda.local.array(6, np.float32)
    out[0] = block.tile_size(items)
    out[1] = block.tile_size(3)
    out[2] = block.tile_size(items, threads=(16, 2))


def test_tile_size_is_threads_times_items():
    out = np.zeros(3, np.int64)
    sizes[1, (16, 2)](out)
    assert list(out) == [192, 96, 192]


@cuda.jit
def size_of_a_global_array(src, out):
    out[0] = block.tile_size(src)


@cuda.jit
def size_for_other_threads(out):
    items = cuda.local.array(4, np.int32)
    out[0] = block.tile_size(items, threads=128)


def test_tile_size_rejections():
    out = np.zeros(1, np.int64)
    with pytest.raises(PlanError) as info:
        size_of_a_global_array[1, 32](out, out)
    assert str(getattr(info.value, "rejection", info.value)).endswith(
        "tile_size: cannot tell how many items each thread holds: items is not a "
        "cuda.local.array of literal length in this kernel, nor a literal int; pass the "
        "items array of the tile's block.load, or the items per thread: block.tile_size(8)"
    )
    with pytest.raises(PlanError) as info:
        size_for_other_threads[1, 32](out)
    assert str(getattr(info.value, "rejection", info.value)).endswith(
        "tile_size: the kernel was launched with block shape (32, 1, 1) but the call says "
        "threads=(128, 1, 1); make them agree (or drop threads= to use the launch's)"
    )


# ------------------------------------------------ shared memory


@cuda.jit
def two_shared_arrays(out):
    a = cuda.shared.array(4, np.int32)
    b = cuda.shared.array(8, np.float32)
    if cuda.threadIdx.x == 0:
        a[0] = 1
        b[0] = 2.5
    cuda.syncthreads()
    out[0] = a.size
    out[1] = b.size
    out[2] = a[0]
    out[3] = b[0]


def test_shared_arrays_of_different_lines_are_different_arrays():
    out = np.zeros(4, np.float64)
    two_shared_arrays[1, 4](out)
    assert list(out) == [4, 8, 1, 2.5]


@cuda.jit
def row_in_shared_memory(src, dst):
    tile = cuda.shared.array(34560, np.float32)  # 135 KiB
    tile[cuda.threadIdx.x] = src[cuda.threadIdx.x]
    cuda.syncthreads()
    dst[cuda.threadIdx.x] = tile[cuda.threadIdx.x]


@pytest.mark.sim_only
def test_static_shared_memory_over_the_limit_is_refused():
    src = np.ones(32, np.float32)
    got = _refused(
        lambda: row_in_shared_memory[1, 32](src, np.zeros_like(src)),
        "",
        "kernel row_in_shared_memory",
        cls=scan.CompileError,
    )
    assert got == (
        "kernel row_in_shared_memory needs 138240 bytes of static shared memory, more than "
        "the 49152 (48 KiB) a kernel may declare; its cuda.shared.array allocations alone "
        "take 138240 bytes, before the temp storage of its scan.block calls: make them "
        "smaller (a tile per block, not a row), or keep the tile in local arrays "
        "(block.load/block.store move it without a shared copy)"
    )
