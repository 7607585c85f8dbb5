# SPDX-License-Identifier: Apache-2.0
"""block.launch_shape: its table is the committed benchmark run's, and its rule holds.

The table (scan/_shape_table.py) is re-derived here from the run's csv by
tools/launch_shape_table.py and compared with the committed module, and its
figures are compared with the defaults table of docs/performance.md. Then the
proposals: the measured best (within 1%) in every measured cell, never a tile
longer than the row when a shorter measured one exists, and bad inputs refused.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from scan import PlanError, ScanTypeError, _shape_table, _shapes, block

ROOT = Path(__file__).resolve().parents[2]
#: The tolerance block.launch_shape's docstring states for the measured cells.
TOLERANCE = 0.01

SHAPES = sorted({shape for shapes in _shape_table.GBPS.values() for shape in shapes})
SMALLEST = min(SHAPES, key=lambda s: (s[0] * s[1], s[0]))


def _tool() -> ModuleType:
    name = "_launch_shape_table_tool"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools/launch_shape_table.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _tile(shape: tuple[int, int]) -> int:
    return shape[0] * shape[1]


# ------------------------------------------------------------------ the table


def test_the_committed_table_is_the_runs() -> None:
    tool = _tool()
    table, device = tool.derive()
    lookback, lookback_device = tool.derive_lookback()
    assert table == _shape_table.GBPS
    assert device == _shape_table.DEVICE
    assert lookback == _shape_table.LOOKBACK_GBPS
    assert lookback_device == _shape_table.LOOKBACK_DEVICE
    assert f"{tool.RUN}.csv" == _shape_table.SOURCE
    assert f"{tool.LOOKBACK_RUN}.csv" == _shape_table.LOOKBACK_SOURCE
    assert (ROOT / _shape_table.SOURCE).is_file()
    assert (ROOT / _shape_table.LOOKBACK_SOURCE).is_file()
    text = (ROOT / "scan" / "_shape_table.py").read_text()
    assert text == tool.render(table, device, lookback, lookback_device), (
        "scan/_shape_table.py is stale: run python tools/launch_shape_table.py --write"
    )


def test_the_table_covers_what_the_docstring_says() -> None:
    gbps = _shape_table.GBPS
    assert set(gbps) == {(4, 2048), (4, 65536), (8, 65536)}
    grid = {(t, i) for t in (128, 256, 512) for i in (4, 8, 16)}
    assert set(gbps[4, 2048]) == set(gbps[4, 65536]) == grid
    assert set(gbps[8, 65536]) == {(128, 16), (256, 4), (256, 8)}
    for (size, _length), shapes in gbps.items():
        dtypes = {"int32", "float32"} if size == 4 else {"int64", "float64"}
        for figures in shapes.values():
            assert set(figures) == dtypes
            assert all(v > 0 for v in figures.values())


def test_the_figures_are_the_performance_pages_defaults_table() -> None:
    """Each figure, rounded, is the "project GB/s" of docs/performance.md's defaults table."""
    page = (ROOT / "docs" / "performance.md").read_text()
    rows = re.findall(
        r"^\| (\w+) \| (\d+)x(\d+) \| (\d+) x (\d+) \| [^|]+ \| (\d+) \|", page, flags=re.M
    )
    published = {
        (dtype, int(cols), int(t), int(i)): int(gbps) for dtype, _r, cols, t, i, gbps in rows
    }
    checked = 0
    for (size, length), shapes in _shape_table.GBPS.items():
        for (t, i), figures in shapes.items():
            for dtype, value in figures.items():
                assert np.dtype(dtype).itemsize == size
                assert published[dtype, length, t, i] == round(value), (dtype, length, t, i)
                checked += 1
    assert checked == 2 * 9 * 2 + 3 * 2


def test_the_tool_refuses_a_run_without_results(tmp_path: Path) -> None:
    tool = _tool()
    run = tmp_path / "empty"
    run.with_suffix(".csv").write_text(
        (ROOT / _shape_table.SOURCE).read_text().splitlines()[0] + "\n"
    )
    run.with_suffix(".md").write_text("- device: X\n")
    with pytest.raises(ValueError, match="no project_default b2b row-scan results"):
        tool.derive(str(run))


# ------------------------------------------------------------------ proposals


@pytest.mark.parametrize(
    ("length", "dtype", "expected"),
    [
        (2048, np.int32, (128, 8)),
        (2048, np.float32, (128, 8)),
        (65536, np.int32, (256, 4)),
        (65536, np.float32, (256, 4)),
        (65536, np.int64, (256, 8)),
        (65536, np.float64, (256, 8)),
    ],
)
def test_measured_cells(length: int, dtype: type, expected: tuple[int, int]) -> None:
    shape = block.launch_shape(length, dtype)
    assert isinstance(shape, block.LaunchShape)
    assert shape == expected
    assert (shape.threads, shape.items_per_thread) == expected
    threads, items = shape
    assert type(threads) is int
    assert type(items) is int


def test_measured_cells_get_the_measured_best_within_the_tolerance() -> None:
    for (size, length), shapes in _shape_table.GBPS.items():
        proposal = _shapes.propose(length, size)
        assert proposal in shapes
        for dtype in next(iter(shapes.values())):
            best = max(figures[dtype] for figures in shapes.values())
            got = shapes[proposal][dtype]
            assert got >= (1 - TOLERANCE) * best, (size, length, dtype, proposal, got, best)
            assert block.launch_shape(length, dtype) == proposal


def test_a_faster_tile_longer_than_the_row_is_not_proposed() -> None:
    # rows of 2048 four-byte items: 256 x 16 (a 4096-item tile) was the fastest measured
    shapes = _shape_table.GBPS[4, 2048]
    fastest = max(shapes, key=lambda s: sum(shapes[s].values()))
    assert _tile(fastest) > 2048
    proposal = block.launch_shape(2048, np.int32)
    assert _tile(proposal) <= 2048
    # and 512 x 8, the shape that runs those rows at a fraction of the others, is far off
    assert shapes[512, 8]["int32"] < 0.75 * shapes[proposal]["int32"]


def _lengths() -> list[int]:
    points = {1, 2, 31, 100, 2048, 11585, 11586, 65536, 65613, 10**6, 2**31}
    for shape in SHAPES:
        points.update({_tile(shape) - 1, _tile(shape), _tile(shape) + 1})
    for n in range(5, 21):
        points.update({2**n - 1, 2**n, 3 * 2 ** (n - 1)})
    return sorted(points)


@pytest.mark.parametrize("size", [1, 2, 4, 6, 8, 12, 16, 24])
def test_short_rows_never_get_a_longer_tile_than_a_measured_one(size: int) -> None:
    for length in _lengths():
        proposal = _shapes.propose(length, size)
        assert proposal in SHAPES
        assert proposal[0] % 32 == 0
        if any(_tile(shape) <= length for shape in SHAPES):
            assert _tile(proposal) <= length, (size, length, proposal)
        else:
            assert proposal == SMALLEST


@pytest.mark.parametrize(
    ("length", "dtype", "expected"),
    [
        # shorter than every measured tile: the smallest measured tile
        (1, np.int32, (128, 4)),
        (100, np.float64, (128, 4)),
        (511, np.int32, (128, 4)),
        # shorter than the 2048-item figures' best tile
        (1000, np.int32, (128, 4)),
        (1024, np.int32, (128, 8)),
        # between the measured lengths: the nearer on a log scale
        (11585, np.float32, (128, 8)),
        (11586, np.float32, (256, 4)),
        (2**24, np.int32, (256, 4)),
        # eight-byte items: the 65536-item figures at every length
        (1000, np.int64, (128, 4)),
        (1024, np.int64, (256, 4)),
        (2047, np.float64, (256, 4)),
        (2048, np.float64, (256, 8)),
        (2**24, np.int64, (256, 8)),
        # item sizes that were not measured: the nearest measured one
        (65536, np.int8, (256, 4)),
        (2048, np.uint16, (128, 8)),
    ],
)
def test_unmeasured_cases_follow_the_documented_rule(
    length: int, dtype: type, expected: tuple[int, int]
) -> None:
    assert block.launch_shape(length, dtype) == expected


def test_records_count_by_their_aligned_size() -> None:
    pair = np.dtype([("a", np.float32), ("b", np.float32)])  # 8 bytes
    assert block.launch_shape(65536, pair) == block.launch_shape(65536, np.float64)
    assert block.launch_shape(1500, pair) == block.launch_shape(1500, np.int64)
    triple = np.dtype([("a", np.int16), ("b", np.int16), ("c", np.int16)])  # 6: nearer 8 than 4
    assert block.launch_shape(65536, triple) == (256, 8)
    one = np.dtype([("x", np.int32)])
    assert block.launch_shape(2048, one) == block.launch_shape(2048, np.int32)
    padded = np.dtype([("value", np.float64), ("flag", np.int8)], align=True)  # 16 bytes
    assert block.launch_shape(65536, padded) == _shapes.propose(65536, 16)


def test_accepts_numpy_integers_and_dtype_spellings() -> None:
    assert block.launch_shape(np.int64(2048), "float32") == (128, 8)
    assert block.launch_shape(np.uint32(65536), np.dtype("<i4")) == (256, 4)
    assert block.launch_shape(2048, "i4") == block.launch_shape(2048, np.int32)


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize("length", [0, -1, -2048])
def test_refuses_rows_of_no_items(length: int) -> None:
    with pytest.raises(PlanError) as info:
        block.launch_shape(length, np.int32)
    assert str(info.value) == f"launch_shape: row_length must be at least 1 (got {length})"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("length", "shown"),
    [
        (2048.0, "float 2048.0"),
        ("2048", "str '2048'"),
        (True, "bool True"),
        (None, "NoneType None"),
    ],
)
def test_refuses_a_row_length_that_is_not_an_int(length: object, shown: str) -> None:
    with pytest.raises(ScanTypeError) as info:
        block.launch_shape(length, np.int32)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"launch_shape: row_length must be an int, the number of items in a row (got {shown})"
    )
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    ("dtype", "words"),
    [
        (object, "launch_shape: dtype object is not supported"),
        (np.bool_, "launch_shape: dtype bool is not supported"),
        ("U3", "launch_shape: dtype <U3 is not supported"),
        (np.longdouble, f"launch_shape: dtype {np.dtype(np.longdouble)} is not supported"),
        (np.clongdouble, f"launch_shape: dtype {np.dtype(np.clongdouble)} is not supported"),
        (None, "launch_shape: dtype must be given"),
        ("no such dtype", "launch_shape: dtype 'no such dtype' is not a NumPy dtype"),
        (
            np.dtype([("a", np.float32), ("b", object)]),
            "has the field 'b' of dtype object, which is not supported",
        ),
        (
            np.dtype([("a", np.float64), ("b", np.int8)]),  # packed: 9 bytes
            "is laid out unlike a C struct",
        ),
    ],
)
def test_refuses_dtypes_the_scans_do_not_take(dtype: object, words: str) -> None:
    with pytest.raises(ScanTypeError) as info:
        block.launch_shape(2048, dtype)  # type: ignore[arg-type]
    assert words in str(info.value)
    assert isinstance(info.value, TypeError)


# ------------------------------------------------------------------ cross-block scans


def test_the_cross_block_table_covers_what_the_docstring_says() -> None:
    gbps = _shape_table.LOOKBACK_GBPS
    grid = {(128, i) for i in (12, 16, 20, 24, 32)} | {(256, i) for i in (8, 12, 16)}
    assert set(gbps) == {4, 8}
    assert set(gbps[4]) == set(gbps[8]) == grid
    assert all(set(f) == {"int32", "float32"} for f in gbps[4].values())
    assert all(set(f) == {"float32x2"} for f in gbps[8].values())
    assert "H100" in _shape_table.LOOKBACK_DEVICE


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.int64, np.float64, np.complex64])
def test_a_long_cross_block_scan_gets_the_measured_best(dtype: type) -> None:
    size = np.dtype(dtype).itemsize
    shapes = _shape_table.LOOKBACK_GBPS[size]
    best = max(shapes, key=lambda s: sum(shapes[s].values()))
    assert best == (128, 32)
    assert block.launch_shape(2**28, dtype, cross_block=True) == best
    # the row scan's proposal differs: cross_block= is not ignored
    assert block.launch_shape(2**28, dtype) != best


def test_a_cross_block_scan_of_larger_items_keeps_its_tile_within_the_measured_bytes() -> None:
    shape = block.launch_shape(2**28, np.complex128, cross_block=True)
    assert shape == (128, 16)
    assert shape.threads * shape.items_per_thread * 16 <= 128 * 32 * 8
    pair = np.dtype([("a", np.float64), ("b", np.float64)])
    assert block.launch_shape(2**20, pair, cross_block=True) == (128, 16)
    assert block.launch_shape(2**20, np.float16, cross_block=True) == (128, 32)


def test_a_short_sequence_gets_a_tile_no_longer_than_it() -> None:
    assert block.launch_shape(5000, np.int32, cross_block=True) == (128, 32)
    shape = block.launch_shape(3000, np.int32, cross_block=True)
    assert shape.threads * shape.items_per_thread <= 3000
    assert block.launch_shape(100, np.int32, cross_block=True) == (128, 12)


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_cross_block_must_be_a_bool(bad: object) -> None:
    with pytest.raises(ScanTypeError, match="cross_block= must be True or False"):
        block.launch_shape(2**20, np.int32, cross_block=bad)  # type: ignore[arg-type]
