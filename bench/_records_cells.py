# SPDX-License-Identifier: Apache-2.0
"""Record-valued row scans: the project against CUB C++ and Triton.

Two tasks, one thread block (or Triton program) per row walking its row tile
by tile, each over the shapes 8192 x 65536 and 262144 x 2048 (rows x cols):

``recurrence``
    The selective-scan recurrence ``h[t] = a[t] * h[t-1] + b[t]`` (``h[-1] =
    0``) per row. ``a`` (uniform in [0.9, 1)) and ``b`` (standard normal) are
    two float32 arrays, as Mamba stores them; the output ``h`` is float32.
    Checked against a float64 sequential reference computed on the device
    once per shape (one thread per row): every ``|h - ref|`` within
    ``1e-4 * max|ref|`` of its row, the tolerance docs/records.md states.
``segmented_sum``
    Inclusive sum that restarts where a flag is set: int32 flags (about 1%
    ones; the first element of a row is not forced to be one) and float32
    values, integers in [-3, 3], so every sum is exact; the output is float32.
    Checked for exact equality with a reference computed on the device.

Both tasks move 12 bytes per element (two 4-byte inputs, one 4-byte output).

Contenders
----------
``project``
    The library, written as docs/records.md did before zipped tile I/O:
    ``block.load`` of the two input tiles, the items zipped into record pairs
    in a loop, ``block.inclusive_scan`` with the pair operator and a
    ``@statefn.stateful`` prefix callback that carries the composed pair
    across tiles, the result field taken out in a loop, ``block.store``.
    Tuned only with the library's knobs: threads, items per thread,
    ``algorithm=`` of the scan (``raking``, ``warp_scans``) and of the tile
    I/O (``warp_transpose``, ``vectorize``, ``direct``). Plain ``@cuda.jit``.
``project_zipped``
    The same with zipped tile I/O, as docs/records.md shows now: one
    ``block.load((a_row, b_row), ...)`` into the record items and one
    ``block.store(h_row, ..., field="b")``.
``cub_cpp``
    Hand-written CUDA C++ (``bench/cub_records.cu``) in the structure of
    Mamba's ``selective_scan_fwd``: ``cub::BlockLoad`` of both inputs, pairs
    built in registers, ``cub::BlockScan::InclusiveScan`` with a stateful
    prefix functor, ``cub::BlockStore``; full tiles in the loop and the tail
    after it, one barrier per tile, ``__launch_bounds__``. Same configuration
    space as the project. Compiled with ``nvcc -O3 -std=c++17 -arch=sm_XY
    -cubin`` and launched with ``cuda.core`` on the legacy default stream.
``triton``
    ``tl.associative_scan`` over the pairs, the prefix carried by hand across
    tiles in the kernel's loop (full tiles unmasked, the tail masked after
    the loop), over BLOCK x num_warps x num_stages. Present only where triton
    and torch import; otherwise the project contenders' meta say why.

Interface for the benchmark harness
-----------------------------------
``cells(quick, build_dir)`` builds everything (project kernels through
``scan.compile`` in a process pool to fill the on-disk cache, then compiled
in this process; the nvcc units in parallel threads; the Triton kernels by
``warmup``), allocates and fills the device arrays once per (task, shape), and
returns one dict per (task, shape, threads, items)::

    {"task", "dtype": "float32", "rows", "cols", "threads", "items",
     "bytes": 12 * rows * cols, "contenders": [
        {"impl", "config", "launch", "check", "meta"}, ...]}

Triton contenders are per (task, shape), not per threads x items: they sit in
one extra cell per (task, shape) with ``threads=0, items=0``. Every
``launch()`` enqueues one launch on the legacy default stream without
synchronizing; ``check()`` poisons the output (NaN), launches once,
synchronizes and verifies, returning a bool (it prints ``MISMATCH`` or
``ERROR`` records and returns False instead of raising). All contenders of a
(task, shape) share its input and output arrays.

``meta`` holds strings, except ``meta["kernel"]``: for ``project`` the Numba
dispatcher (``_rowscan_kernels.kernel_sass`` reads its SASS), for ``cub_cpp`` the tuple
``(cubin path, kernel symbol)`` (also as ``meta["cubin"]``, ``meta["symbol"]``;
``cuobjdump -sass`` of the cubin, function ``symbol``). Triton contenders have
no ``kernel``. Other keys: ``io``, ``algo``, ``threads``, ``items`` (project,
cub_cpp), ``block``, ``warps``, ``stages`` (triton), ``build`` and, for
``project``, ``precompiled_cubin`` (the cubin ``scan.compile`` produced for
the same kernel) and ``triton`` (why there is no Triton contender, if so).
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import numpy as np
from _harness import (
    build_nvcc_unit,
    build_nvcc_units,
    compile_in_processes,
)
from _harness import cub_runtime as _cub_runtime
from _harness import device_pointer as _device_pointer
from numba import cuda

import statefn

BENCH = Path(__file__).resolve().parent
CU_SOURCE = BENCH / "cub_records.cu"

TASKS: tuple[str, ...] = ("recurrence", "segmented_sum")
#: (rows, cols) of the full benchmark
SHAPES: tuple[tuple[int, int], ...] = ((8192, 65536), (262144, 2048))
#: (rows, cols) of ``quick``: one shape with full tiles and a tail, one of partial tiles only
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 4160), (1024, 512))
#: bytes read and written per element: two 4-byte inputs, one 4-byte output
BYTES_PER_ELEMENT = 12
#: the recurrence's tolerance: |h - ref| <= this * max|ref| of the row (docs/records.md)
RECURRENCE_TOLERANCE = 1e-4

THREADS_ITEMS: tuple[tuple[int, int], ...] = ((128, 8), (256, 4), (256, 8), (128, 16))
TILE_IO: tuple[str, ...] = ("warp_transpose", "vectorize", "direct")
SCAN_ALGORITHMS: tuple[str, ...] = ("raking", "warp_scans")


@dataclass(frozen=True)
class Config:
    """One project / CUB C++ configuration."""

    threads: int
    items: int
    io: str
    algo: str

    @property
    def tile(self) -> int:
        """Items per tile."""
        return self.threads * self.items

    @property
    def label(self) -> str:
        """``"<io>/<algo>"``, the ``config`` string of a contender."""
        return f"{self.io}/{self.algo}"

    def symbol(self, task: str) -> str:
        """The CUB C++ kernel's name (``RECORDS_KERNEL`` in cub_records.cu)."""
        return f"{task}_t{self.threads}_i{self.items}_{self.io}_{self.algo}"


def configs(quick: bool) -> tuple[Config, ...]:
    """The configurations run (the same for the project and CUB C++)."""
    if quick:
        return (
            Config(128, 8, "warp_transpose", "warp_scans"),
            Config(256, 4, "vectorize", "raking"),
            Config(128, 16, "direct", "warp_scans"),
        )
    return tuple(
        Config(threads, items, io, algo)
        for threads, items in THREADS_ITEMS
        for io in TILE_IO
        for algo in SCAN_ALGORITHMS
    )


@dataclass(frozen=True)
class TritonConfig:
    """One Triton configuration."""

    block: int
    warps: int
    stages: int

    @property
    def label(self) -> str:
        """``"BLOCK<b>/w<warps>/s<stages>"``."""
        return f"BLOCK{self.block}/w{self.warps}/s{self.stages}"


def triton_configs(quick: bool, cols: int) -> tuple[TritonConfig, ...]:
    """BLOCK in 256..4096, num_warps in 2..16, num_stages in 1..3, pruned.

    Kept: 2 to 16 elements per thread (BLOCK / (32 * num_warps)), and BLOCK no
    longer than the row unless it is the smallest BLOCK.
    """
    if quick:
        picks = ((256, 2, 1), (1024, 4, 2), (2048, 8, 3))
        return tuple(TritonConfig(*p) for p in picks if p[0] <= max(cols, 256))
    out = []
    for block in (256, 512, 1024, 2048, 4096):
        if block > cols and block != 256:
            continue
        for warps in (2, 4, 8, 16):
            if not 2 <= block // (32 * warps) <= 16:
                continue
            out.extend(TritonConfig(block, warps, stages) for stages in (1, 2, 3))
    return tuple(out)


# ---------------------------------------------------------------------------- the project's kernels

# h[t] = a[t] * h[t-1] + b[t]: each item is the affine map h -> a * h + b (docs/records.md)
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
# a segment starts at every item whose flag is set
SEG = np.dtype([("flag", np.int32), ("value", np.float32)], align=True)


def compose(x: Any, y: Any) -> Any:
    """The map ``x``, then the map ``y``."""
    return (x.a * y.a, y.a * x.b + y.b)


def _carry_map_op(state: Any, block_aggregate: Any) -> Any:
    prefix = (state[0].a, state[0].b)
    state[0].a = prefix[0] * block_aggregate.a
    state[0].b = block_aggregate.a * prefix[1] + block_aggregate.b
    return prefix


#: carries the composed map of every earlier tile
carry_map = statefn.stateful(PAIR, name="records_bench_carry_map")(_carry_map_op)


def segmented_add(a: Any, b: Any) -> Any:
    """``b`` starts a segment where its flag is set: what came before does not count."""
    if b.flag:
        return (1, b.value)
    return (a.flag, a.value + b.value)


def _carry_segment_op(state: Any, block_aggregate: Any) -> Any:
    prefix = (state[0].flag, state[0].value)
    if block_aggregate.flag:
        state[0].value = block_aggregate.value
        state[0].flag = 1
    else:
        state[0].value = prefix[1] + block_aggregate.value
    return prefix


#: carries the running (flag, value) of every earlier tile
carry_segment = statefn.stateful(SEG, name="records_bench_carry_segment")(_carry_segment_op)


def make_recurrence_kernel(cfg: Config, zipped: bool = False) -> Any:
    """``kernel[rows, cfg.threads](a, b, h)``: the recurrence over 2-D float32 arrays.

    `zipped`: the fields move with zipped tile I/O (one load of both arrays
    into the record items, a store of their ``b`` field) instead of two loads
    into float32 items and loops building and taking apart the records.
    """
    from scan import block

    ITEMS, TILE, IO, ALGO = cfg.items, cfg.tile, cfg.io, cfg.algo
    if zipped:

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def recurrence_zipped(a: Any, b: Any, h: Any) -> None:
            row = cuda.blockIdx.x
            state = cuda.local.array(1, PAIR)
            state[0].a = 1.0  # the identity map: h[-1] = 0
            state[0].b = 0.0
            items = cuda.local.array(ITEMS, PAIR)
            for base in range(0, a.shape[1], TILE):
                block.load((a[row], b[row]), base, items, oob_default=(1.0, 0.0), algorithm=IO)
                block.inclusive_scan(
                    items,
                    items,
                    scan_op=compose,
                    prefix_op=carry_map,
                    prefix_state=state,
                    algorithm=ALGO,
                )
                block.store(h[row], base, items, field="b", algorithm=IO)

        return recurrence_zipped

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def recurrence(a: Any, b: Any, h: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, PAIR)
        state[0].a = 1.0  # the identity map: h[-1] = 0
        state[0].b = 0.0
        av = cuda.local.array(ITEMS, np.float32)
        bv = cuda.local.array(ITEMS, np.float32)
        items = cuda.local.array(ITEMS, PAIR)
        for base in range(0, a.shape[1], TILE):
            block.load(a[row], base, av, oob_default=1.0, algorithm=IO)
            block.load(b[row], base, bv, oob_default=0.0, algorithm=IO)
            for i in range(ITEMS):  # zip the two tiles into (a, b) maps
                items[i].a = av[i]
                items[i].b = bv[i]
            block.inclusive_scan(
                items,
                items,
                scan_op=compose,
                prefix_op=carry_map,
                prefix_state=state,
                algorithm=ALGO,
            )
            for i in range(ITEMS):  # h[t] is the b field
                bv[i] = items[i].b
            block.store(h[row], base, bv, algorithm=IO)

    return recurrence


def make_segmented_kernel(cfg: Config, zipped: bool = False) -> Any:
    """``kernel[rows, cfg.threads](flags, values, out)``: the segmented sum over 2-D arrays.

    `zipped` as in :func:`make_recurrence_kernel`.
    """
    from scan import block

    ITEMS, TILE, IO, ALGO = cfg.items, cfg.tile, cfg.io, cfg.algo
    if zipped:

        @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
        def segmented_sum_zipped(flags: Any, values: Any, out: Any) -> None:
            row = cuda.blockIdx.x
            state = cuda.local.array(1, SEG)
            state[0].flag = 0
            state[0].value = 0.0
            items = cuda.local.array(ITEMS, SEG)
            for base in range(0, flags.shape[1], TILE):
                block.load(
                    (flags[row], values[row]), base, items, oob_default=(0, 0.0), algorithm=IO
                )
                block.inclusive_scan(
                    items,
                    items,
                    scan_op=segmented_add,
                    prefix_op=carry_segment,
                    prefix_state=state,
                    algorithm=ALGO,
                )
                block.store(out[row], base, items, field="value", algorithm=IO)

        return segmented_sum_zipped

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def segmented_sum(flags: Any, values: Any, out: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, SEG)
        state[0].flag = 0
        state[0].value = 0.0
        fv = cuda.local.array(ITEMS, np.int32)
        vv = cuda.local.array(ITEMS, np.float32)
        items = cuda.local.array(ITEMS, SEG)
        for base in range(0, flags.shape[1], TILE):
            block.load(flags[row], base, fv, oob_default=0, algorithm=IO)
            block.load(values[row], base, vv, oob_default=0.0, algorithm=IO)
            for i in range(ITEMS):  # zip the two tiles into (flag, value) records
                items[i].flag = fv[i]
                items[i].value = vv[i]
            block.inclusive_scan(
                items,
                items,
                scan_op=segmented_add,
                prefix_op=carry_segment,
                prefix_state=state,
                algorithm=ALGO,
            )
            for i in range(ITEMS):
                vv[i] = items[i].value
            block.store(out[row], base, vv, algorithm=IO)

    return segmented_sum


_FACTORIES: dict[str, Callable[[Config, bool], Any]] = {
    "recurrence": make_recurrence_kernel,
    "segmented_sum": make_segmented_kernel,
}


#: The project's kernels: written as docs/records.md did before zipped tile I/O
#: (two loads, records built and taken apart in loops), and with zipped I/O.
PROJECT_IMPLS = {"project": False, "project_zipped": True}


@functools.cache
def project_kernel(task: str, cfg: Config, zipped: bool = False) -> Any:
    """The (one per process) project dispatcher of a task and configuration."""
    return _FACTORIES[task](cfg, zipped)


def project_signature(task: str) -> tuple[Any, ...]:
    """The Numba argument types the project kernels are launched with."""
    from numba import types

    f32 = types.float32[:, ::1]
    first = f32 if task == "recurrence" else types.int32[:, ::1]
    return (first, f32, f32)


# ---------------------------------------------------------------------------- data and checks

_A_LOW = 0.9
_A_MAX = float(np.nextafter(np.float32(1.0), np.float32(0.0)))  # a < 1 after rounding
_TWO_PI = 2.0 * math.pi
_UNIT = 1.0 / (1 << 24)
#: a flag is set where a 24-bit draw is below this: 1% of the draws
_FLAG_LIMIT = int(0.01 * (1 << 24))


@cuda.jit(device=True)  # type: ignore[untyped-decorator, unused-ignore]
def _hash32(x: Any) -> Any:
    # counter-based 32-bit mix; every product stays below 2**63 (multipliers < 2**31)
    x = x & 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & 0xFFFFFFFF
    x ^= x >> 16
    return x


@cuda.jit(device=True)  # type: ignore[untyped-decorator, unused-ignore]
def _unit(i: Any, stream: Any) -> Any:
    # uniform in [0, 1) from draw `stream` (0..3) of element i (rows * cols < 2**30)
    return (_hash32(i * 4 + stream) >> 8) * _UNIT


_element_value = cuda.jit(device=True)(_common.element_value)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _fill_recurrence(a: Any, b: Any) -> None:
    cols = a.shape[1]
    for i in range(cuda.grid(1), a.shape[0] * cols, cuda.gridsize(1)):
        r = i // cols
        c = i - r * cols
        a[r, c] = min(_A_LOW + (1.0 - _A_LOW) * _unit(i, 0), _A_MAX)
        u1 = 1.0 - _unit(i, 1)  # (0, 1]: Box-Muller
        b[r, c] = math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * _unit(i, 2))


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _fill_segmented(flags: Any, values: Any) -> None:
    cols = flags.shape[1]
    for i in range(cuda.grid(1), flags.shape[0] * cols, cuda.gridsize(1)):
        r = i // cols
        c = i - r * cols
        flags[r, c] = 1 if (_hash32(i * 4 + 3) >> 8) < _FLAG_LIMIT else 0
        values[r, c] = _element_value(i)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _recurrence_reference(a: Any, b: Any, ref: Any, row_max: Any) -> None:
    # one thread per row, sequential, float64
    row = cuda.grid(1)
    if row < a.shape[0]:
        h = 0.0
        largest = 0.0
        for t in range(a.shape[1]):
            h = np.float64(a[row, t]) * h + np.float64(b[row, t])
            ref[row, t] = h
            largest = max(largest, abs(h))
        row_max[row] = largest


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _segmented_reference(flags: Any, values: Any, ref: Any) -> None:
    # one thread per row, sequential, float64 (exact: integer values, |sum| < 2**24)
    row = cuda.grid(1)
    if row < flags.shape[0]:
        total = 0.0
        for t in range(flags.shape[1]):
            v = np.float64(values[row, t])
            total = v if flags[row, t] != 0 else total + v
            ref[row, t] = total


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _count_bad_recurrence(h: Any, ref: Any, row_max: Any, tol: Any, bad: Any) -> None:
    cols = h.shape[1]
    local = 0
    for i in range(cuda.grid(1), h.shape[0] * cols, cuda.gridsize(1)):
        r = i // cols
        c = i - r * cols
        if not abs(np.float64(h[r, c]) - ref[r, c]) <= tol * row_max[r]:  # NaN counts
            local += 1
    if local != 0:
        cuda.atomic.add(bad, 0, local)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _count_bad_exact(out: Any, ref: Any, bad: Any) -> None:
    cols = out.shape[1]
    local = 0
    for i in range(cuda.grid(1), out.shape[0] * cols, cuda.gridsize(1)):
        r = i // cols
        c = i - r * cols
        if out[r, c] != ref[r, c]:  # NaN counts
            local += 1
    if local != 0:
        cuda.atomic.add(bad, 0, local)


@cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
def _poison(out: Any) -> None:
    cols = out.shape[1]
    for i in range(cuda.grid(1), out.shape[0] * cols, cuda.gridsize(1)):
        r = i // cols
        out[r, i - r * cols] = np.nan


def _stride_grid(n: int) -> tuple[int, int]:
    """Grid-stride launch shape: at most 4096 blocks of 256 threads."""
    return (max(1, min(4096, -(-n // 256))), 256)


def _row_grid(rows: int) -> tuple[int, int]:
    """One thread per row, 64 to a block."""
    return (max(1, -(-rows // 64)), 64)


@dataclass
class TaskData:
    """The device arrays of one (task, shape), shared by all its contenders."""

    task: str
    rows: int
    cols: int
    first: Any  # a (float32) or flags (int32)
    second: Any  # b or values (float32)
    out: Any  # h or the segment sums (float32)
    ref: Any = None
    row_max: Any = None
    torch_views: tuple[Any, Any, Any] | None = None

    @classmethod
    def allocate(cls, task: str, rows: int, cols: int) -> TaskData:
        """Allocate and fill the inputs on the device (the output is left unset)."""
        first_dtype = np.float32 if task == "recurrence" else np.int32
        data = cls(
            task,
            rows,
            cols,
            cuda.device_array((rows, cols), first_dtype),
            cuda.device_array((rows, cols), np.float32),
            cuda.device_array((rows, cols), np.float32),
        )
        fill = _fill_recurrence if task == "recurrence" else _fill_segmented
        fill[_stride_grid(rows * cols)](data.first, data.second)
        cuda.synchronize()
        return data

    @property
    def bytes(self) -> int:
        """Bytes read and written by one launch."""
        return BYTES_PER_ELEMENT * self.rows * self.cols

    def ensure_reference(self) -> None:
        """Compute the reference once (on the device)."""
        if self.ref is not None:
            return
        grid = _row_grid(self.rows)
        if self.task == "recurrence":
            ref = cuda.device_array((self.rows, self.cols), np.float64)
            row_max = cuda.device_array(self.rows, np.float64)
            _recurrence_reference[grid](self.first, self.second, ref, row_max)
            self.row_max = row_max
        else:
            ref = cuda.device_array((self.rows, self.cols), np.float32)
            _segmented_reference[grid](self.first, self.second, ref)
        cuda.synchronize()
        self.ref = ref

    def poison(self) -> None:
        """Fill the output with NaN, so a kernel that writes nothing cannot pass."""
        _poison[_stride_grid(self.rows * self.cols)](self.out)

    def count_bad(self) -> int:
        """Elements of the output that fail the check (after a synchronize)."""
        self.ensure_reference()
        bad = cuda.to_device(np.zeros(1, np.int64))
        grid = _stride_grid(self.rows * self.cols)
        if self.task == "recurrence":
            _count_bad_recurrence[grid](self.out, self.ref, self.row_max, RECURRENCE_TOLERANCE, bad)
        else:
            _count_bad_exact[grid](self.out, self.ref, bad)
        return int(bad.copy_to_host()[0])

    def torch(self) -> tuple[Any, Any, Any]:
        """The three arrays as torch tensors on the same memory."""
        if self.torch_views is None:
            import torch  # type: ignore[import-not-found, unused-ignore]

            self.torch_views = (
                torch.as_tensor(self.first, device="cuda"),
                torch.as_tensor(self.second, device="cuda"),
                torch.as_tensor(self.out, device="cuda"),
            )
        return self.torch_views


def make_check(
    data: TaskData, launch: Callable[[], None], label: dict[str, object]
) -> Callable[[], bool]:
    """``check()``: poison, launch once, synchronize, verify; False (with a record) on failure."""

    def check() -> bool:
        try:
            data.ensure_reference()
            data.poison()
            launch()
            cuda.synchronize()
            bad = data.count_bad()
        except Exception as exc:
            _common.emit_error(exc, **label, stage="check")
            return False
        if bad:
            _common.emit("MISMATCH", **label, bad_elements=bad, of=data.rows * data.cols)
        return bad == 0

    return check


def make_project_launch(kernel: Any, data: TaskData, threads: int) -> Callable[[], None]:
    """``launch()`` of a project kernel over ``data`` (Numba's default stream: the legacy one).

    The launch is configured at each call: the simulator's dispatcher keeps one
    configuration, and the kernels are shared between shapes.
    """
    grid, first, second, out = data.rows, data.first, data.second, data.out

    def launch() -> None:
        kernel[grid, threads](first, second, out)

    return launch


# ---------------------------------------------------------------------------- building


def _simulated() -> bool:
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


def _find_tool(name: str) -> str | None:
    from _toolchain import find_tool

    return find_tool(name)


@dataclass
class CubUnit:
    """One nvcc job: the kernels of one (task, threads, items)."""

    task: str
    threads: int
    items: int
    configs: tuple[Config, ...]
    cubin: Path
    ok: bool = False
    seconds: float = 0.0
    message: str = ""
    usage: dict[str, str] = field(default_factory=dict)


def _cub_units(quick: bool, build_dir: Path, tasks: Sequence[str] = TASKS) -> list[CubUnit]:
    units: dict[tuple[str, int, int], list[Config]] = {}
    for task in tasks:
        for cfg in configs(quick):
            units.setdefault((task, cfg.threads, cfg.items), []).append(cfg)
    return [
        CubUnit(task, t, i, tuple(cfgs), build_dir / f"cub_records_{task}_t{t}_i{i}.cubin")
        for (task, t, i), cfgs in units.items()
    ]


def _build_cub_unit(unit: CubUnit, nvcc: str, cc: tuple[int, int]) -> CubUnit:
    """Compile one unit; skipped when its cubin is newer than its inputs, same command."""
    lines = [
        "// generated by bench/records_bench.py: the kernels of one nvcc job",
        "#define RECORDS_GENERATED_INSTANCES",
        f'#include "{CU_SOURCE}"',
        *(
            f"RECORDS_KERNEL({unit.task}, {c.threads}, {c.items}, {c.io}, {c.algo})"
            for c in unit.configs
        ),
    ]
    return build_nvcc_unit(unit, nvcc, cc, CU_SOURCE, lines)


def build_cub(
    quick: bool, build_dir: Path, cc: tuple[int, int], tasks: Sequence[str] = TASKS
) -> list[CubUnit]:
    """Compile every CUB unit, in parallel threads; print the wall time."""
    build_dir.mkdir(parents=True, exist_ok=True)
    units = _cub_units(quick, build_dir, tasks)
    nvcc = _find_tool("nvcc")
    return build_nvcc_units(
        "records_bench", units, lambda u, n: _build_cub_unit(u, n, cc), nvcc, cc
    )


def sass_stats(cubin: Path) -> dict[str, _common.SassStats]:
    """Per-function SASS statistics (LDL/STL, registers) of a cubin; empty without cuobjdump."""
    cuobjdump = _find_tool("cuobjdump")
    if cuobjdump is None:
        return {}
    return _common.cubin_sass(cuobjdump, str(cubin))[1]


def _compile_project_job(
    task: str, cfg: tuple[int, int, str, str], zipped: bool, cc: tuple[int, int], out_dir: str
) -> dict[str, Any]:
    """Worker process: ``scan.compile`` one project kernel (fills the on-disk cache)."""
    import scan

    config = Config(*cfg)
    started = time.perf_counter()
    kernel = project_kernel(task, config, zipped)
    cubin = scan.compile(kernel, project_signature(task), cc=cc, block=config.threads)
    seconds = time.perf_counter() - started
    zip_tag = "_zipped" if zipped else ""
    path = Path(out_dir) / f"project_{config.symbol(task)}{zip_tag}.cubin"
    path.write_bytes(bytes(cubin))  # type: ignore[arg-type]
    stats = sass_stats(path)
    ldl = sum(v.ldl for v in stats.values()) if stats else -1
    stl = sum(v.stl for v in stats.values()) if stats else -1
    regs = max((v.regs or 0 for v in stats.values()), default=-1)
    return {"cubin": str(path), "seconds": seconds, "ldl": ldl, "stl": stl, "regs": regs}


@dataclass
class ProjectBuild:
    """What the process pool did for one project kernel."""

    ok: bool
    message: str = ""
    cubin: str = ""
    ldl: int = -1
    stl: int = -1
    regs: int = -1


def build_project(
    quick: bool, build_dir: Path, cc: tuple[int, int], tasks: Sequence[str] = TASKS
) -> dict[tuple[str, Config, bool], ProjectBuild]:
    """``scan.compile`` every project kernel in a process pool (spawned: no CUDA state)."""
    jobs = {
        (task, cfg, zipped): (
            cfg.symbol(task) + ("_zipped" if zipped else ""),
            (task, (cfg.threads, cfg.items, cfg.io, cfg.algo), zipped),
        )
        for task in tasks
        for cfg in configs(quick)
        for zipped in PROJECT_IMPLS.values()
    }
    done = compile_in_processes(
        "records_bench", jobs, _compile_project_job, cc, build_dir / "project"
    )
    results: dict[tuple[str, Config, bool], ProjectBuild] = {}
    for key, r in done.items():
        if isinstance(r, str):
            results[key] = ProjectBuild(False, r)
        else:
            results[key] = ProjectBuild(
                True, "scan.compile ok", r["cubin"], r["ldl"], r["stl"], r["regs"]
            )
    for key, r in sorted(results.items(), key=lambda kv: jobs[kv[0]][0]):
        if r.ok:
            local = f"regs={r.regs} LDL={r.ldl} STL={r.stl}" if r.ldl >= 0 else "no cuobjdump"
            print(f"  project {jobs[key][0]}: {local}", flush=True)
    return results


def _target_cc() -> tuple[int, int]:
    if _simulated():
        return (9, 0)
    cc = cuda.get_current_device().compute_capability
    return (int(cc[0]), int(cc[1]))


# ---------------------------------------------------------------------------- CUB C++ launching


def make_cub_launch(data: TaskData, cubin: Path, symbol: str, threads: int) -> Callable[[], None]:
    """``launch()`` of one CUB C++ kernel over ``data`` via cuda.core."""
    core, stream = _cub_runtime()
    module = core.ObjectCode.from_cubin(cubin.read_bytes())
    kernel = module.get_kernel(symbol)
    config = core.LaunchConfig(grid=data.rows, block=threads)
    args = (
        np.uint64(_device_pointer(data.first)),
        np.uint64(_device_pointer(data.second)),
        np.uint64(_device_pointer(data.out)),
        np.int32(data.cols),
    )
    launch_fn = core.launch

    def launch() -> None:
        launch_fn(stream, config, kernel, *args)

    return launch


# ---------------------------------------------------------------------------- Triton


@functools.cache
def _triton_kernels() -> dict[str, Any]:
    """The Triton kernels (imports triton; raises ImportError without it)."""
    import triton  # type: ignore[import-not-found, unused-ignore]
    import triton.language as tl  # type: ignore[import-not-found, unused-ignore]

    @triton.jit  # type: ignore[untyped-decorator, unused-ignore]
    def affine(a1, b1, a2, b2):  # type: ignore[no-untyped-def]
        return a1 * a2, a2 * b1 + b2

    @triton.jit  # type: ignore[untyped-decorator, unused-ignore]
    def segmented(f1, v1, f2, v2):  # type: ignore[no-untyped-def]
        return f1 | f2, tl.where(f2 != 0, v2, v1 + v2)

    @triton.jit  # type: ignore[untyped-decorator, unused-ignore]
    def recurrence(A, B, H, cols, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        row = tl.program_id(0).to(tl.int64)
        a_row = A + row * cols
        b_row = B + row * cols
        h_row = H + row * cols
        lane = tl.arange(0, BLOCK)
        h_prev = tl.zeros((), dtype=tl.float32)
        full = cols // BLOCK * BLOCK
        for start in range(0, full, BLOCK):
            a = tl.load(a_row + start + lane)
            b = tl.load(b_row + start + lane)
            a_cum, b_cum = tl.associative_scan((a, b), 0, affine)
            h = a_cum * h_prev + b_cum
            tl.store(h_row + start + lane, h)
            h_prev = tl.sum(tl.where(lane == BLOCK - 1, h, 0.0), axis=0)
        if full < cols:
            offs = full + lane
            mask = offs < cols
            a = tl.load(a_row + offs, mask=mask, other=1.0)
            b = tl.load(b_row + offs, mask=mask, other=0.0)
            a_cum, b_cum = tl.associative_scan((a, b), 0, affine)
            tl.store(h_row + offs, a_cum * h_prev + b_cum, mask=mask)

    @triton.jit  # type: ignore[untyped-decorator, unused-ignore]
    def segmented_sum(F, V, OUT, cols, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        row = tl.program_id(0).to(tl.int64)
        f_row = F + row * cols
        v_row = V + row * cols
        o_row = OUT + row * cols
        lane = tl.arange(0, BLOCK)
        carry = tl.zeros((), dtype=tl.float32)
        full = cols // BLOCK * BLOCK
        for start in range(0, full, BLOCK):
            f = tl.load(f_row + start + lane)
            v = tl.load(v_row + start + lane)
            f_cum, v_cum = tl.associative_scan((f, v), 0, segmented)
            out = tl.where(f_cum != 0, v_cum, v_cum + carry)
            tl.store(o_row + start + lane, out)
            carry = tl.sum(tl.where(lane == BLOCK - 1, out, 0.0), axis=0)
        if full < cols:
            offs = full + lane
            mask = offs < cols
            f = tl.load(f_row + offs, mask=mask, other=0)
            v = tl.load(v_row + offs, mask=mask, other=0.0)
            f_cum, v_cum = tl.associative_scan((f, v), 0, segmented)
            tl.store(o_row + offs, tl.where(f_cum != 0, v_cum, v_cum + carry), mask=mask)

    return {"recurrence": recurrence, "segmented_sum": segmented_sum}


def triton_status() -> str:
    """``""`` when triton and torch are usable here, else why not."""
    if _simulated():
        return "not run in the simulator"
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]  # noqa: F401

        _triton_kernels()
    except Exception as exc:
        return f"triton unavailable: {type(exc).__name__}: {exc}".replace("\n", " | ")[:300]
    return ""


def make_triton_launch(data: TaskData, cfg: TritonConfig) -> Callable[[], None]:
    """``launch()`` of the Triton kernel (torch's current stream: the legacy default one)."""
    kernel = _triton_kernels()[data.task]
    first, second, out = data.torch()
    grid = (data.rows,)
    cols = data.cols
    meta = {"BLOCK": cfg.block, "num_warps": cfg.warps, "num_stages": cfg.stages}

    def launch() -> None:
        kernel[grid](first, second, out, cols, **meta)

    return launch


def _warm_triton(data: TaskData, cfg: TritonConfig) -> None:
    """Compile a Triton configuration without launching it, where ``warmup`` works.

    Where it does not (another Triton version), the first launch compiles, and
    a kernel that does not compile fails its check.
    """
    kernel = _triton_kernels()[data.task]
    first, second, out = data.torch()
    meta = {"BLOCK": cfg.block, "num_warps": cfg.warps, "num_stages": cfg.stages}
    try:
        kernel.warmup(first, second, out, data.cols, grid=(data.rows,), **meta)
    except Exception as exc:
        print(f"records_bench: triton {cfg.label}: no warmup ({type(exc).__name__}: {exc})"[:300])


# ---------------------------------------------------------------------------- cells

#: contenders that could not be set up (printed as ERROR records too); main() exits 1 on any
SETUP_ERRORS: list[str] = []


def cells(quick: bool, build_dir: Path) -> list[dict[str, Any]]:
    """Every benchmark cell (see the module docstring); builds everything first."""
    return build_cells(quick, Path(build_dir))


def build_cells(
    quick: bool,
    build_dir: Path,
    shapes: Sequence[tuple[int, int]] | None = None,
    tasks: Sequence[str] = TASKS,
) -> list[dict[str, Any]]:
    """``cells`` with the shapes and tasks chosen (the standalone run's ``--shape``)."""
    shapes = list(shapes) if shapes else list(QUICK_SHAPES if quick else SHAPES)
    simulated = _simulated()
    cc = _target_cc()
    build_dir.mkdir(parents=True, exist_ok=True)

    # the nvcc units run in threads while the project kernels compile in processes
    with concurrent.futures.ThreadPoolExecutor(1) as background:
        cub_future = background.submit(build_cub, quick, build_dir, cc, tasks)
        if simulated:
            project_builds: dict[tuple[str, Config, bool], ProjectBuild] = {}
            print("records_bench: simulator: project kernels are not precompiled", flush=True)
        else:
            try:
                project_builds = build_project(quick, build_dir, cc, tasks)
            except Exception as exc:
                _common.emit_error(exc, impl="project", stage="scan.compile pool")
                project_builds = {}
        try:
            units = cub_future.result()
        except Exception as exc:
            _common.emit_error(exc, impl="cub_cpp", stage="nvcc")
            SETUP_ERRORS.append(f"cub_cpp: nvcc stage: {type(exc).__name__}: {exc}")
            units = []

    if not simulated:
        started = time.perf_counter()
        for task in tasks:
            for cfg in configs(quick):
                for impl, zipped in PROJECT_IMPLS.items():
                    try:
                        project_kernel(task, cfg, zipped).compile(project_signature(task))
                    except Exception as exc:
                        _common.emit_error(exc, impl=impl, config=cfg.symbol(task), stage="compile")
        print(
            "records_bench: project: in-process compile of "
            f"{len(tasks) * len(configs(quick)) * len(PROJECT_IMPLS)} "
            f"kernels (providers from the cache) in {time.perf_counter() - started:.1f} s",
            flush=True,
        )

    cubins = {(u.task, c): u for u in units for c in u.configs}
    if simulated:
        print("records_bench: simulator: no cub_cpp contenders (they need a GPU)", flush=True)
    no_triton = triton_status()
    if no_triton:
        print(f"records_bench: no triton contenders: {no_triton}", flush=True)

    out: list[dict[str, Any]] = []
    for task in tasks:
        for rows, cols in shapes:
            data = TaskData.allocate(task, rows, cols)
            out.extend(_config_cells(data, quick, project_builds, cubins, no_triton, simulated))
            if not no_triton:
                out.extend(_triton_cells(data, quick))
    return out


def _cell(data: TaskData, threads: int, items: int) -> dict[str, Any]:
    return {
        "task": data.task,
        "dtype": "float32",
        "rows": data.rows,
        "cols": data.cols,
        "threads": threads,
        "items": items,
        "bytes": data.bytes,
        "contenders": [],
    }


def _label(data: TaskData, impl: str, config: str, threads: int, items: int) -> dict[str, object]:
    return {
        "task": data.task,
        "impl": impl,
        "rows": data.rows,
        "cols": data.cols,
        "threads": threads,
        "items": items,
        "config": config,
    }


def _config_cells(
    data: TaskData,
    quick: bool,
    project_builds: dict[tuple[str, Config, bool], ProjectBuild],
    cubins: dict[tuple[str, Config], CubUnit],
    no_triton: str,
    simulated: bool,
) -> list[dict[str, Any]]:
    by_shape: dict[tuple[int, int], dict[str, Any]] = {}
    for cfg in configs(quick):
        cell = by_shape.setdefault((cfg.threads, cfg.items), _cell(data, cfg.threads, cfg.items))
        common = {
            "io": cfg.io,
            "algo": cfg.algo,
            "threads": str(cfg.threads),
            "items": str(cfg.items),
        }
        for impl, zipped in PROJECT_IMPLS.items():
            label = _label(data, impl, cfg.label, cfg.threads, cfg.items)
            try:
                kernel = project_kernel(data.task, cfg, zipped)
                launch = make_project_launch(kernel, data, cfg.threads)

                built = project_builds.get((data.task, cfg, zipped))
                meta: dict[str, Any] = {
                    **common,
                    "kernel": kernel,
                    "build": built.message if built else "not precompiled",
                    "precompiled_cubin": built.cubin if built else "",
                }
                if no_triton:
                    meta["triton"] = no_triton
                cell["contenders"].append(
                    {
                        "impl": impl,
                        "config": cfg.label,
                        "launch": launch,
                        "check": make_check(data, launch, label),
                        "meta": meta,
                    }
                )
            except Exception as exc:
                _common.emit_error(exc, **label, stage="setup")
                SETUP_ERRORS.append(f"{impl} {cfg.symbol(data.task)}: {type(exc).__name__}: {exc}")

        label = _label(data, "cub_cpp", cfg.label, cfg.threads, cfg.items)
        unit = cubins.get((data.task, cfg))
        if simulated:
            continue
        if cfg.io == "vectorize" and data.cols % 4:
            # CUB's vectorized store has no alignment check: rows must start on 16 bytes
            print(f"records_bench: cub_cpp {cfg.label}: not for {data.cols} columns", flush=True)
            continue
        if unit is None or not unit.ok:
            message = unit.message[:300] if unit else "no unit"
            _common.emit("ERROR", **label, stage="build", msg=message)
            SETUP_ERRORS.append(f"cub_cpp {cfg.symbol(data.task)}: build: {message}")
            continue
        symbol = cfg.symbol(data.task)
        try:
            cub_launch = make_cub_launch(data, unit.cubin, symbol, cfg.threads)
        except Exception as exc:
            _common.emit_error(exc, **label, stage="load")
            SETUP_ERRORS.append(f"cub_cpp {symbol}: load: {type(exc).__name__}: {exc}")
            continue
        cell["contenders"].append(
            {
                "impl": "cub_cpp",
                "config": cfg.label,
                "launch": cub_launch,
                "check": make_check(data, cub_launch, label),
                "meta": {
                    **common,
                    "kernel": (str(unit.cubin), symbol),
                    "cubin": str(unit.cubin),
                    "symbol": symbol,
                    "build": unit.message,
                    "ptxas": unit.usage.get(symbol, ""),
                },
            }
        )
    return list(by_shape.values())


def _triton_cells(data: TaskData, quick: bool) -> list[dict[str, Any]]:
    cell = _cell(data, 0, 0)
    started = time.perf_counter()
    for cfg in triton_configs(quick, data.cols):
        label = _label(data, "triton", cfg.label, 0, 0)
        try:
            _warm_triton(data, cfg)
            launch = make_triton_launch(data, cfg)
        except Exception as exc:
            _common.emit_error(exc, **label, stage="compile")
            SETUP_ERRORS.append(f"triton {data.task} {cfg.label}: {type(exc).__name__}: {exc}")
            continue
        cell["contenders"].append(
            {
                "impl": "triton",
                "config": cfg.label,
                "launch": launch,
                "check": make_check(data, launch, label),
                "meta": {
                    "block": str(cfg.block),
                    "warps": str(cfg.warps),
                    "stages": str(cfg.stages),
                },
            }
        )
    print(
        f"records_bench: triton: {len(cell['contenders'])} {data.task} kernels for "
        f"{data.rows}x{data.cols} compiled in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return [cell] if cell["contenders"] else []
