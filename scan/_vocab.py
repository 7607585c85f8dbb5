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
    "WIDENING",
    "Mode",
    "TempMode",
    "TempStorageLayout",
    "bfloat16",
    "c_type",
    "is_bfloat16",
    "is_complex",
    "is_half",
    "is_value_dtype",
    "round_to_bfloat16",
    "widens",
]

#: Value dtypes the scans and tile I/O accept: the numeric dtypes a callback's
#: state may have (one list, owned by :mod:`statefn`), and bfloat16
#: (``ml_dtypes.bfloat16``, :func:`is_bfloat16`), which only the built-in
#: operators scan and reduce.
VALUE_DTYPES: tuple[np.dtype[Any], ...] = statefn.STATE_DTYPES


def is_bfloat16(dtype: np.dtype[Any] | None) -> bool:
    """Whether `dtype` is bfloat16 (``ml_dtypes.bfloat16``), told without importing ml_dtypes."""
    return dtype is not None and statefn.dtype_key(dtype) == "bfloat16"


def round_to_bfloat16(values: Any) -> np.ndarray[Any, Any]:
    """`values` rounded to bfloat16 once, to nearest with ties to even, as a GPU store does.

    float32 values round as ``ml_dtypes`` rounds them. A float64 value is
    first narrowed to float32 with rounding to odd (toward zero, then the
    last bit set if anything was dropped), which keeps enough bits for the
    second rounding to give the single rounding's result: some ``ml_dtypes``
    versions go through float32 with rounding to nearest, and then round
    twice (``1 + 2**-8 + 2**-30`` to 1.0 instead of ``1 + 2**-7``).
    """
    x = np.asarray(values)
    if x.dtype != np.float64:
        return x.astype(bfloat16())
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = x.astype(np.float32)
        wider = np.abs(narrow.astype(np.float64)) > np.abs(x)  # rounded away from zero
        narrow = np.where(wider, np.nextafter(narrow, np.float32(0)), narrow)
        dropped = np.isfinite(x) & (narrow.astype(np.float64) != x)
        bits = narrow.view(np.uint32) | dropped.astype(np.uint32)
    rounded: np.ndarray[Any, Any] = bits.view(np.float32).astype(bfloat16())
    return rounded


def is_half(dtype: np.dtype[Any] | None) -> bool:
    """Whether `dtype` is a two-byte float: float16 or bfloat16."""
    return dtype is not None and (dtype == np.dtype(np.float16) or is_bfloat16(dtype))


def is_complex(dtype: np.dtype[Any] | None) -> bool:
    """Whether `dtype` is complex64 or complex128."""
    return dtype is not None and dtype.names is None and dtype.kind == "c"


def is_value_dtype(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is a numeric value dtype: one of :data:`VALUE_DTYPES`, or bfloat16."""
    return dtype.names is None and (dtype in VALUE_DTYPES or is_bfloat16(dtype))


def bfloat16() -> np.dtype[Any]:
    """``np.dtype(ml_dtypes.bfloat16)``, importing ``ml_dtypes`` (an optional dependency).

    Raises
    ------
    ImportError
        When ``ml_dtypes`` is not installed, with the fix.
    """
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(
            "bfloat16 arrays need the ml_dtypes package (NumPy's de-facto bfloat16 dtype, "
            "through which numba-cuda types them); install it: pip install ml_dtypes, or "
            "pip install 'statefn-scan[bf16]'"
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


#: Conversions a tile load makes from an array's dtype to its items' (a store
#: makes the reverse): half-precision floats widen exactly to float32 and
#: float64; a store rounds to nearest, ties to even. By dtype name.
WIDENING: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {"float16": ("float32", "float64"), "bfloat16": ("float32", "float64")}
)


def widens(array: np.dtype[Any], items: np.dtype[Any]) -> bool:
    """Whether a load widens `array` items into `items` (and a store narrows them back)."""
    if array.names is not None or items.names is not None:
        return False
    return items.name in WIDENING.get(array.name, ()) and is_value_dtype(array)


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
        "float16": "__half",
        "float32": "float",
        "float64": "double",
        "bfloat16": "__nv_bfloat16",
        # the two-float structs of :func:`scan._codegen.value_decl`
        "complex64": "statefn_complex64",
        "complex128": "statefn_complex128",
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
