# SPDX-License-Identifier: Apache-2.0
"""Block scan, warp scan and tile I/O cases that run unchanged on the simulator and on a GPU.

A case is a small frozen description (:class:`ScanCase`, :class:`IOCase`).
From it this module builds

* the kernel (:func:`scan_kernel`, :func:`io_kernel`): generated Python source
  that calls :mod:`scan.block` (or, for a warp case, :mod:`scan.warp`) with
  exactly the keywords the case needs, every option a compile-time constant
  (closure variable), compiled by ``cuda.jit``;
* inputs (:func:`scan_inputs`, :func:`io_inputs`);
* the NumPy reference (:func:`scan_reference`, :func:`io_reference`): CUB's
  contract written out sequentially: per row, tile by tile, the calling lanes
  run the prefix callback on their own state, thread 0's return seeds the tile
  (a warp case: each logical warp's tile part, every lane of the warp calls,
  the warp's lane 0's return seeds it);
* a runner (:func:`run_scan`, :func:`run_io`) launching one block per row.

A :class:`ScanCase` may also move its tiles with ``block.load``/``block.store``
(``io``), over rows that end in a partial tile or before the last tile
(``short``), with caller-owned or dynamic shared temp storage, and may be a
call the library refuses (:func:`expected_refusals` says with what). With
``lanes`` set it is a warp case: the tiles are loaded and stored block-wide as
ever, and only the scan is a :mod:`scan.warp` call over logical warps of that
many lanes.

Kernels are defined in this module, which imports ``cuda`` at top level: under
``NUMBA_ENABLE_CUDASIM=1`` numba's simulator swaps that global for its
per-launch module while a kernel of this module runs.
"""

from __future__ import annotations

import functools
import itertools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import (
    PlanError,
    ScanTypeError,
    block,
    warp,  # noqa: F401  (the generated warp-case kernels call it)
)
from scan._primitives.block_scan._plan import REVERSE_EXCHANGE_LIMIT
from scan._vocab import is_bfloat16, round_to_bfloat16

__all__ = [
    "BITWISE",
    "LANES",
    "OPERATORS",
    "TILE_ALGORITHMS",
    "IOCase",
    "ScanCase",
    "callers",
    "expected_refusals",
    "io_inputs",
    "io_kernel",
    "io_reference",
    "run_io",
    "run_scan",
    "scan_inputs",
    "scan_kernel",
    "scan_reference",
    "temp_layout",
]

OPERATORS = ("+", "*", "min", "max", "&", "|", "^")
BITWISE = ("&", "|", "^")
TILE_ALGORITHMS = (
    "direct",
    "striped",
    "vectorize",
    "transpose",
    "warp_transpose",
    "warp_transpose_timesliced",
)
WARP_IO = TILE_ALGORITHMS[4:]
LANES = (1, 2, 4, 8, 16, 32)  # the logical warp sizes scan.warp takes
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
SENTINEL = 77  # what items/destinations hold before a load/store touches them

# ---------------------------------------------------------------------------
# callbacks and operators (numba-compilable; plain Python on the simulator)


@cuda.jit(device=True)
def user_add(a, b):
    """A user scan operator (not a built-in): ``a + b``."""
    return a + b


def _running_add(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _running_mul(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix * block_aggregate
    return prefix


def _running_min(state, block_aggregate):
    prefix = state[0]
    state[0] = min(prefix, block_aggregate)
    return prefix


def _running_max(state, block_aggregate):
    prefix = state[0]
    state[0] = max(prefix, block_aggregate)
    return prefix


def _running_and(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix & block_aggregate
    return prefix


def _running_or(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix | block_aggregate
    return prefix


def _running_xor(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix ^ block_aggregate
    return prefix


def _count_calls(state, block_aggregate):
    state[0] = state[0] + 1
    return block_aggregate - block_aggregate


def _ten(block_aggregate):
    return block_aggregate - block_aggregate + 10


_RUNNING = {
    "+": _running_add,
    "*": _running_mul,
    "min": _running_min,
    "max": _running_max,
    "&": _running_and,
    "|": _running_or,
    "^": _running_xor,
}


@functools.cache
def running(op: str, state_dtype: str) -> statefn.StatefulFunction[Any, Any]:
    """Stateful callback: returns its state, then folds the aggregate into it with *op*."""
    return statefn.stateful(np.dtype(state_dtype), name=f"running_{op}")(_RUNNING[op])


@functools.cache
def count_calls(state_dtype: str) -> statefn.StatefulFunction[Any, Any]:
    """Stateful callback counting its calls in its state; returns 0."""
    return statefn.stateful(np.dtype(state_dtype), name="count_calls")(_count_calls)


TEN = statefn.stateless(_ten)
"""Stateless callback returning 10."""

# scalar references of the operators, with the generated C++'s semantics
_REF_OPS = {
    "+": lambda a, b: a + b,
    "*": lambda a, b: a * b,
    "min": lambda a, b: b if b < a else a,
    "max": lambda a, b: b if a < b else a,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "user_add": lambda a, b: a + b,
}


def callers(threads: int, algorithm: str) -> int:
    """Threads (ranks ``0 .. n-1``) that call the prefix callback, per CUB."""
    if algorithm == "warp_scans":
        return 32
    if threads <= 32:
        return threads
    segment = -(-threads // 32)
    return -(-threads // segment)


# ---------------------------------------------------------------------------
# scans


@dataclass(frozen=True)
class ScanCase:
    """One block-scan or warp-scan configuration.

    Attributes
    ----------
    entry : str
        ``scan``, ``inclusive_sum``, ``exclusive_sum``, ``inclusive_scan``,
        ``exclusive_scan``, or ``none`` (tiles are only loaded and stored).
    mode : str
        ``inclusive`` or ``exclusive`` (must agree with *entry*).
    op : str
        A built-in operator or ``user_add`` (a ``@cuda.jit(device=True)`` function).
    dtype : str
        The value dtype.
    block : tuple of int
        Launch block shape.
    items_per_thread : int
        0 for a scalar payload.
    tiles : int
        Tiles per row; the prefix is carried between them.
    algorithm : str
    prefix : str
        ``none``, ``running`` (stateful, folds with *op*), ``count`` (stateful,
        counts calls, returns 0) or ``stateless`` (returns 10).
    state_dtype : str
    initial_value : int or float or None
    aggregate : bool
        Whether the block aggregate is written out.
    out_of_place : bool
        Array payloads: write a separate ``out`` array.
    explicit_threads : bool
        Pass ``threads=`` as well as launching with the block shape.
    auto_sync : bool
        With False, the kernel calls ``cuda.syncthreads()`` after every call instead.
    io : str or None
        None: each thread reads and writes its items by indexing. ``default``:
        ``block.load``/``block.store`` without ``algorithm=``; else that algorithm.
    short : int
        With *io*: each row is this many items shorter than ``tiles * tile_items``
        (a partial last tile; past a whole tile, a load starts past the end).
    valid_items : int or None
        With *io*: passed to every load and store.
    oob_default : int or float or None
        With *io*: passed to every load.
    temp_storage : str
        ``implicit`` (library-owned), ``caller`` (one static shared buffer for
        every call) or ``dynamic`` (the launch's dynamic shared memory).
    state_array : str or None
        The dtype of the ``prefix_state`` array when it differs from *state_dtype*.
    flip_state : bool
        Pass ``prefix_state=`` exactly when the callback is *not* stateful.
    reverse : bool
        Scan each tile from its end (``reverse=True``).
    lanes : int or None
        None: a block scan. Else a warp scan (:mod:`scan.warp`) over logical
        warps of this many lanes (``lanes=``, passed unless 32): each scans
        its own part of the block's tile, with its own prefix; ``aggregate``
        is then ``warp_aggregate=``. *algorithm*, *temp_storage*,
        *auto_sync* and *reverse* do not apply to a warp case: construction
        resets them to their defaults (the tile loads and stores around the
        scan take no temp storage and synchronise themselves), so that equal
        warp cases compare, hash and serialise equal.
    array : str or None
        With *io* and float32 or float64 values: the dtype of ``src`` and
        ``dst``, ``float16`` or ``bfloat16``; loads widen it into the items,
        stores round the items back to it. None: the arrays hold *dtype*.
    """

    entry: str = "inclusive_sum"
    mode: str = "inclusive"
    op: str = "+"
    dtype: str = "int32"
    block: tuple[int, int, int] = (32, 1, 1)
    items_per_thread: int = 1
    tiles: int = 1
    algorithm: str = "raking"
    prefix: str = "none"
    state_dtype: str = "int64"
    initial_value: int | float | None = None
    aggregate: bool = False
    out_of_place: bool = False
    explicit_threads: bool = False
    auto_sync: bool = True
    io: str | None = None
    short: int = 0
    valid_items: int | None = None
    oob_default: int | float | None = None
    temp_storage: str = "implicit"
    state_array: str | None = None
    flip_state: bool = False
    reverse: bool = False
    lanes: int | None = None
    array: str | None = None

    def __post_init__(self) -> None:
        if self.lanes is not None:
            for name in ("algorithm", "temp_storage", "auto_sync", "reverse"):
                object.__setattr__(self, name, _BLOCK_ONLY[name])

    @property
    def is_warp(self) -> bool:
        """Whether the scan is a warp scan."""
        return self.lanes is not None

    @property
    def threads(self) -> int:
        """Threads per block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def length(self) -> int:
        """Items per row."""
        return max(self.tiles * self.tile_items - self.short, 0)

    @property
    def passes_state(self) -> bool:
        """Whether the kernel passes ``prefix_state=``."""
        return self.stateful != self.flip_state

    @property
    def ipt(self) -> int:
        """Items per thread (1 for a scalar payload)."""
        return max(self.items_per_thread, 1)

    @property
    def tile_items(self) -> int:
        """Items per tile."""
        return self.threads * self.ipt

    @property
    def sentinel(self) -> int:
        """What items and destinations hold before a load or store touches them.

        :data:`SENTINEL`, but 1 for float16 values: their sums stay small
        enough to be exact (the fuzzer draws float16 sums of at most 2000 items).
        """
        return 1 if self.dtype == "float16" else SENTINEL

    @property
    def array_dtype(self) -> np.dtype[Any]:
        """The dtype of ``src`` and ``dst``."""
        return array_dtype(self.array or self.dtype)

    def prefix_descriptor(self) -> Any:
        """The prefix callback the kernel passes (None without one)."""
        if self.prefix == "running":
            return running("+" if self.op == "user_add" else self.op, self.state_dtype)
        if self.prefix == "count":
            return count_calls(self.state_dtype)
        if self.prefix == "stateless":
            return TEN
        return None

    @property
    def stateful(self) -> bool:
        """Whether the callback carries state."""
        return self.prefix in ("running", "count")


# the block-scan fields a warp case resets (the fields' defaults)
_BLOCK_ONLY = {
    "algorithm": "raking",
    "temp_storage": "implicit",
    "auto_sync": True,
    "reverse": False,
}


def expected_refusals(case: ScanCase) -> list[tuple[type[Exception], str]]:
    """How the library may refuse *case* (empty: it must run): exception type and message part.

    The fragments are those of docs/errors.md. A case with several faults may
    be refused for any of them.
    """
    out: list[tuple[type[Exception], str]] = []
    whole_warps = "needs a block size that is a multiple of 32"
    if case.io in WARP_IO and case.threads % 32:
        out.append((PlanError, f"algorithm={case.io!r} {whole_warps}"))
    if case.entry == "none":
        return out
    if case.lanes is not None and case.threads % case.lanes:
        out.append((PlanError, f"not a multiple of lanes={case.lanes}"))
    exchange_bytes = 2 * case.threads * np.dtype(case.dtype).itemsize
    if case.reverse and exchange_bytes > REVERSE_EXCHANGE_LIMIT:
        out.append((PlanError, "reverse=True exchanges one value a thread each way"))
    if case.algorithm == "warp_scans" and case.threads % 32:
        out.append((PlanError, f"algorithm='warp_scans' {whole_warps}"))
    if np.dtype(case.dtype).kind == "f" and case.op in BITWISE:
        out.append((ScanTypeError, f"scan_op={case.op!r} is a bitwise operator but values are"))
    if case.prefix != "none" and case.initial_value is not None:
        out.append((PlanError, "prefix_op= and initial_value= cannot be combined"))
    if case.prefix != "none" and case.aggregate:
        output = "warp_aggregate" if case.is_warp else "block_aggregate"
        out.append((PlanError, f"prefix_op= and {output}= cannot be combined"))
    if case.stateful and not case.passes_state:
        out.append((PlanError, "is stateful but prefix_state= is missing"))
    if not case.stateful and case.passes_state:
        out.append((PlanError, "prefix_state= was given with"))
    if case.stateful and case.passes_state and case.state_array not in (None, case.state_dtype):
        out.append(
            (
                ScanTypeError,
                f"prefix_state has dtype {case.state_array} but the callback declares state "
                f"dtype {case.state_dtype}",
            )
        )
    summing = case.entry == "exclusive_sum" or (case.entry == "scan" and case.op == "+")
    if (
        case.mode == "exclusive"
        and not summing
        and case.initial_value is None
        and case.prefix == "none"
    ):
        out.append((PlanError, "needs initial_value= or prefix_op="))
    return out


def _scan_call(case: ScanCase, value: str, out_arg: str) -> str:
    kwargs: list[str] = []
    if case.entry == "scan":
        kwargs.append("mode=MODE")
    if not case.entry.endswith("_sum"):
        kwargs.append("scan_op=OP")
    if case.initial_value is not None:
        kwargs.append("initial_value=INIT")
    if case.prefix != "none":
        kwargs.append("prefix_op=PREFIX")
    if case.passes_state:
        kwargs.append("prefix_state=state")
    if case.is_warp:
        if case.aggregate:
            kwargs.append("warp_aggregate=agg")
        if case.lanes != 32:  # 32 is the default
            kwargs.append("lanes=LANES")
        if case.explicit_threads:
            kwargs.append("threads=SHAPE")
        return f"warp.{case.entry}({value}{out_arg}, {', '.join(kwargs)})"
    if case.aggregate:
        kwargs.append("block_aggregate=agg")
    kwargs.append("algorithm=ALGO")
    kwargs += _common_keywords(case)
    if case.reverse:
        kwargs.append("reverse=True")
    return f"block.{case.entry}({value}{out_arg}, {', '.join(kwargs)})"


def _common_keywords(case: ScanCase) -> list[str]:
    kwargs = []
    if case.temp_storage != "implicit":
        kwargs.append("temp_storage=temp")
    if case.explicit_threads:
        kwargs.append("threads=SHAPE")
    if not case.auto_sync:
        kwargs.append("auto_sync=False")
    return kwargs


def _tile_io_calls(case: ScanCase) -> tuple[str, str]:
    """The kernel's ``block.load`` and ``block.store`` calls (``target`` is stored)."""
    load_kw, store_kw = [], []
    if case.valid_items is not None:
        load_kw.append("valid_items=VALID")
        store_kw.append("valid_items=VALID")
    if case.oob_default is not None:
        load_kw.append("oob_default=OOB")
    if case.io != "default":
        load_kw.append("algorithm=IO")
        store_kw.append("algorithm=IO")
    common = _common_keywords(case)
    load = ", ".join(["block.load(src[row], tile * TILE, items", *load_kw, *common]) + ")"
    store = ", ".join(["block.store(dst[row], tile * TILE, target", *store_kw, *common]) + ")"
    return load, store


def _scan_source(case: ScanCase) -> str:
    sync = [] if case.auto_sync else ["            cuda.syncthreads()"]
    lines = [
        "def factory(VALUE, STATE, STATE_ARRAY, IPT, TILES, THREADS, MODE, OP, INIT, PREFIX,",
        "            ALGO, SHAPE, IO, VALID, OOB, FILL, TEMP_BYTES, TEMP_ALIGN, U8, LANES):",
        "    TILE = THREADS * IPT",
        "    def kernel(src, dst, states, aggs, state_init):",
        "        rank = cuda.threadIdx.x + cuda.blockDim.x * (",
        "            cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)",
        "        row = cuda.blockIdx.x",
    ]
    if case.temp_storage == "caller":
        # the simulator's shared arrays take no alignment= (and ignore the contents)
        align = "" if SIMULATED else ", alignment=TEMP_ALIGN"
        lines.append(f"        temp = cuda.shared.array(TEMP_BYTES, U8{align})")
    elif case.temp_storage == "dynamic":
        lines.append("        temp = cuda.shared.array(0, U8)")
    if case.stateful or case.passes_state:
        lines += [
            "        state = cuda.local.array(1, STATE_ARRAY)",
            "        state[0] = state_init[row, rank]",
        ]
    if case.aggregate:
        lines.append("        agg = cuda.local.array(1, VALUE)")
    if case.items_per_thread > 0 or case.io is not None:
        lines.append("        items = cuda.local.array(IPT, VALUE)")
    if case.out_of_place and case.items_per_thread > 0:
        lines.append("        res = cuda.local.array(IPT, VALUE)")
    lines.append("        for tile in range(TILES):")
    if case.io is None:
        lines.append("            base = (tile * THREADS + rank) * IPT")
    if case.entry == "none":
        scan = []
        target = "items"
    elif case.items_per_thread == 0:
        if case.io is None:
            scan = ["            x = src[row, base]"]
        else:
            scan = ["            x = items[0]"]
        scan.append(f"            x = {_scan_call(case, 'x', '')}")
        scan.append("            items[0] = x" if case.io is not None else "")
        target = "items"
    else:
        out_arg = ", res" if case.out_of_place else ""
        scan = [f"            {_scan_call(case, 'items', out_arg)}"]
        target = "res" if case.out_of_place else "items"
    if case.io is None:
        if case.items_per_thread > 0:
            lines += [
                "            for i in range(IPT):",
                "                items[i] = src[row, base + i]",
            ]
        lines += [ln for ln in scan if ln]
        lines += sync
        if case.items_per_thread > 0:
            lines += [
                "            for i in range(IPT):",
                f"                dst[row, base + i] = {target}[i]",
            ]
        else:
            lines.append("            dst[row, base] = x")
    else:
        load, store = _tile_io_calls(case)
        lines += [
            "            for i in range(IPT):",
            "                items[i] = FILL",
            f"            {load}",
            *sync,
            *[ln for ln in scan if ln],
            *(sync if scan else []),
            f"            {store.replace('target', target)}",
            *sync,
        ]
    if case.stateful or case.passes_state:
        lines.append("            states[row, tile, rank] = state[0]")
    if case.aggregate:
        lines.append("            aggs[row, tile, rank] = agg[0]")
    lines.append("    return kernel")
    return "\n".join(lines) + "\n"


def _compile(source: str, name: str) -> Any:
    namespace = globals()  # kernels must live in this module (simulator swaps `cuda` here)
    code = compile(source, f"<{name}>", "exec")
    exec(code, namespace)
    return namespace.pop("factory")


@functools.cache
def scan_kernel(case: ScanCase, temp: tuple[int, int] = (16, 16)) -> Any:
    """The ``cuda.jit`` kernel of *case*: one block per row, ``case.tiles`` tiles.

    *temp* is the (size, alignment) of a caller-owned buffer (see :func:`temp_layout`).
    """
    factory = _compile(_scan_source(case), f"scan_kernel {case}")
    dtype = np.dtype(case.dtype).type
    # numba-cuda 0.30 cannot lower a float16 constant (it writes `store i16 1.0`):
    # the kernel's float16 constants are float32 ones, converted where they are used
    constant = np.float32 if dtype is np.float16 else dtype
    init = None if case.initial_value is None else constant(case.initial_value)
    oob = None if case.oob_default is None else constant(case.oob_default)
    op: Any = user_add if case.op == "user_add" else case.op
    kernel = factory(
        dtype,
        np.dtype(case.state_dtype).type,
        np.dtype(case.state_array or case.state_dtype).type,
        case.ipt,
        case.tiles,
        case.threads,
        case.mode,
        op,
        init,
        case.prefix_descriptor(),
        case.algorithm,
        case.block,
        case.io,
        case.valid_items,
        oob,
        constant(case.sentinel),
        temp[0],
        temp[1],
        np.dtype(np.uint8) if SIMULATED else np.uint8,
        case.lanes,
    )
    return cuda.jit(kernel)


def temp_layout(case: ScanCase, cc: tuple[int, int] | None) -> tuple[int, int]:
    """Size and alignment of one buffer that serves every call of *case*.

    Queried from the compiled CUB code for *cc* (None: the current GPU's); in
    the simulator, which ignores the buffer's contents, a fixed 16 bytes.
    """
    if SIMULATED or case.temp_storage == "implicit":
        return (16, 16)
    queries = []
    if case.entry != "none" and not case.is_warp:  # warp scans take no temp storage
        queries.append(("scan", case.algorithm))
    if case.io is not None:
        io = None if case.io == "default" else case.io
        queries += [("load", io), ("store", io)]
    layouts = [
        block.temp_storage(prim, case.dtype, case.block, case.ipt, algorithm=algo, cc=cc)
        for prim, algo in queries
    ]
    # numba-cuda takes shared-array alignments of at least a pointer's size
    return (max(t.size for t in layouts), max(8, *(t.alignment for t in layouts)))


def array_dtype(name: str) -> np.dtype[Any]:
    """The NumPy dtype named `name` (bfloat16: ``ml_dtypes.bfloat16``)."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _values(rng: np.random.Generator, dtype: np.dtype[Any], op: str, size: Any) -> Any:
    if dtype.kind == "c":
        if op == "*":  # units: products stay small, their parts exact
            return rng.choice(np.array([1, -1, 1j, -1j], dtype=dtype), size=size)
        parts = rng.integers(-8, 9, size=(2, *np.atleast_1d(size)))
        return (parts[0] + 1j * parts[1]).astype(dtype).reshape(size)
    if dtype == np.float16:  # +-1 and 0: float16 products and (short) sums are exact
        values = [1.0, -1.0] if op == "*" else [1.0, -1.0, 0.0]
        return rng.choice(np.array(values, dtype=dtype), size=size)
    if dtype.kind == "f":
        if op == "*":
            return rng.choice(np.array([1.0, -1.0, 1.0, 2.0, 0.5], dtype=dtype), size=size)
        return rng.integers(-8, 9, size=size).astype(dtype)
    info = np.iinfo(dtype)
    if op == "*":
        return rng.integers(max(info.min, -3), 4, size=size).astype(dtype)
    if op in ("+", "user_add"):
        return rng.integers(max(info.min, -50), min(info.max, 50) + 1, size=size).astype(dtype)
    return rng.integers(info.min, int(info.max) + 1, size=size, dtype=dtype)


def scan_inputs(
    case: ScanCase, rows: int, seed: int = 0, uniform_state: bool = True
) -> tuple[Any, Any]:
    """Random ``src`` (rows x length) and per-thread initial states.

    With ``uniform_state=False`` every thread starts from a different state,
    which breaks the callback contract on purpose (only thread 0's counts, or
    in a warp case each logical warp's lane 0's).
    """
    rng = np.random.default_rng(seed)
    dtype = np.dtype(case.dtype)
    # small integers (and 2, 0.5): exact in float16 and bfloat16 arrays too
    src = _values(rng, dtype, case.op, (rows, case.length)).astype(case.array_dtype)
    sdtype = np.dtype(case.state_dtype)
    if case.prefix == "count":
        first = np.zeros(rows, dtype=sdtype)
    else:
        first = _values(rng, sdtype, case.op, rows)
    state_init = np.repeat(first[:, None], case.threads, axis=1)
    if not uniform_state:
        spread = _values(rng, sdtype, case.op, (rows, case.threads))
        spread[:, 0] = first
        state_init = spread
    return src, np.ascontiguousarray(state_init)


def _positions(case: ScanCase) -> Any:
    """Tile position of item ``i`` of thread ``t`` (threads x ipt): blocked or striped."""
    t, i = np.indices((case.threads, case.ipt))
    return i * case.threads + t if case.io == "striped" else t * case.ipt + i


def _valid(case: ScanCase, tile: int) -> int:
    """In-range items of *tile* from its start: the array's end and ``valid_items`` bound them."""
    valid = case.length - tile * case.tile_items
    if case.valid_items is not None and case.io is not None:
        valid = min(valid, case.valid_items)
    return valid


def scan_reference(case: ScanCase, src: Any, state_init: Any) -> dict[str, Any]:
    """What the kernel of *case* computes, sequentially in NumPy.

    Loads put in-range items in place (blocked, or striped for ``striped``) and
    ``oob_default`` or :data:`SENTINEL` past the range; the scan sees each
    thread's items in rank order (a warp case: each logical warp its own
    threads' items, with its own prefix); stores write the in-range items
    back. Returns ``dst``, ``states`` (rows x tiles x threads, after each
    tile: each thread's own, as a GPU leaves it) and ``aggs`` (rows x tiles x
    threads: the block's, or the thread's logical warp's, aggregate).
    """
    dtype = np.dtype(case.dtype)
    rows, tile_items = src.shape[0], case.tile_items
    pos = _positions(case).reshape(-1)  # in blocked (rank-major) order
    pad = case.sentinel if case.oob_default is None else case.oob_default
    tiles = np.full((rows, case.tiles * tile_items), dtype.type(pad), dtype=dtype)
    for tile in range(case.tiles):
        start, valid = tile * tile_items, _valid(case, tile)
        inside = pos < valid
        tiles[:, start + np.flatnonzero(inside)] = src[:, start + pos[inside]]
    if case.entry == "none":
        sdtype = np.dtype(case.state_dtype)
        blank = np.zeros((rows, case.tiles, case.threads))
        ref = {"dst": tiles, "states": blank.astype(sdtype), "aggs": blank.astype(dtype)}
    else:
        ref = _scan_tiles(case, tiles, state_init)
    # a store into a half-precision array rounds once, to nearest, ties to even
    # (NumPy's float16 casts; bfloat16 as round_to_bfloat16), and past the range to inf
    dst = np.full(src.shape, case.sentinel, dtype=case.array_dtype)
    for tile in range(case.tiles):
        start, valid = tile * tile_items, _valid(case, tile)
        inside = pos < valid
        values = ref["dst"][:, start + np.flatnonzero(inside)]
        with np.errstate(over="ignore"):
            if is_bfloat16(case.array_dtype):
                values = round_to_bfloat16(values)
            dst[:, start + pos[inside]] = values
    return {**ref, "dst": dst}


def _groups(case: ScanCase) -> list[tuple[int, int, int]]:
    """The threads that scan together: (first rank, threads, callback callers) each.

    A block scan is one group whose first :func:`callers` threads call the
    callback; a warp scan one group per logical warp, every lane calling.
    """
    if case.lanes is None:
        return [(0, case.threads, callers(case.threads, case.algorithm))]
    return [(first, case.lanes, case.lanes) for first in range(0, case.threads, case.lanes)]


def _scan_tiles(case: ScanCase, src: Any, state_init: Any) -> dict[str, Any]:
    """CUB's scan contract over full tiles of *src* (rows x tiles*tile_items).

    Each group of :func:`_groups` scans its threads' part of the tile (in rank
    order) with its own prefix: its callers fold the group's aggregate into
    their own states, its first thread's return seeds it.
    """
    dtype = np.dtype(case.dtype)
    sdtype = np.dtype(case.state_dtype)
    rows = src.shape[0]
    threads, ipt = case.threads, case.ipt
    dst = np.zeros_like(src)
    states = np.zeros((rows, case.tiles, threads), dtype=sdtype)
    aggs = np.zeros((rows, case.tiles, threads), dtype=dtype)
    with np.errstate(all="ignore"):
        for row in range(rows):
            state = state_init[row].astype(sdtype).copy()
            for tile in range(case.tiles):
                for first, size, n_callers in _groups(case):
                    lo = tile * case.tile_items + first * ipt
                    x = src[row, lo : lo + size * ipt].astype(dtype)
                    out, aggregate = _scan_group(case, x, state[first : first + n_callers])
                    dst[row, lo : lo + size * ipt] = np.asarray(out).astype(dtype)
                    aggs[row, tile, first : first + size] = aggregate
                states[row, tile] = state
    return {"dst": dst, "states": states, "aggs": aggs}


def _scan_group(case: ScanCase, x: Any, state: Any) -> tuple[list[Any], Any]:
    """One group's scan of its items *x*; *state* (its callers' states) is updated in place."""
    dtype = np.dtype(case.dtype)
    sdtype = np.dtype(case.state_dtype)
    op = _REF_OPS[case.op]
    inclusive = list(itertools.accumulate(x, op))
    aggregate = inclusive[-1]
    seed: Any = None
    if case.prefix in ("running", "count"):
        returns = []
        for lane in range(len(state)):
            returns.append(state[lane])
            if case.prefix == "count":
                state[lane] = state[lane] + 1
            else:
                fold = _REF_OPS["+" if case.op == "user_add" else case.op]
                state[lane] = np.asarray(fold(state[lane], aggregate)).astype(sdtype)
        seed = np.asarray(returns[0]).astype(dtype)[()]
        if case.prefix == "count":
            # the callback's own arithmetic, as for the stateless one below
            seed = dtype.type(aggregate - aggregate)
    elif case.prefix == "stateless":
        # the callback's own arithmetic: agg - agg + 10 is NaN for an
        # infinite or NaN float aggregate (a product of padding can overflow)
        seed = dtype.type(_ten(aggregate))
    elif case.initial_value is not None:
        seed = dtype.type(case.initial_value)
    elif case.mode == "exclusive":
        seed = dtype.type(0)
    if case.reverse:  # each item with the items after it, then the seed
        suffix = list(itertools.accumulate(x[::-1], lambda acc, v: op(v, acc)))[::-1]
        if case.mode == "inclusive":
            out = suffix if seed is None else [op(v, seed) for v in suffix]
        else:
            out = [op(v, seed) for v in suffix[1:]] + [seed]
    elif case.mode == "inclusive":
        out = inclusive if seed is None else [op(seed, v) for v in inclusive]
    else:
        out = [seed] + [op(seed, v) for v in inclusive[:-1]]
    return out, aggregate


def run_scan(
    case: ScanCase, src: Any, state_init: Any, cc: tuple[int, int] | None = None
) -> dict[str, Any]:
    """Launch *case*'s kernel (one block per row); returns ``dst``, ``states``, ``aggs``.

    ``dst`` starts out holding :data:`SENTINEL` (what a store leaves alone
    keeps it). *cc* is the target of a caller-owned buffer's size query.
    """
    rows = src.shape[0]
    dst = np.full_like(src, case.sentinel)
    states = np.zeros((rows, case.tiles, case.threads), dtype=np.dtype(case.state_dtype))
    aggs = np.zeros((rows, case.tiles, case.threads), dtype=np.dtype(case.dtype))
    temp = temp_layout(case, cc)
    kernel = scan_kernel(case, temp)
    dynamic = temp[0] if case.temp_storage == "dynamic" else 0
    state_array = np.dtype(case.state_array or case.state_dtype)
    src_arg, _ = _device(src)
    dst_arg, result = _device(dst)
    kernel[rows, case.block, 0, dynamic](
        src_arg, dst_arg, states, aggs, np.ascontiguousarray(state_init.astype(state_array))
    )
    return {"dst": result(), "states": states, "aggs": aggs}


def _device(host: Any) -> tuple[Any, Any]:
    """(the kernel's argument for `host`, a function returning its contents after the launch).

    On a GPU a bfloat16 array moves as its bits: numba-cuda 0.30 cannot copy a
    host ``ml_dtypes.bfloat16`` array (NumPy's DLPack export refuses the dtype).
    """
    if SIMULATED or host.dtype.name != "bfloat16":
        return host, lambda: host
    bits = cuda.to_device(host.view(np.uint16))
    return bits.view(host.dtype), lambda: bits.copy_to_host().view(host.dtype)


def assert_scan_matches(case: ScanCase, got: dict[str, Any], want: dict[str, Any]) -> None:
    """Compare outputs: integers exactly, floats with a tolerance."""
    keys = ["dst"]
    if case.stateful:
        keys.append("states")
    if case.aggregate:
        keys.append("aggs")
    for key in keys:
        if got[key].dtype.kind == "f":
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


# ---------------------------------------------------------------------------
# tile I/O


@dataclass(frozen=True)
class IOCase:
    """One load/store configuration: ``length`` items per row, moved tile by tile.

    ``valid_items`` (None or int) and ``oob_default`` (None or number) are
    passed to every tile's calls; the same ``algorithm`` loads and stores.
    """

    dtype: str = "int32"
    block: tuple[int, int, int] = (32, 1, 1)
    items_per_thread: int = 2
    length: int = 64
    algorithm: str | None = None
    valid_items: int | None = None
    oob_default: int | float | None = None

    @property
    def threads(self) -> int:
        """Threads per block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def tile_items(self) -> int:
        """Items per tile."""
        return self.threads * self.items_per_thread

    @property
    def tiles(self) -> int:
        """Tiles per row (the last may be partial)."""
        return -(-self.length // self.tile_items)


def _io_source(case: IOCase) -> str:
    load_kw = []
    store_kw = []
    if case.valid_items is not None:
        load_kw.append("valid_items=VALID")
        store_kw.append("valid_items=VALID")
    if case.oob_default is not None:
        load_kw.append("oob_default=OOB")
    if case.algorithm is not None:
        load_kw.append("algorithm=ALGO")
        store_kw.append("algorithm=ALGO")
    lk = "".join(", " + k for k in load_kw)
    sk = "".join(", " + k for k in store_kw)
    return (
        "def factory(VALUE, IPT, TILES, TILE, VALID, OOB, ALGO, FILL):\n"
        "    def kernel(src, dst, loaded):\n"
        "        rank = cuda.threadIdx.x + cuda.blockDim.x * (\n"
        "            cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)\n"
        "        row = cuda.blockIdx.x\n"
        "        items = cuda.local.array(IPT, VALUE)\n"
        "        for tile in range(TILES):\n"
        "            for i in range(IPT):\n"
        "                items[i] = FILL\n"
        f"            block.load(src[row], tile * TILE, items{lk})\n"
        "            for i in range(IPT):\n"
        "                loaded[row, tile, rank, i] = items[i]\n"
        f"            block.store(dst[row], tile * TILE, items{sk})\n"
        "    return kernel\n"
    )


@functools.cache
def io_kernel(case: IOCase) -> Any:
    """The ``cuda.jit`` kernel of *case*: loads, records and stores every tile."""
    factory = _compile(_io_source(case), f"io_kernel {case}")
    dtype = np.dtype(case.dtype).type
    oob = None if case.oob_default is None else dtype(case.oob_default)
    kernel = factory(
        dtype,
        case.items_per_thread,
        case.tiles,
        case.tile_items,
        case.valid_items,
        oob,
        case.algorithm,
        dtype(SENTINEL),
    )
    return cuda.jit(kernel)


def io_inputs(case: IOCase, rows: int, seed: int = 0) -> Any:
    """Random ``src`` of shape (rows, length), never equal to the sentinel."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 50, size=(rows, case.length)).astype(np.dtype(case.dtype))
    return src


def io_reference(case: IOCase, src: Any) -> dict[str, Any]:
    """Expected ``loaded`` (rows x tiles x threads x ipt), its ``specified`` mask, and ``dst``.

    Items past the valid range hold ``oob_default`` when given and keep what
    the kernel put there before the load otherwise, for every algorithm (the
    library serves partial tiles with direct or striped accesses). The
    ``specified`` mask is all true; it stays for cases that need one.
    """
    rows = src.shape[0]
    dtype = np.dtype(case.dtype)
    threads, ipt = case.threads, case.items_per_thread
    loaded = np.full((rows, case.tiles, threads, ipt), SENTINEL, dtype=dtype)
    specified = np.ones(loaded.shape, dtype=bool)
    dst = np.full(src.shape, SENTINEL, dtype=dtype)
    striped = case.algorithm == "striped"
    for tile in range(case.tiles):
        start = tile * case.tile_items
        valid = case.length - start
        if case.valid_items is not None:
            valid = min(valid, case.valid_items)
        for rank in range(threads):
            for i in range(ipt):
                pos = i * threads + rank if striped else rank * ipt + i
                if pos < valid:
                    loaded[:, tile, rank, i] = src[:, start + pos]
                    dst[:, start + pos] = src[:, start + pos]
                elif case.oob_default is not None:
                    loaded[:, tile, rank, i] = dtype.type(case.oob_default)
    return {"loaded": loaded, "specified": specified, "dst": dst}


def run_io(case: IOCase, src: Any) -> dict[str, Any]:
    """Launch *case*'s kernel (one block per row); returns ``loaded`` and ``dst``."""
    rows = src.shape[0]
    dtype = np.dtype(case.dtype)
    loaded = np.zeros((rows, case.tiles, case.threads, case.items_per_thread), dtype=dtype)
    dst = np.full(src.shape, SENTINEL, dtype=dtype)
    io_kernel(case)[rows, case.block](src, dst, loaded)
    return {"loaded": loaded, "dst": dst}


def assert_io_matches(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Compare loaded items where specified, and the stored rows."""
    mask = want["specified"]
    np.testing.assert_array_equal(got["loaded"][mask], want["loaded"][mask], err_msg="loaded")
    np.testing.assert_array_equal(got["dst"], want["dst"], err_msg="dst")
