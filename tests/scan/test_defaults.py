# SPDX-License-Identifier: Apache-2.0
"""Without algorithm=, scans and tile I/O take the measured defaults of scan._plan."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.plans import scan_plan, tile_plan

from scan import block
from scan._plan import ArrayFact, ZipFact
from scan._primitives.block_scan._plan import DEFAULT_SCAN, default_scan_algorithm
from scan._primitives.tile_io._plan import (
    DEFAULT_IO,
    VECTORIZE_ELSE_WARP_TRANSPOSE,
    default_io_algorithm,
    plan_tile_io,
)
from scan._vocab import IO_ALGORITHMS, SCAN_ALGORITHMS


def _io(threads: int, items: int, dtype: type) -> str:
    return tile_plan("load", dtype, threads, items, None).algorithm


def _dtype(name: str) -> np.dtype:
    """A NumPy dtype by name, bfloat16 as ml_dtypes'."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


def _default_plan(direction: str, array: object, items: ArrayFact, threads: int, **kw: object):
    """The plan of a tile load or store that names no algorithm."""
    return plan_tile_io(
        function=direction,
        array=array,
        items=items,
        algorithm=None,
        oob_default=None,
        temp_storage=None,
        block=(threads, 1, 1),
        **kw,
    )


def _scan(threads: int, items: int, dtype: type) -> str:
    values = ArrayFact(dtype=np.dtype(dtype), ndim=1, length=items)
    return scan_plan(values=values, algorithm=None, block=(threads, 1, 1)).algorithm


def test_the_tables_name_known_algorithms_for_whole_warps() -> None:
    for (threads, items, size), algo in DEFAULT_IO.items():
        assert algo in IO_ALGORITHMS or algo == VECTORIZE_ELSE_WARP_TRANSPOSE
        assert threads % 32 == 0
        assert items > 0
        assert size in (1, 2, 4, 8, 16)
    for (threads, _items, _size), algo in DEFAULT_SCAN.items():
        assert algo in SCAN_ALGORITHMS
        assert threads % 32 == 0


@pytest.mark.parametrize(
    ("threads", "items", "dtype", "io", "algo"),
    [
        (256, 4, np.int32, "vectorize", "raking"),  # else warp_transpose (unaligned)
        (256, 4, np.float32, "vectorize", "raking"),
        (128, 8, np.int32, "warp_transpose", "warp_scans"),
        (128, 8, np.float32, "warp_transpose", "warp_scans"),
        (512, 4, np.float32, "warp_transpose", "raking"),
        (128, 4, np.int32, "vectorize", "raking"),
        (256, 16, np.float32, "warp_transpose", "warp_scans"),
        (512, 16, np.int32, "warp_transpose", "warp_scans"),
        (512, 8, np.float32, "warp_transpose", "warp_scans"),
        (256, 8, np.int32, "warp_transpose", "raking"),  # bench/rowscan.py's headline kernel
        (256, 4, np.int64, "warp_transpose", "warp_scans"),
        (256, 4, np.int16, "warp_transpose", "raking"),  # not measured
        (80, 4, np.int32, "transpose", "raking"),  # not whole warps
    ],
)
def test_plans_without_algorithm_take_the_table(threads, items, dtype, io, algo) -> None:
    assert _io(threads, items, dtype) == io
    assert _scan(threads, items, dtype) == algo
    block_ = (threads, 1, 1)
    assert default_io_algorithm(block_, items, np.dtype(dtype)) == io
    assert default_scan_algorithm(block_, items, np.dtype(dtype)) == algo


@pytest.mark.parametrize(
    ("threads", "items", "half", "io", "unaligned"),
    [
        (128, 8, "bfloat16", "vectorize", "warp_transpose"),  # one 16-byte word a thread
        (256, 16, "float16", "vectorize", "warp_transpose"),  # two
        (512, 8, "float16", "vectorize", "warp_transpose"),
        (256, 4, "bfloat16", "warp_transpose", None),  # half a word: no whole-word moves
        (128, 12, "float16", "warp_transpose", None),
        (96, 8, "bfloat16", "vectorize", "warp_transpose"),
        (80, 8, "bfloat16", "transpose", None),  # not whole warps
    ],
)
def test_converting_tile_io_moves_whole_words_by_default(
    threads, items, half, io, unaligned
) -> None:
    array = _dtype(half)
    floats = ArrayFact(dtype=np.dtype(np.float32), ndim=1, length=items)
    for direction in ("load", "store"):
        plan = _default_plan(direction, ArrayFact(dtype=array, ndim=1), floats, threads)
        assert (plan.algorithm, plan.unaligned) == (io, unaligned)
        assert plan.array_dtypes == (array,)
    # the same float16 array moved as float16 items keeps the table's default
    assert _io(threads, items, np.float16) == ("transpose" if threads % 32 else "warp_transpose")


def test_temp_storage_queries_size_the_default_the_call_uses() -> None:
    default = block.temp_storage("load", np.int32, 128, 4, cc=(9, 0))
    vector = block.temp_storage("load", np.int32, 128, 4, algorithm="vectorize", cc=(9, 0))
    assert default == vector
    scan_default = block.temp_storage("scan", np.int32, 256, 16, cc=(9, 0))
    warp = block.temp_storage("scan", np.int32, 256, 16, algorithm="warp_scans", cc=(9, 0))
    assert scan_default == warp


@pytest.mark.parametrize(
    ("threads", "items", "dtype", "forward", "reverse"),
    [
        (256, 4, np.int32, "raking", "warp_scans"),  # the measured difference
        (256, 4, np.float32, "raking", "warp_scans"),
        (128, 8, np.int32, "warp_scans", "warp_scans"),  # as forward
        (512, 4, np.int32, "raking", "raking"),
        (80, 4, np.int32, "raking", "raking"),  # not whole warps
    ],
)
def test_reverse_scans_have_defaults_of_their_own(threads, items, dtype, forward, reverse) -> None:
    block_ = (threads, 1, 1)
    dt = np.dtype(dtype)
    assert default_scan_algorithm(block_, items, dt) == forward
    assert default_scan_algorithm(block_, items, dt, reverse=True) == reverse
    values = ArrayFact(dt, 1, items)
    assert scan_plan(values=values, algorithm=None, block=block_).algorithm == forward
    plan = scan_plan(values=values, algorithm=None, block=block_, reverse=True)
    assert plan.algorithm == reverse


@pytest.mark.parametrize(
    ("items", "arrays", "io", "unaligned"),
    [
        (8, ("bfloat16", "bfloat16"), "vectorize", "warp_transpose"),  # a word each field
        (8, ("float16", "float32"), "vectorize", "warp_transpose"),  # a word and two
        (4, ("bfloat16", "bfloat16"), "warp_transpose", None),  # half a word: the table
        (4, ("float16", "float32"), "vectorize", None),  # half a word: the table's 128 x 4
        (8, ("float32", "float32"), "warp_transpose", None),  # nothing converts: the table
    ],
)
def test_zipped_converting_tile_io_moves_whole_words_by_default(
    items, arrays, io, unaligned
) -> None:
    # the linear-recurrence shape: (a, x) half-precision rows into float32 record fields
    pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
    zipped = ZipFact(tuple(ArrayFact(dtype=_dtype(a), ndim=1) for a in arrays))
    records = ArrayFact(dtype=pair, ndim=1, length=items)
    for direction in ("load", "store"):
        plan = _default_plan(direction, zipped, records, 128)
        assert (plan.algorithm, plan.unaligned) == (io, unaligned)
        assert all(p.algorithm == io for p in plan.field_plans())
    # a store of one field (field=) from a half-precision array: the same rule
    first = ArrayFact(dtype=_dtype(arrays[0]), ndim=1)
    one = _default_plan("store", first, records, 128, field="b")
    whole = arrays[0] != "float32" and items * 2 % 16 == 0
    expected = ("vectorize", "warp_transpose") if whole else ("warp_transpose", None)
    assert (one.algorithm, one.unaligned) == expected
