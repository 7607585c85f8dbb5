# SPDX-License-Identifier: Apache-2.0
"""block.load / block.store in the simulator: full and partial tiles, every algorithm."""

from __future__ import annotations

import pytest
from cases import block_cases as bc
from cases.block_cases import IOCase

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
