# SPDX-License-Identifier: Apache-2.0
"""The look-back prefix op's marker, and the dtype that marks a tile-status array.

``prefix_op=scan.lookback, prefix_state=status`` makes a block scan's prefix
the combination of every earlier tile's items, across blocks, in one pass
(CUB's decoupled look-back: ``cub::ScanTileState`` and
``cub::TilePrefixCallbackOp``). The status is device memory that
:func:`scan.tile_status` allocates and initialises; kernels receive it as an
array whose dtype is :func:`status_dtype` of the scanned values' dtype, so
the planner can check that a status and a scan belong together (the layout
of CUB's tile status depends on the value type).

This module holds only those facts; the host-side object and its
initialisation are :mod:`scan._tile_status`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import numpy as np

import statefn

__all__ = [
    "LOOKBACK",
    "ORDERED_FIELD",
    "STATUS_FIELD",
    "STATUS_SLACK",
    "STATUS_UNIT",
    "Lookback",
    "is_deterministic",
    "is_status_dtype",
    "status_dtype",
    "status_matches",
    "status_row_bytes",
    "status_tiles_cxx",
]

#: The first field's name of every status dtype starts so; a tag follows.
STATUS_FIELD: Final = "tile_status_"
#: Bytes of one element of a status array (two 64-bit words).
STATUS_UNIT: Final = 16


class Lookback:
    """The look-back prefix op (:data:`scan.lookback`): one instance, a compile-time constant.

    Passed as ``prefix_op=`` to a block scan with a tile status as
    ``prefix_state=``; the scan's prefix is then the combination, with the
    scan's own operator, of every earlier tile of the status.
    """

    __slots__ = ()
    _instance: Lookback | None = None

    def __new__(cls) -> Lookback:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    @property
    def key(self) -> str:
        """A stable identity (the front ends' type of the constant carries it)."""
        return "scan.lookback/1"

    @property
    def name(self) -> str:
        """How messages name it."""
        return "scan.lookback"

    def pinned(self) -> Lookback:
        """Itself: the marker has no code whose key could change."""
        return self

    def __repr__(self) -> str:
        return "scan.lookback"

    def __reduce__(self) -> str:
        return "LOOKBACK"


#: ``scan.lookback``.
LOOKBACK: Final = Lookback()


def _tag(dtype: np.dtype[Any]) -> str:
    return hashlib.sha256(statefn.dtype_key(np.dtype(dtype)).encode()).hexdigest()[:16]


#: The second field's name of a status whose tiles combine their predecessors in
#: order (``scan.tile_status(..., deterministic=True)``); ``tile_status_words`` otherwise.
ORDERED_FIELD: Final = "tile_status_ordered"


def status_dtype(value_dtype: np.dtype[Any], *, deterministic: bool = False) -> np.dtype[Any]:
    """The dtype of a tile-status array for scans of `value_dtype` (16 bytes an element).

    Its first field's name carries a digest of `value_dtype`, so a kernel's
    types tell which values a status was made for; its second field's name
    whether the scans reading it combine the earlier tiles in one fixed order
    (`deterministic`).
    """
    second = ORDERED_FIELD if deterministic else "tile_status_words"
    return np.dtype([(STATUS_FIELD + _tag(value_dtype), "<u8"), (second, "<u8")], align=True)


def is_deterministic(dtype: np.dtype[Any]) -> bool:
    """Whether a status of dtype `dtype` is a deterministic one (:data:`ORDERED_FIELD`)."""
    names = dtype.names
    return names is not None and len(names) == 2 and names[1] == ORDERED_FIELD


def is_status_dtype(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is a tile-status array's (:func:`status_dtype` of some values)."""
    names = dtype.names
    return (
        names is not None
        and len(names) == 2
        and names[0].startswith(STATUS_FIELD)
        and dtype.itemsize == STATUS_UNIT
    )


def status_matches(dtype: np.dtype[Any], value_dtype: np.dtype[Any]) -> bool:
    """Whether a status of dtype `dtype` was made for values of `value_dtype`."""
    return is_status_dtype(dtype) and dtype == status_dtype(
        value_dtype, deterministic=is_deterministic(dtype)
    )


#: Bytes a status row holds beyond its tiles' (CUB aligns each of its arrays
#: to 256 bytes, and the whole allocation once more).
STATUS_SLACK: Final = 4 * 256


def status_row_bytes(tiles: int, tile_bytes: int, padding: int) -> int:
    """The bytes of one status row for `tiles` tiles (a multiple of :data:`STATUS_UNIT`).

    `tile_bytes` and `padding` are ``cub::ScanTileState``'s bytes per tile (its
    status word, and its two values where they are not packed with it) and its
    leading padding tiles, read from the compiled code (they vary with the
    CCCL version and the value type).
    """
    nbytes = (tiles + padding) * tile_bytes + STATUS_SLACK
    return -(-nbytes // STATUS_UNIT) * STATUS_UNIT


def status_tiles_cxx(nbytes: str) -> str:
    """C++: the tiles a status row of `nbytes` bytes holds (:func:`status_row_bytes` inverted).

    The scan and the status's initialisation both use it, so they agree on
    the row's layout without storing its tile count.
    """
    return (
        f"static_cast<int>(({nbytes} - {STATUS_SLACK}) / static_cast<long long>("
        "tile_state_t::description_bytes_per_tile + 2 * tile_state_t::payload_bytes_per_tile)) "
        "- static_cast<int>(tile_state_t::TILE_STATUS_PADDING)"
    )
