# SPDX-License-Identifier: Apache-2.0
"""The project's row-scan kernels of ``bench/rowscan.py``, shared by the benchmarks that
time, profile or compile them (``callback_variants``, ``ncu_callback``,
``launch_overhead``, ``new_config_compile``, ``matrix``, ``_matrix_kernels``).

One block per row, a tile loop of ``block.load`` / ``block.inclusive_sum`` /
``block.store``: ``prefix_op`` (the running total is a ``@statefn.stateful``
callback) and ``hand_carried`` (the same scan without a callback), the plain
row copy of the first-launch baseline, the configurations of ``cub_rowscan.cu``,
device fill / poison / check helpers, and the SASS statistics of a kernel.
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import _common
import numpy as np
from _toolchain import find_tool
from numba import cuda

DTYPES = ("int32", "float32")

#: ``block.load`` / ``block.store`` algorithms used here
TileIO = Literal["direct", "striped", "vectorize", "transpose", "warp_transpose"]
#: ``block.inclusive_sum`` algorithms
ScanAlgorithm = Literal["raking", "raking_memoize", "warp_scans"]

# ---------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class KernelConfig:
    """One kernel configuration.

    Attributes
    ----------
    block : int
        Threads per block.
    items : int
        Items per thread (the local array's length).
    io : str
        ``block.load`` / ``block.store`` algorithm.
    algo : str
        ``block.inclusive_sum`` algorithm.
    launch_bounds : bool
        Whether the project's kernels declare the block size to the compiler
        (``cuda.jit(launch_bounds=block)``; the C++ kernels declare none). With
        it, ptxas allocates registers knowing how many threads share the
        multiprocessor.
    """

    block: int
    items: int
    io: TileIO
    algo: ScanAlgorithm = "warp_scans"
    launch_bounds: bool = False

    @property
    def tile(self) -> int:
        """Items per tile (``block * items``)."""
        return self.block * self.items

    @property
    def name(self) -> str:
        """Configuration label, as the C++ benchmark spells it."""
        return f"b{self.block}_i{self.items}_{self.io}_{self.algo}"


#: the configurations of ``cub_rowscan.cu``
CONFIGS: tuple[KernelConfig, ...] = (
    KernelConfig(128, 16, "warp_transpose"),
    KernelConfig(256, 8, "warp_transpose"),
    KernelConfig(256, 4, "vectorize"),
    KernelConfig(512, 4, "vectorize"),
    # declaring the block size makes the hand-carried kernel 3-6% faster here
    # (and gives prefix_op 32 registers instead of 39-40, at the same speed)
    KernelConfig(256, 8, "direct", launch_bounds=True),
    KernelConfig(256, 8, "warp_transpose", "raking"),
)
#: the configuration whose SASS is written in full and that first-launch timing uses
HEADLINE = KernelConfig(256, 8, "warp_transpose")
#: state dtype of the prefix callback, per value dtype (all configurations)
MAIN_STATE = {"int32": "int64", "float32": "float32"}
#: a second state dtype, per value dtype, run for the headline configuration only
EXTRA_STATE = {"int32": "int32", "float32": "float64"}

# ---------------------------------------------------------------------------- kernels


def kernel_jit(cfg: KernelConfig) -> Any:
    """``cuda.jit``, with ``launch_bounds=cfg.block`` where the configuration asks for it.

    The simulator takes no launch bounds (nor needs them).
    """
    from numba.core import config

    if cfg.launch_bounds and not config.ENABLE_CUDASIM:
        return cuda.jit(launch_bounds=cfg.block)
    return cuda.jit


def kernel_constants(
    cfg: KernelConfig, dtype: str, second_dtype: str
) -> tuple[Any, Any, int, int, TileIO, ScanAlgorithm]:
    """What a tile-loop kernel closes over: the value type, a second type (the
    callback state's or the carried total's), items per thread, tile, and the
    I/O and scan algorithms."""
    return getattr(np, dtype), getattr(np, second_dtype), cfg.items, cfg.tile, cfg.io, cfg.algo


def _running_total_op(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@functools.cache
def running_total(state_dtype: str) -> Any:
    """The ``running_total`` prefix callback with the given state dtype."""

    import statefn

    return statefn.stateful(getattr(np, state_dtype), name=f"running_total_{state_dtype}")(
        _running_total_op
    )


def make_prefix_kernel(
    cfg: KernelConfig, dtype: str, state_dtype: str, *, auto_sync: bool = True
) -> Any:
    """Row-wise inclusive sum carrying the running total in a stateful prefix callback.

    Parameters
    ----------
    cfg : KernelConfig
        Block size, items per thread and algorithms (closed over as constants).
    dtype, state_dtype : str
        Value and callback-state dtype names (``"int32"``, ``"int64"``, ...).
    auto_sync : bool
        Passed to the scan (``bench/callback_variants.py`` compares both).

    Returns
    -------
    numba.cuda.dispatcher.CUDADispatcher
        ``kernel[rows, cfg.block](src, dst)`` for 2-D C-contiguous arrays.
    """

    from scan import block

    VALUE, STATE, ITEMS, TILE, IO, ALGO = kernel_constants(cfg, dtype, state_dtype)
    AUTO_SYNC = auto_sync
    total = running_total(state_dtype)

    @kernel_jit(cfg)  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        state = cuda.local.array(1, STATE)
        state[0] = 0
        items = cuda.local.array(ITEMS, VALUE)
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, items, algorithm=IO)
            block.inclusive_sum(
                items,
                items,
                prefix_op=total,
                prefix_state=state,
                algorithm=ALGO,
                auto_sync=AUTO_SYNC,
            )
            block.store(dst[row], base, items, algorithm=IO)

    return row_cumsum


def make_hand_carried_kernel(
    cfg: KernelConfig, dtype: str, carry_dtype: str, *, auto_sync: bool = False
) -> Any:
    """The same tile loop without a callback: the running total is carried by hand.

    The arithmetic is the callback's: the carried total has the callback
    state's dtype, each tile adds it (converted to the value dtype) to every
    scanned item, then adds the tile's aggregate to it. The block's last thread
    publishes the aggregate (its last scanned item) in shared memory and every
    thread reads it after a barrier; two slots alternate, so a slot is never
    rewritten before every thread has read it.

    Parameters
    ----------
    cfg : KernelConfig
        Block size, items per thread and algorithms.
    dtype, carry_dtype : str
        Value dtype name, and dtype of the carried total (the compared
        callback's state dtype).
    auto_sync : bool
        Passed to the scan. The default ``False`` is safe here, since the
        kernel's own barrier separates one tile's scan from the next, and
        gives the fewest barriers: two per tile, as in the ``prefix_op`` kernel.

    Returns
    -------
    numba.cuda.dispatcher.CUDADispatcher
        ``kernel[rows, cfg.block](src, dst)``.
    """

    from scan import block

    VALUE, CARRY, ITEMS, TILE, IO, ALGO = kernel_constants(cfg, dtype, carry_dtype)
    ZERO = CARRY(0)
    LAST_ITEM = cfg.items - 1
    LAST_THREAD = cfg.block - 1
    AUTO_SYNC = auto_sync

    @kernel_jit(cfg)  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum_by_hand(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        last = cuda.shared.array(2, VALUE)
        items = cuda.local.array(ITEMS, VALUE)
        carry = ZERO
        slot = 0
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, items, algorithm=IO)
            block.inclusive_sum(items, items, algorithm=ALGO, auto_sync=AUTO_SYNC)
            if cuda.threadIdx.x == LAST_THREAD:
                last[slot] = items[LAST_ITEM]
            prefix = VALUE(carry)
            for i in range(ITEMS):
                items[i] += prefix
            cuda.syncthreads()
            carry += CARRY(last[slot])
            slot ^= 1
            block.store(dst[row], base, items, algorithm=IO)

    return row_cumsum_by_hand


def make_plain_copy_kernel(cfg: KernelConfig) -> Any:
    """A plain Numba row copy with the same grid and tile loop (first-launch baseline)."""

    ITEMS = cfg.items
    BLOCK = cfg.block
    TILE = cfg.tile

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_copy(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        cols = src.shape[1]
        for base in range(0, cols, TILE):
            for i in range(ITEMS):
                col = base + i * BLOCK + tid
                if col < cols:
                    dst[row, col] = src[row, col]

    return row_copy


# ---------------------------------------------------------------------------- device helpers


@dataclass(frozen=True)
class _Helpers:
    fill: Any
    poison: Any
    count_bad: Any


@functools.cache
def _helpers() -> _Helpers:

    value_of = cuda.jit(device=True)(_common.element_value)

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def fill(flat: Any) -> None:
        for i in range(cuda.grid(1), flat.size, cuda.gridsize(1)):
            flat[i] = value_of(i)

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def poison(flat: Any, value: Any) -> None:
        for i in range(cuda.grid(1), flat.size, cuda.gridsize(1)):
            flat[i] = value

    @cuda.jit  # type: ignore[untyped-decorator, unused-ignore]
    def count_bad(src: Any, dst: Any, bad: Any) -> None:
        # out[r, 0] == in[r, 0] and out[r, c] - out[r, c - 1] == in[r, c]: exact for
        # integer-valued data, so this checks every element of every row.
        cols = src.shape[1]
        local = 0
        for i in range(cuda.grid(1), src.size, cuda.gridsize(1)):
            r = i // cols
            c = i - r * cols
            left = dst[r, c - 1] if c > 0 else 0
            if dst[r, c] - left != src[r, c]:
                local += 1
        if local != 0:
            cuda.atomic.add(bad, 0, local)

    return _Helpers(fill, poison, count_bad)


def _grid(n: int) -> tuple[int, int]:
    """Grid-stride launch shape for ``n`` elements: at most 4096 blocks of 256 threads."""
    return (max(1, min(4096, -(-n // 256))), 256)


def fill(d_src: Any) -> None:
    """Fill a device array with ``_common.element_value`` of each flat index."""
    helpers = _helpers()
    helpers.fill[_grid(d_src.size)](d_src.reshape(d_src.size))


def poison(d_dst: Any) -> None:
    """Overwrite an output with NaN (floats) or -1 before a launch."""

    bad_value = d_dst.dtype.type(np.nan if d_dst.dtype.kind == "f" else -1)
    _helpers().poison[_grid(d_dst.size)](d_dst.reshape(d_dst.size), bad_value)


def check(d_src: Any, d_dst: Any, label: dict[str, object]) -> bool:
    """Full device check plus exact host comparison of a few rows; prints MISMATCH lines."""

    bad = cuda.to_device(np.zeros(1, dtype=np.int64))
    _helpers().count_bad[_grid(d_src.size)](d_src, d_dst, bad)
    n_bad = int(bad.copy_to_host()[0])
    if n_bad:
        _common.emit("MISMATCH", **label, bad_elements=n_bad)
        return False
    rows, cols = d_dst.shape
    row_ids = _common.rows_to_check(rows)
    expected = _common.host_reference_rows(row_ids, cols)
    for k, r in enumerate(row_ids):
        got = d_dst[r].copy_to_host().astype(np.int64)
        if not np.array_equal(got, expected[k]):
            col = int(np.flatnonzero(got != expected[k])[0])
            _common.emit(
                "MISMATCH",
                **label,
                row=r,
                col=col,
                got=int(got[col]),
                expected=int(expected[k][col]),
            )
            return False
    return True


# ---------------------------------------------------------------------------- SASS


def kernel_sass(kernel: Any) -> tuple[str, _common.SassStats]:
    """SASS text and statistics of a kernel's (single) compiled overload.

    The cubin comes from ``overload.library.get_cubin()`` (the final, linked
    image, LTO included); ``cuobjdump -sass`` and ``-res-usage`` read it. Without
    ``cuobjdump`` the SASS comes from ``kernel.inspect_sass()`` (``nvdisasm``).
    """
    overload = next(iter(kernel.overloads.values()))
    stats = _common.SassStats(getattr(kernel.py_func, "__name__", "kernel"))
    text = ""
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is not None:
        cubin = overload.library.get_cubin()
        cubin = bytes(getattr(cubin, "code", cubin))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(cubin)
            text, parsed = _common.cubin_sass(cuobjdump, str(path))
        if parsed:
            # the kernel is the function with most instructions (helpers are inlined)
            stats = max(parsed.values(), key=lambda s: s.instructions)
    else:
        text = next(iter(kernel.inspect_sass().values()))
        parsed = _common.parse_sass(text)
        if parsed:
            stats = max(parsed.values(), key=lambda s: s.instructions)
    stats.regs = int(overload.regs_per_thread)
    stats.local_bytes = int(overload.local_mem_per_thread)
    return text, stats


def elapsed_ms(start: Any, end: Any) -> float:
    """Milliseconds between two CUDA events."""
    return float(start.elapsed_time(end))
