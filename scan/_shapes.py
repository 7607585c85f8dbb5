# SPDX-License-Identifier: Apache-2.0
"""Threads x items per thread for a tiled row scan, from measurements (``block.launch_shape``).

The figures are :data:`scan._shape_table.GBPS`, generated from one committed
benchmark run by ``tools/launch_shape_table.py``. The rule that turns them
into a proposal (:func:`propose`) is here, so that the table stays data:

1. The reference cell: the measured item size nearest to the row's, then the
   measured row length of that item size nearest to the row's, both on a log
   scale (ties go to the smaller).
2. Its candidates: the shapes measured there whose tile (threads x items) is
   no longer than the cell's rows, so that each was timed on whole tiles;
   each scored by its GB/s averaged over the cell's dtypes.
3. The fastest candidate whose tile is no longer than the row (ties: the
   smaller tile, then fewer threads). If every candidate's tile is longer
   than the row, the smallest tile measured in any cell (then fewer threads).

A cross-block scan (one block a tile, ``prefix_op=scan.lookback``) has its
own figures, :data:`scan._shape_table.LOOKBACK_GBPS`, by item size only
(they were measured on sequences of 2^27 and 2^28 items); its rule
(:func:`propose_cross_block`): the measured item size nearest to the
sequence's on a log scale, then the fastest shape there by GB/s averaged
over its dtypes whose tile is no longer than the sequence and takes no more
bytes than the largest tile measured (32 KiB: 128 x 32 pairs of float32)
(ties: the smaller tile, then fewer threads), else the smallest tile
measured.

This module imports neither numba nor any CUDA package.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import NamedTuple, SupportsIndex

import numpy as np
from numpy.typing import DTypeLike

import statefn

from ._errors import PlanError, ScanTypeError
from ._shape_table import GBPS, LOOKBACK_GBPS

__all__ = [
    "LaunchShape",
    "candidates",
    "check_row_length",
    "item_size",
    "propose",
    "propose_cross_block",
    "reference_cell",
]


class LaunchShape(NamedTuple):
    """Threads per block and items per thread for a tiled row scan (:func:`launch_shape`).

    Unpack it into module-level ints, which numba freezes as constants (an
    attribute of a global tuple is not one): ``THREADS, ITEMS = block.launch_shape(...)``.
    """

    threads: int
    items_per_thread: int


# Its public home: reprs and the docs name scan.block.LaunchShape.
LaunchShape.__module__ = "scan.block"


def check_row_length(function: str, row_length: object) -> int:
    """`row_length` as an int of at least 1."""
    if isinstance(row_length, bool | np.bool_) or not isinstance(row_length, SupportsIndex):
        raise ScanTypeError(
            f"{function}: row_length must be an int, the number of items in a row "
            f"(got {type(row_length).__name__} {row_length!r})"
        )
    length = operator.index(row_length)
    if length < 1:
        raise PlanError(f"{function}: row_length must be at least 1 (got {length})")
    return length


def item_size(function: str, dtype: DTypeLike) -> int:
    """The item size in bytes of a value dtype the scans accept (records: their aligned size)."""
    try:
        value_dtype = statefn.as_value_dtype(dtype, what=f"{function}: dtype")
    except statefn.StateDtypeError as exc:
        raise ScanTypeError(str(exc)) from None
    return int(value_dtype.itemsize)


def _nearest(measured: Iterable[int], wanted: int) -> int:
    """The value of `measured` nearest to `wanted` on a log scale (ties: the smaller)."""
    return min(measured, key=lambda v: (abs(math.log2(v / wanted)), v))


def reference_cell(row_length: int, itemsize: int) -> tuple[int, int]:
    """The measured (item bytes, row length) whose figures serve rows of `row_length` items."""
    size = _nearest({s for s, _ in GBPS}, itemsize)
    return size, _nearest((n for s, n in GBPS if s == size), row_length)


def candidates(cell: tuple[int, int]) -> dict[tuple[int, int], float]:
    """The shapes timed on whole tiles in `cell`, with their GB/s averaged over its dtypes."""
    return {
        shape: sum(figures.values()) / len(figures)
        for shape, figures in GBPS[cell].items()
        if shape[0] * shape[1] <= cell[1]
    }


def _tile(shape: tuple[int, int]) -> int:
    return shape[0] * shape[1]


def propose(row_length: int, itemsize: int) -> LaunchShape:
    """The proposal for rows of `row_length` items of `itemsize` bytes (the module's rule)."""
    scores = candidates(reference_cell(row_length, itemsize))
    fitting = {shape: gbps for shape, gbps in scores.items() if _tile(shape) <= row_length}
    if fitting:
        best = max(fitting, key=lambda s: (fitting[s], -_tile(s), -s[0]))
    else:
        best = min((s for shapes in GBPS.values() for s in shapes), key=lambda s: (_tile(s), s[0]))
    return LaunchShape(*best)


def propose_cross_block(length: int, itemsize: int) -> LaunchShape:
    """The proposal for a cross-block scan of `length` items of `itemsize` bytes."""
    size = _nearest(LOOKBACK_GBPS, itemsize)
    scores = {
        shape: sum(figures.values()) / len(figures)
        for shape, figures in LOOKBACK_GBPS[size].items()
    }
    # no more bytes a tile than the largest measured, so that larger items keep
    # their tile I/O's shared memory within what was measured
    most = max(b * _tile(shape) for b, shapes in LOOKBACK_GBPS.items() for shape in shapes)
    sized = {shape: gbps for shape, gbps in scores.items() if _tile(shape) * itemsize <= most}
    scores = sized or {min(scores, key=lambda s: (_tile(s), s[0])): 0.0}
    fitting = {shape: gbps for shape, gbps in scores.items() if _tile(shape) <= length}
    if fitting:
        best = max(fitting, key=lambda s: (fitting[s], -_tile(s), -s[0]))
    else:
        best = min(scores, key=lambda s: (_tile(s), s[0]))
    return LaunchShape(*best)
