# SPDX-License-Identifier: Apache-2.0
"""The library's vocabulary: value dtypes, algorithms and modes, and their C++/CUB names.

Every other module (the planner, the code generator, the simulator, the stub
tests) reads these tables instead of spelling the names again, so adding an
algorithm or a dtype is one edit here. ``block.pyi`` cannot import them; a
test checks that its ``Literal`` types and dtype lists agree with this module.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeAlias

import numpy as np

import statefn

__all__ = [
    "BITWISE_OPERATORS",
    "CUB_LOAD_ALGORITHMS",
    "CUB_SCAN_ALGORITHMS",
    "CUB_STORE_ALGORITHMS",
    "C_TYPES",
    "IO_ALGORITHMS",
    "MODES",
    "NO_SHARED_MEMORY_IO",
    "SCAN_ALGORITHMS",
    "VALUE_DTYPES",
    "WARP_ALGORITHMS",
    "WARP_THREADS",
    "Mode",
    "TempMode",
    "TempStorageLayout",
    "c_type",
]

#: Value dtypes the scans and tile I/O accept: the numeric dtypes a callback's
#: state may have (one list, owned by :mod:`statefn`).
VALUE_DTYPES: tuple[np.dtype[Any], ...] = statefn.STATE_DTYPES

#: C++ spelling of each value dtype, by NumPy name.
C_TYPES: MappingProxyType[str, str] = MappingProxyType(
    {
        "int8": "signed char",
        "int16": "short",
        "int32": "int",
        "int64": "long long",
        "uint8": "unsigned char",
        "uint16": "unsigned short",
        "uint32": "unsigned int",
        "uint64": "unsigned long long",
        "float32": "float",
        "float64": "double",
    }
)

#: ``algorithm=`` of the scans, and CUB's ``BlockScanAlgorithm`` for each.
CUB_SCAN_ALGORITHMS: MappingProxyType[str, str] = MappingProxyType(
    {
        "raking": "BLOCK_SCAN_RAKING",
        "raking_memoize": "BLOCK_SCAN_RAKING_MEMOIZE",
        "warp_scans": "BLOCK_SCAN_WARP_SCANS",
    }
)
#: ``algorithm=`` of ``load``, and CUB's ``BlockLoadAlgorithm`` for each.
CUB_LOAD_ALGORITHMS: MappingProxyType[str, str] = MappingProxyType(
    {
        "direct": "BLOCK_LOAD_DIRECT",
        "striped": "BLOCK_LOAD_STRIPED",
        "vectorize": "BLOCK_LOAD_VECTORIZE",
        "transpose": "BLOCK_LOAD_TRANSPOSE",
        "warp_transpose": "BLOCK_LOAD_WARP_TRANSPOSE",
        "warp_transpose_timesliced": "BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED",
    }
)
#: ``algorithm=`` of ``store`` (the same names), and CUB's ``BlockStoreAlgorithm``.
CUB_STORE_ALGORITHMS: MappingProxyType[str, str] = MappingProxyType(
    {k: v.replace("LOAD", "STORE") for k, v in CUB_LOAD_ALGORITHMS.items()}
)

SCAN_ALGORITHMS: tuple[str, ...] = tuple(CUB_SCAN_ALGORITHMS)
IO_ALGORITHMS: tuple[str, ...] = tuple(CUB_LOAD_ALGORITHMS)
#: Algorithms that need a block size that is a multiple of :data:`WARP_THREADS`.
WARP_ALGORITHMS = ("warp_scans", "warp_transpose", "warp_transpose_timesliced")
#: Tile I/O algorithms whose CUB ``TempStorage`` is empty: no barrier follows them.
NO_SHARED_MEMORY_IO = ("direct", "striped", "vectorize")
MODES = ("inclusive", "exclusive")
#: Built-in scan operators that only apply to integers.
BITWISE_OPERATORS = ("&", "|", "^")
WARP_THREADS = 32

Mode: TypeAlias = Literal["inclusive", "exclusive"]
#: Temp storage of a call: library-owned static shared memory, or a caller array.
TempMode: TypeAlias = Literal["implicit", "caller"]


def c_type(dtype: np.dtype[Any]) -> str:
    """The C++ spelling of a value dtype."""
    return C_TYPES[np.dtype(dtype).name]


class TempStorageLayout(NamedTuple):
    """Size and alignment (bytes) of a primitive's ``TempStorage``.

    Read from the compiled code. For caller-owned temp storage, unpack it into
    module-level ints (numba freezes those as constants; an attribute of a
    global tuple is not one) and allocate with
    ``cuda.shared.array(size, np.uint8, alignment=alignment)``.
    """

    size: int
    alignment: int


# Its public home: reprs and the docs name scan.block.TempStorageLayout.
TempStorageLayout.__module__ = "scan.block"
