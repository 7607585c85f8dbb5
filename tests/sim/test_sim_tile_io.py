# SPDX-License-Identifier: Apache-2.0
"""block.load / block.store in the simulator: full and partial tiles, every algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from cases import block_cases as bc
from cases.block_cases import IOCase
from numba import cuda

from scan import block

pytestmark = pytest.mark.sim

ALGORITHMS = [
    None,
    "direct",
    "striped",
    "vectorize",
    "transpose",
    "warp_transpose",
    "warp_transpose_timesliced",
]


def check(case: IOCase, rows: int = 1) -> dict:
    src = bc.io_inputs(case, rows)
    got = bc.run_io(case, src)
    bc.assert_io_matches(got, bc.io_reference(case, src))
    return got


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_full_and_tail_tiles(algorithm):
    # 64 threads x 2 items: one full tile and a tail of 50 items
    check(IOCase(block=(64, 1, 1), items_per_thread=2, length=178, algorithm=algorithm))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_oob_default_and_valid_items(algorithm):
    case = IOCase(
        block=(32, 1, 1),
        items_per_thread=3,
        length=96,
        algorithm=algorithm,
        valid_items=40,
        oob_default=-1,
    )
    got = check(case)
    assert (got["loaded"].reshape(-1)[-1]) == -1


@pytest.mark.parametrize("algorithm", ["direct", "striped", "transpose"])
def test_odd_blocks_and_floats(algorithm):
    check(
        IOCase(dtype="float64", block=(7, 1, 1), items_per_thread=4, length=45, algorithm=algorithm)
    )
    check(
        IOCase(dtype="uint8", block=(2, 3, 2), items_per_thread=1, length=30, algorithm=algorithm)
    )


def test_striped_arrangement():
    case = IOCase(block=(4, 1, 1), items_per_thread=2, length=8, algorithm="striped")
    got = check(case)
    src = bc.io_inputs(case, 1)
    assert list(got["loaded"][0, 0, 1]) == [src[0, 1], src[0, 5]]  # items t, t + threads


def test_empty_tile_leaves_items_alone():
    case = IOCase(
        block=(32, 1, 1), items_per_thread=2, length=64, algorithm="direct", valid_items=0
    )
    got = check(case)
    assert (got["loaded"] == bc.SENTINEL).all()
    assert (got["dst"] == bc.SENTINEL).all()


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_default_vector_moves_on_aligned_and_unaligned_rows(dtype):
    # 256 x 4 with 4-byte items: vector accesses where a tile is 16-byte
    # aligned, warp_transpose where it is not. Rows of 2 tiles and 3 items
    # start at every alignment mod 16 bytes; the last tile of each is partial.
    check(IOCase(dtype=dtype, block=(256, 1, 1), items_per_thread=4, length=2051), rows=4)


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_items_keep_their_values_after_a_store(algorithm):
    # CUB's BlockStore exchanges the array it stores in place; the kernel's items must not be
    @cuda.jit
    def store_twice(src, first, second, sums):
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items, algorithm=algorithm)
        block.store(first, 0, items, algorithm=algorithm)
        block.store(second, 0, items, algorithm=algorithm)
        total = 0
        for i in range(4):  # the thread's own items, in order, after both stores
            total = total * 7 + items[i]
        sums[cuda.threadIdx.x] = total

    src = np.arange(256, dtype=np.int32) * 3 + 1
    first, second = np.zeros_like(src), np.zeros_like(src)
    sums = np.zeros(64, np.int64)
    store_twice[1, 64](src, first, second, sums)
    np.testing.assert_array_equal(first, src)
    np.testing.assert_array_equal(second, src)
    # thread t's items: blocked, or (striped) tile items t, t + 64, ...
    mine = (src.reshape(4, 64).T if algorithm == "striped" else src.reshape(64, 4)).astype(np.int64)
    want = ((mine[:, 0] * 7 + mine[:, 1]) * 7 + mine[:, 2]) * 7 + mine[:, 3]
    np.testing.assert_array_equal(sums, want)
