# SPDX-License-Identifier: Apache-2.0
"""block.tiles and warp.tiles, and the hand-written tile-loop mistakes the simulator refuses.

- The iterators walk a row as the hand-written loops do (forward; reverse
  from the last, partial tile, aligned at the row's start; a logical warp's
  tiles), in the simulator and on a GPU (``SCAN_TESTS_BACKEND=gpu``).
- ``sim_only``: what a GPU gets silently wrong, refused at the kernel's line
  with the fix: a reverse scan whose carried suffix gets its tiles in forward
  order and a forward scan whose tiles come in reverse order; a warp loop
  stepping by another tile than ``lanes x items``; a ``lanes=`` that differs
  between a warp tile's load, scan and store; an offset (or ``valid=``, or a
  look-back's ``tile=``) that differs between the threads of one call; a
  reverse look-back numbered from the row's start; and library-owned temp
  storage over the 48 KiB a compiled kernel may declare.
- Correct programs stay accepted: two passes over one row (a new state
  each), independent tiles, a warp's row from the warp's own offset.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import cuda

import scan
import statefn
from scan import ScanError, block, warp

pytestmark = pytest.mark.sim

HERE = __file__


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _refused(launch, line: str, *, cls=ScanError) -> str:
    """Run *launch*; check the kernel's line is named; return the message after it."""
    with pytest.raises(cls) as info:
        launch()
    text = str(info.value)
    assert re.match(r"tid=\[\d+, \d+, \d+\] ctaid=\[\d+, \d+, \d+\]: ", text), text
    text = text.split(": ", 1)[1]
    if line:
        where, source, text = text.split("\n", 2)
        assert re.fullmatch(rf'File "{re.escape(HERE)}", line \d+, in \w+', where), where
        assert source.strip() == line
    return text


# ------------------------------------------------ the iterators


@cuda.jit
def both_ways(src, forward, backward, offsets):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    n = 0
    for base in block.tiles(src.shape[0], items):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(forward, base, items)
        if cuda.threadIdx.x == 0:
            offsets[n] = base
        n += 1
    state[0] = 0  # a new pass: the suffix starts from nothing
    for base in block.tiles(src.shape[0], items, reverse=True):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state, reverse=True)
        block.store(backward, base, items)
        if cuda.threadIdx.x == 0:
            offsets[n] = base
        n += 1


@pytest.mark.sanitize
@pytest.mark.parametrize("length", [1, 127, 128, 300])
def test_block_tiles_walk_the_row_both_ways(length):
    src = (np.arange(length, dtype=np.int32) * 7) % 11 - 5
    forward, backward = np.zeros_like(src), np.zeros_like(src)
    offsets = np.full(8, -1, np.int64)
    both_ways[1, 32](src, forward, backward, offsets)
    np.testing.assert_array_equal(forward, np.cumsum(src))
    np.testing.assert_array_equal(backward, np.cumsum(src[::-1])[::-1])
    tiles = list(range(0, length, 128))
    assert list(offsets[: 2 * len(tiles)]) == tiles + tiles[::-1]


@cuda.jit
def warp_rows(src, dst, sizes):
    lanes = 8
    row = cuda.blockIdx.x * (cuda.blockDim.x // lanes) + cuda.threadIdx.x // lanes
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for base in warp.tiles(src.shape[1], items, lanes=8):
        warp.load(src[row], base, items, oob_default=0, lanes=8)
        warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state, lanes=8)
        warp.store(dst[row], base, items, lanes=8)
    sizes[0] = warp.tile_size(items, lanes=8)
    sizes[1] = warp.tile_size(items)


@pytest.mark.sanitize
def test_warp_tiles_walk_each_warps_row():
    src = np.arange(8 * 100, dtype=np.int32).reshape(8, 100) % 13
    dst = np.zeros_like(src)
    sizes = np.zeros(2, np.int64)
    warp_rows[2, 32](src, dst, sizes)
    np.testing.assert_array_equal(dst, np.cumsum(src, axis=1))
    assert list(sizes) == [16, 64]


# ------------------------------------------------ carried tiles in the wrong order


@cuda.jit
def suffix_from_the_start(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in range(0, src.shape[0], block.tile_size(items)):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, reverse=True)
        block.store(dst, base, items)


@cuda.jit
def prefix_from_the_end(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    tile = block.tile_size(items)
    for base in range((src.shape[0] - 1) // tile * tile, -1, -tile):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state)
        block.store(dst, base, items)


@cuda.jit
def suffix_skipping_tiles(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    tile = block.tile_size(items)
    for base in range((src.shape[0] - 1) // tile * tile, -1, -2 * tile):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, reverse=True)
        block.store(dst, base, items)


@pytest.mark.sim_only
def test_a_reverse_scan_whose_tiles_come_forward_is_refused():
    src = np.ones(300, np.int32)
    got = _refused(
        lambda: suffix_from_the_start[1, 32](src, np.zeros_like(src)),
        "block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, reverse=True)",
    )
    assert got == (
        "inclusive_sum: reverse=True carries the suffix from each tile to the tile to its left, "
        "but this thread's tiles come in forward order (offset 0, then 128): each tile takes "
        "the suffix of the tiles to its left; walk the tiles from the row's end with for base "
        "in block.tiles(n, items, reverse=True)"
    )


@pytest.mark.sim_only
def test_a_forward_scan_whose_tiles_come_in_reverse_is_refused():
    src = np.ones(300, np.int32)
    got = _refused(
        lambda: prefix_from_the_end[1, 32](src, np.zeros_like(src)),
        "block.inclusive_sum(items, prefix_op=running_total, prefix_state=state)",
    )
    assert got == (
        "inclusive_sum: a forward scan carries the prefix from each tile to the tile to its "
        "right, but this thread's tiles come in reverse order (offset 256, then 128): each tile "
        "takes the prefix of the tiles to its right; walk the tiles with for base in "
        "block.tiles(n, items), or pass reverse=True to the scan for a suffix"
    )


@pytest.mark.sim_only
def test_a_reverse_walk_stepping_by_two_tiles_is_refused():
    src = np.ones(600, np.int32)
    got = _refused(
        lambda: suffix_skipping_tiles[1, 32](src, np.zeros_like(src)),
        "block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, reverse=True)",
    )
    assert got == (
        "inclusive_sum: this thread's tiles start at offset 512 and then 256, a step of -256 "
        "items, but a block's tile is 128 items (threads x items per thread): 128 items between "
        "the two tiles are in neither, and the prefix the scan carries from one to the next "
        "misses or counts them twice; step the loop by the tile: for base in block.tiles(n, "
        "items, reverse=True)"
    )


# ------------------------------------------------ warp loops


@cuda.jit
def warp_step_for_4_items(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(8, np.int32)
    for base in range(0, src.shape[0], 32 * 4):
        warp.load(src, base, items, oob_default=0)
        warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        warp.store(dst, base, items)


@cuda.jit
def warp_step_by_the_blocks_tile(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in range(0, src.shape[0], block.tile_size(items)):
        warp.load(src, base, items, oob_default=0)
        warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        warp.store(dst, base, items)


WARP_SCAN_LINE = "warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)"


@pytest.mark.sim_only
def test_a_warp_loop_stepping_by_another_tile_is_refused():
    src = np.ones(1000, np.int32)
    got = _refused(lambda: warp_step_for_4_items[1, 32](src, np.zeros_like(src)), WARP_SCAN_LINE)
    assert got == (
        "warp.inclusive_sum: this thread's tiles start at offset 0 and then 128, a step of 128 "
        "items, but a logical warp's tile is 256 items (lanes=32 x items per thread): 128 items "
        "are in both tiles, and the prefix the scan carries from one to the next misses or "
        "counts them twice; step the loop by the tile: for base in warp.tiles(n, items, "
        "lanes=32)"
    )
    got = _refused(
        lambda: warp_step_by_the_blocks_tile[1, 64](src, np.zeros_like(src)), WARP_SCAN_LINE
    )
    assert got.startswith(
        "warp.inclusive_sum: this thread's tiles start at offset 0 and then 256, a step of 256 "
        "items, but a logical warp's tile is 128 items (lanes=32 x items per thread): 128 items "
        "between the two tiles are in neither"
    )


@cuda.jit
def load_8_lanes_scan_32(src, dst):
    items = cuda.local.array(4, np.int32)
    warp.load(src, 0, items, oob_default=0, lanes=8)
    warp.inclusive_sum(items, items)
    warp.store(dst, 0, items)


@cuda.jit
def scan_8_lanes_store_32(src, dst):
    items = cuda.local.array(4, np.int32)
    warp.load(src, 0, items, oob_default=0, lanes=8)
    warp.inclusive_sum(items, items, lanes=8)
    warp.store(dst, 0, items)


@pytest.mark.sim_only
def test_lanes_that_differ_between_a_tiles_calls_are_refused():
    src = np.ones(128, np.int32)
    got = _refused(
        lambda: load_8_lanes_scan_32[1, 32](src, np.zeros_like(src)),
        "warp.inclusive_sum(items, items)",
    )
    assert got == (
        "warp.inclusive_sum: lanes=32, but its items were loaded by warp.load with lanes=8: "
        "each 8-lane logical warp loaded a tile of its own (from its own offset), and the scan "
        "takes the items of 32 lanes as one tile; pass the same lanes= to the warp.load, the "
        "scans and the warp.store of one tile"
    )
    got = _refused(
        lambda: scan_8_lanes_store_32[1, 32](src, np.zeros_like(src)),
        "warp.store(dst, 0, items)",
    )
    assert got == (
        "warp.store: lanes=32, but its items were last written by a warp scan with lanes=8: "
        "the tile a logical warp stores is not the tile it scanned; pass the same lanes= to the "
        "warp.load, the scans and the warp.store of one tile"
    )


# ------------------------------------------------ one offset per call


@cuda.jit
def offset_per_thread(src, dst):
    items = cuda.local.array(4, np.int32)
    offset = cuda.threadIdx.x * 4  # each thread its own: not a tile's offset
    block.load(src, offset, items, oob_default=0)
    block.store(dst, offset, items)


@cuda.jit
def offset_per_lane(src, dst):
    items = cuda.local.array(2, np.int32)
    lane = cuda.threadIdx.x % 8
    warp.load(src, lane, items, oob_default=0, lanes=8)
    warp.store(dst, 0, items, lanes=8)


@cuda.jit
def valid_per_thread(src, out):
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, oob_default=0)
    total = block.sum(items, valid=cuda.threadIdx.x + 1)
    out[cuda.threadIdx.x] = total


@pytest.mark.sim_only
def test_an_offset_that_differs_between_threads_is_refused():
    src = np.arange(256, dtype=np.int32)
    got = _refused(
        lambda: offset_per_thread[1, 32](src, np.zeros_like(src)),
        "block.load(src, offset, items, oob_default=0)",
    )
    assert re.fullmatch(
        r"load: offset differs between the threads of the block \(thread (\d+) passes (\d+), "
        r"thread (\d+) passes (\d+)\); every thread of the block passes the same offset \(the "
        r"tile's first item\) and the call moves or scans one tile with it: compute it from "
        r"values the threads share \(the tile loop's offset, cuda\.blockIdx, a warp's index "
        r"cuda\.threadIdx\.x // 32\), not from cuda\.threadIdx",
        got,
    ), got
    got = _refused(
        lambda: offset_per_lane[1, 16](src, np.zeros_like(src)),
        "warp.load(src, lane, items, oob_default=0, lanes=8)",
    )
    assert got.startswith("warp.load: offset differs between the threads of a logical warp (8 ")
    got = _refused(
        lambda: valid_per_thread[1, 32](src, np.zeros_like(src)),
        "total = block.sum(items, valid=cuda.threadIdx.x + 1)",
    )
    assert got.startswith(
        "sum: valid differs between the threads of the block (thread 0 passes 1, thread 1 "
        "passes 2); every thread of the block passes the same valid (how many of the tile's "
        "items are valid)"
    )


# ------------------------------------------------ look-back tile numbering


@cuda.jit
def reverse_lookback_from_the_start(src, dst, status):
    items = cuda.local.array(4, np.int32)
    base = cuda.blockIdx.x * block.tile_size(items)  # tile 0 is the row's first: wrong
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, reverse=True)
    block.store(dst, base, items)


@cuda.jit
def reverse_lookback_from_the_end(src, dst, status):
    items = cuda.local.array(4, np.int32)
    tile = block.tile_size(items)
    base = ((src.shape[0] - 1) // tile - cuda.blockIdx.x) * tile
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, reverse=True)
    block.store(dst, base, items)


@cuda.jit
def reverse_lookback_numbered_backwards(src, dst, status):
    items = cuda.local.array(4, np.int32)
    base = cuda.blockIdx.x * block.tile_size(items)
    tile = cuda.gridDim.x - 1 - cuda.blockIdx.x  # block 0 scans the last tile: it waits
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(
        items, prefix_op=scan.lookback, prefix_state=status, reverse=True, tile=tile
    )


@cuda.jit
def lookback_tile_per_thread(src, dst, status):
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, oob_default=0)
    block.inclusive_sum(
        items, prefix_op=scan.lookback, prefix_state=status, tile=cuda.threadIdx.x % 2
    )


@pytest.mark.sim_only
def test_a_reverse_lookback_numbered_from_the_start_is_refused():
    src = np.arange(300, dtype=np.int32)
    dst = np.zeros_like(src)
    got = _refused(
        lambda: reverse_lookback_from_the_start[3, 32](src, dst, scan.tile_status(3, np.int32)),
        "block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, reverse=True)",
    )
    assert got == (
        "inclusive_sum: a reverse look-back numbers the tiles from the sequence's end (tile 0 "
        "is the last) and each tile takes the suffix of the tiles numbered before it, but tile "
        "1 (offset 128) follows tile 0 (offset 0), which lies to its left: each tile would take "
        "the suffix of the tiles to its left; number the tiles from the end: base = (last - "
        "cuda.blockIdx.x) * TILE with last = (n - 1) // TILE"
    )
    reverse_lookback_from_the_end[3, 32](src, dst, scan.tile_status(3, np.int32))
    np.testing.assert_array_equal(dst, np.cumsum(src[::-1])[::-1])


@pytest.mark.sim_only
def test_a_reverse_lookback_tile_that_waits_for_one_scanned_later_is_refused():
    src = np.arange(300, dtype=np.int32)
    got = _refused(
        lambda: reverse_lookback_numbered_backwards[3, 32](
            src, np.zeros_like(src), scan.tile_status(3, np.int32)
        ),
        "block.inclusive_sum(",
    )
    assert got.startswith("inclusive_sum: block (0, 0, 0) scans tile 2, but tile 1 has not been ")
    assert got.endswith(
        "scan every tile from 0 up; a reverse look-back numbers them from the sequence's end "
        "in that order (block t scans base = (last - cuda.blockIdx.x) * TILE)"
    )


@pytest.mark.sim_only
def test_a_lookback_tile_that_differs_between_threads_is_refused():
    src = np.arange(128, dtype=np.int32)
    got = _refused(
        lambda: lookback_tile_per_thread[1, 32](
            src, np.zeros_like(src), scan.tile_status(2, np.int32)
        ),
        "block.inclusive_sum(",
    )
    assert got.startswith(
        "inclusive_sum: tile differs between the threads of the block (thread 0 passes 0, "
        "thread 1 passes 1); every thread of the block passes the same tile (the tile's index "
        "in the status)"
    ), got


# ------------------------------------------------ library-owned temp storage


@cuda.jit
def wide_transposed_tile(src, dst):
    items = cuda.local.array(33, np.int32)
    block.load(src, 0, items, oob_default=0, algorithm="warp_transpose")
    block.store(dst, 0, items, algorithm="warp_transpose")


@cuda.jit
def shared_row_and_transposed_tile(src, dst):
    row = cuda.shared.array(8200, np.int32)  # 32 KiB and more of the kernel's own
    row[cuda.threadIdx.x] = 0
    items = cuda.local.array(8, np.int32)
    block.load(src, 0, items, oob_default=0, algorithm="transpose")  # its 8 KiB exchange more


@pytest.mark.sim_only
def test_library_storage_over_48_kib_is_refused_as_the_compiler_refuses_it():
    src = np.ones(1024 * 33, np.int32)
    got = _refused(
        lambda: wide_transposed_tile[1, 1024](src, np.zeros_like(src)), "", cls=scan.CompileError
    )
    assert got == (
        "kernel wide_transposed_tile needs at least 135168 bytes of static shared memory, more "
        "than the 49152 (48 KiB) a kernel may declare, as its compiled form would: load "
        "(warp_transpose, 1024 threads x 33 items of 4 bytes) exchanges its whole tile through "
        "135168 bytes of library-owned temp storage; use tile I/O that needs none "
        "(algorithm='vectorize' or 'direct'), fewer threads or items per thread, or one "
        "caller-owned buffer passed as temp_storage= to the calls (block.temp_storage sizes "
        "it; see the temp storage docs)"
    )
    got = _refused(
        lambda: shared_row_and_transposed_tile[1, 512](src, np.zeros_like(src)),
        "",
        cls=scan.CompileError,
    )
    assert got.startswith(
        "kernel shared_row_and_transposed_tile needs at least 49184 bytes of static shared memory"
    )
