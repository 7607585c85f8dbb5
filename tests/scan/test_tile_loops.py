# SPDX-License-Identifier: Apache-2.0
"""block.tiles, warp.tiles and warp.tile_size compiled: the hand-written loop, and its mistakes.

- No extra cost: a kernel whose loop is ``block.tiles`` (forward or reverse)
  or ``warp.tiles`` compiles to the same machine code, byte for byte, as the
  same kernel with the loop written by hand (``range`` stepped by
  ``block.tile_size``), in numba-cuda and numba-cuda-mlir, for sm_90.
- The mistakes a kernel's IR shows are refused when it compiles, at the
  call's line: a carried scan walked in the other direction, a block loop's
  offset to warp tile I/O, a warp loop's or call's other ``lanes=``, a
  load's other items array, an offset computed from the thread's index; and
  a ``tiles`` call whose tile is not known.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from helpers.sass import machine_code
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import block, warp

pytestmark = pytest.mark.nvrtc

CC = (9, 0)
VEC = types.Array(types.int32, 1, "C")
MATRIX = types.Array(types.int32, 2, "C")
HERE = __file__


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


# ------------------------------------------------ the same machine code


@cuda.jit
def rows_by_hand(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in range(0, src.shape[1], block.tile_size(items)):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)


@cuda.jit
def rows_by_tiles(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[1], items):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)


@cuda.jit
def suffixes_by_hand(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    tile = block.tile_size(items)
    for base in range((src.shape[0] - 1) // tile * tile, -1, -tile):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state, reverse=True)
        block.store(dst, base, items)


@cuda.jit
def suffixes_by_tiles(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items, reverse=True):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state, reverse=True)
        block.store(dst, base, items)


@cuda.jit
def warp_rows_by_hand(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    row = cuda.blockIdx.x * 4 + cuda.threadIdx.x // 32
    for base in range(0, src.shape[1], 32 * 4):
        warp.load(src[row], base, items, oob_default=0)
        warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        warp.store(dst[row], base, items)


@cuda.jit
def warp_rows_by_tiles(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    row = cuda.blockIdx.x * 4 + cuda.threadIdx.x // 32
    for base in warp.tiles(src.shape[1], items):
        warp.load(src[row], base, items, oob_default=0)
        warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        warp.store(dst[row], base, items)


@pytest.mark.parametrize(
    ("by_hand", "by_tiles", "args", "threads"),
    [
        (rows_by_hand, rows_by_tiles, (MATRIX, MATRIX), 256),
        (suffixes_by_hand, suffixes_by_tiles, (VEC, VEC), 64),
        (warp_rows_by_hand, warp_rows_by_tiles, (MATRIX, MATRIX), 128),
    ],
    ids=["block", "block-reverse", "warp"],
)
def test_the_iterators_compile_to_the_hand_written_loop(
    by_hand: Any, by_tiles: Any, args: Any, threads: int
) -> None:
    hand = machine_code(scan.compile(by_hand, args, cc=CC, block=threads))
    tiles = machine_code(scan.compile(by_tiles, args, cc=CC, block=threads))
    assert hand
    assert hand == tiles


def test_numba_cuda_mlir_compiles_them_to_the_hand_written_loop_too() -> None:
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed")
    from numba_cuda_mlir import cuda as mlir_cuda
    from numba_cuda_mlir.numba_cuda import types as mlir_types

    def by_hand(src: Any, dst: Any) -> None:
        state = mlir_cuda.local.array(1, np.int64)
        state[0] = 0
        items = mlir_cuda.local.array(4, np.int32)
        tile = block.tile_size(items)
        for base in range((src.shape[0] - 1) // tile * tile, -1, -tile):
            block.load(src, base, items, oob_default=0)
            block.inclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, reverse=True
            )
            block.store(dst, base, items)

    def by_tiles(src: Any, dst: Any) -> None:
        state = mlir_cuda.local.array(1, np.int64)
        state[0] = 0
        items = mlir_cuda.local.array(4, np.int32)
        for base in block.tiles(src.shape[0], items, reverse=True):
            block.load(src, base, items, oob_default=0)
            block.inclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, reverse=True
            )
            block.store(dst, base, items)

    def warp_by_tiles(src: Any, dst: Any) -> None:
        items = mlir_cuda.local.array(4, np.int32)
        for base in warp.tiles(src.shape[0], items, lanes=8):
            warp.load(src, base, items, oob_default=0, lanes=8)
            warp.inclusive_sum(items, items, lanes=8)
            warp.store(dst, base, items, lanes=16)

    vec = mlir_types.Array(mlir_types.int32, 1, "C")
    hand = machine_code(scan.compile(mlir_cuda.jit(by_hand), (vec, vec), cc=CC, block=64))
    tiles = machine_code(scan.compile(mlir_cuda.jit(by_tiles), (vec, vec), cc=CC, block=64))
    assert hand
    assert hand == tiles
    with pytest.raises(scan.PlanError) as info:
        scan.compile(mlir_cuda.jit(warp_by_tiles), (vec, vec), cc=CC, block=64)
    assert _message(info.value, "warp.store(dst, base, items, lanes=16)") == (
        "warp.store: lanes=16, but its offset comes from warp.tiles(..., lanes=8), which "
        "steps by 8 lanes' tiles: the loop would skip or repeat items of the row; pass the "
        "same lanes= to warp.tiles and to every warp call of the loop"
    )


# ------------------------------------------------ mistakes the compiler sees


def _message(error: BaseException, line: str) -> str:
    """The refusal's text, once its first lines name this file, a line and `line`."""
    where, source, text = str(error).split("\n", 2)
    assert re.fullmatch(rf'File "{re.escape(HERE)}", line \d+(, in \w+)?', where), where
    assert source.strip() == line
    return text


@cuda.jit
def forward_loop_reverse_scan(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items):
        block.load(src, base, items, oob_default=0)
        block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, reverse=True)
        block.store(dst, base, items)


@cuda.jit
def reverse_loop_forward_scan(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items, reverse=True):
        block.load(src, base, items, oob_default=0)
        block.exclusive_sum(items, prefix_op=running_total, prefix_state=state)
        block.store(dst, base, items)


@cuda.jit
def block_loop_warp_load(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items):
        warp.load(src, base, items, oob_default=0)
        warp.store(dst, base, items)


@cuda.jit
def warp_loop_block_store(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    for base in warp.tiles(src.shape[0], items):
        warp.load(src, base, items, oob_default=0)
        block.store(dst, base, items)


@cuda.jit
def warp_loop_other_lanes(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    for base in warp.tiles(src.shape[0], items):
        warp.load(src, base, items, oob_default=0, lanes=8)


@cuda.jit
def load_and_scan_other_lanes(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    warp.load(src, 0, items, oob_default=0, lanes=8)
    warp.inclusive_sum(items, items)


@cuda.jit
def reverse_warp_loop_carried(src: Any, dst: Any) -> None:
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in warp.tiles(src.shape[0], items, reverse=True):
        warp.load(src, base, items, oob_default=0)
        warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)


@cuda.jit
def loop_of_other_items(src: Any, dst: Any) -> None:
    wide = cuda.local.array(8, np.int32)
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], wide):
        block.load(src, base, items, oob_default=0)


@cuda.jit
def offset_per_thread(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, cuda.threadIdx.x * 4, items, oob_default=0)


@cuda.jit
def warp_offset_per_lane(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    warp.load(src, 0, items, oob_default=0)
    warp.store(dst, 128 + cuda.threadIdx.x * 4, items)


@cuda.jit
def valid_per_thread(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    block.load(src, 0, items, oob_default=0)
    dst[0] = block.sum(items, valid=cuda.threadIdx.x + 1)


@cuda.jit
def items_not_local(src: Any, dst: Any) -> None:
    for base in block.tiles(src.shape[0], dst):
        dst[base] = 0


@cuda.jit
def reverse_not_literal(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    for base in block.tiles(src.shape[0], items, reverse=src.shape[0] > 1):
        dst[base] = 0


@cuda.jit
def lanes_not_a_power_of_two(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    for base in warp.tiles(src.shape[0], items, lanes=3):
        dst[base] = 0


@cuda.jit
def warp_offsets_shared_by_the_warp(src: Any, dst: Any) -> None:
    items = cuda.local.array(4, np.int32)
    row = (cuda.blockIdx.x * 128 + cuda.threadIdx.x) // 8 * src.shape[0]
    for base in warp.tiles(src.shape[0], items, lanes=8):
        warp.load(src, row + base, items, oob_default=0, lanes=8)
        warp.inclusive_sum(items, items, lanes=8)
        warp.store(dst, row + base, items, lanes=8)
    dst[0] = warp.tile_size(items, lanes=16)


REFUSALS = {
    "forward_loop_reverse_scan": (
        forward_loop_reverse_scan,
        "block.inclusive_sum(items, prefix_op=running_total, prefix_state=state, reverse=True)",
        "inclusive_sum: reverse=True carries the suffix from each tile to the tile to its left, "
        "but its items come from block.tiles(...) without reverse=True, which walks the row from "
        "its start: each tile would take the suffix of the tiles to its left; walk the tiles "
        "from the row's end with block.tiles(n, items, reverse=True)",
    ),
    "reverse_loop_forward_scan": (
        reverse_loop_forward_scan,
        "block.exclusive_sum(items, prefix_op=running_total, prefix_state=state)",
        "exclusive_sum: a forward scan carries the prefix from each tile to the tile to its "
        "right, but its items come from block.tiles(..., reverse=True), which walks the row "
        "from its end: each tile would take the prefix of the tiles to its right; walk the "
        "tiles from the row's start with block.tiles(n, items), or pass reverse=True to the "
        "scan for a suffix",
    ),
    "block_loop_warp_load": (
        block_loop_warp_load,
        "warp.load(src, base, items, oob_default=0)",
        "warp.load: its offset comes from block.tiles, which steps by a block's tile (the "
        "block's threads x the items per thread), but warp.load moves a warp's tile: the loop "
        "would skip or repeat items of the row; walk the tiles with warp.tiles(n, items, "
        "lanes=...)",
    ),
    "warp_loop_block_store": (
        warp_loop_block_store,
        "block.store(dst, base, items)",
        "store: its offset comes from warp.tiles, which steps by a warp's tile (lanes x the "
        "items per thread), but store moves a block's tile: the loop would skip or repeat items "
        "of the row; walk the tiles with block.tiles(n, items)",
    ),
    "warp_loop_other_lanes": (
        warp_loop_other_lanes,
        "warp.load(src, base, items, oob_default=0, lanes=8)",
        "warp.load: lanes=8, but its offset comes from warp.tiles(..., lanes=32), which steps "
        "by 32 lanes' tiles: the loop would skip or repeat items of the row; pass the same "
        "lanes= to warp.tiles and to every warp call of the loop",
    ),
    "load_and_scan_other_lanes": (
        load_and_scan_other_lanes,
        "warp.inclusive_sum(items, items)",
        "warp.inclusive_sum: lanes=32, but warp.load on the same items array has lanes=8: each "
        "logical warp would scan or move other items than its tile's (a warp tile is lanes x "
        "items a thread); pass the same lanes= to the warp.load, the scans and the warp.store "
        "of one tile",
    ),
    "reverse_warp_loop_carried": (
        reverse_warp_loop_carried,
        "warp.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)",
        "warp.inclusive_sum: its items come from a tile loop that walks the row from its end "
        "(warp.tiles(..., reverse=True)), but warp scans run forward and the prefix callback "
        "carries each tile's prefix to the next tile to the right: walk the tiles forward "
        "(warp.tiles(n, items))",
    ),
    "loop_of_other_items": (
        loop_of_other_items,
        "block.load(src, base, items, oob_default=0)",
        "load: it moves 4 items a thread, but its offset comes from block.tiles(n, items) with "
        "8 items a thread, which steps by that tile: the loop would skip or repeat items of the "
        "row; pass the load's items array to the loop",
    ),
    "offset_per_thread": (
        offset_per_thread,
        "block.load(src, cuda.threadIdx.x * 4, items, oob_default=0)",
        "load: offset is computed from cuda.threadIdx.x, so each thread passes its own, but the "
        "threads of the block pass one offset (the block's: every thread of the call moves or "
        "reduces the same tile); compute it from values the threads of the block share (the "
        "tile loop's offset, cuda.blockIdx, a warp's index cuda.threadIdx.x // 32)",
    ),
    "warp_offset_per_lane": (
        warp_offset_per_lane,
        "warp.store(dst, 128 + cuda.threadIdx.x * 4, items)",
        "warp.store: offset is computed from cuda.threadIdx.x, so each thread passes its own, "
        "but the lanes of a logical warp pass one offset (its logical warp's: every thread of "
        "the call moves or reduces the same tile); compute it from values the lanes of a "
        "logical warp share (the tile loop's offset, cuda.blockIdx, a warp's index "
        "cuda.threadIdx.x // 32)",
    ),
    "valid_per_thread": (
        valid_per_thread,
        "dst[0] = block.sum(items, valid=cuda.threadIdx.x + 1)",
        "sum: valid is computed from cuda.threadIdx.x, so each thread passes its own",
    ),
    "items_not_local": (
        items_not_local,
        "for base in block.tiles(src.shape[0], dst):",
        "tiles: cannot tell how many items each thread holds: items is not a cuda.local.array "
        "of literal length in this kernel, nor a literal int; pass the items array of the "
        "tile's block.load, or the items per thread: block.tiles(n, 8)",
    ),
    "reverse_not_literal": (
        reverse_not_literal,
        "for base in block.tiles(src.shape[0], items, reverse=src.shape[0] > 1):",
        "tiles: reverse= must be a literal (written in the call, or a constant of the kernel's "
        "module); the loop's direction is a constant of the compiled loop",
    ),
    "lanes_not_a_power_of_two": (
        lanes_not_a_power_of_two,
        "for base in warp.tiles(src.shape[0], items, lanes=3):",
        "warp.tiles: lanes= must be a literal power of two from 1 to 32 (got 3), the lanes= of "
        "the loop's warp.load, scan and store",
    ),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_mistakes_the_ir_shows_are_refused_at_their_line(name: str) -> None:
    kernel, line, expected = REFUSALS[name]
    with pytest.raises(scan.PlanError) as info:
        scan.compile(kernel, (VEC, VEC), cc=CC, block=128)
    assert _message(info.value, line).startswith(expected)


def test_offsets_the_lanes_of_a_warp_share_are_accepted() -> None:
    cubin = scan.compile(warp_offsets_shared_by_the_warp, (VEC, VEC), cc=CC, block=128)
    assert cubin[:4] == b"\x7fELF"


# ------------------------------------------------ the benchmark's iterator contender


def test_the_matrix_times_the_iterator_beside_the_range_loop(monkeypatch: Any) -> None:
    from helpers.bench import BENCH, load_bench

    monkeypatch.syspath_prepend(str(BENCH))
    matrix = load_bench("matrix")
    args = matrix.parse_args(
        [
            *("--tiles", "--project-configs", "default", "--no-cub", "--no-triton"),
            *("--no-mlir", "--no-records", "--no-shape-cells", "--dtype", "int32"),
            *("--threads", "256", "--items", "4", "--shape", "64x4096"),
        ]
    )
    plan = matrix.build_plan(args)
    specs = {spec.impl: spec for spec in plan.project}
    assert set(specs) == {"project_default", "project_tiles"}
    assert [s.impl for s in plan.parts[0].cells[0].project] == ["project_default", "project_tiles"]
    codes = [
        machine_code(
            scan.compile(
                matrix.build_project_kernel(specs[impl]), (MATRIX, MATRIX), cc=CC, block=256
            )
        )
        for impl in ("project_default", "project_tiles")
    ]
    assert codes[0] == codes[1]
    run_all = load_bench("run_all")
    assert "tiles" in run_all.PART_NAMES
