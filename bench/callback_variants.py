# SPDX-License-Identifier: Apache-2.0
"""Where a row scan's callback cost comes from: barrier variants, timed in interleaved rounds.

For each configuration, dtype and shape, nine kernels run the same tile loop:

- ``prefix_op``: the running total in a stateful prefix callback (``bench/rowscan.py``);
- ``prefix_op/auto_sync=False``: the same with no barrier after the scan whatever
  the toolchain (for ``warp_scans`` on CCCL 3.0 to 3.5 the library already omits it);
- ``hand_carried``: the total carried by hand, with its own barrier, which
  also separates one tile's scan from the next, so the scan has
  ``auto_sync=False`` (the kernel the benchmark compares with);
- ``hand_carried/auto_sync=True``: the same with the scan's trailing barrier too;
- ``hand_carried/cub_order``: the total carried by hand in the order of CUB's
  callback scan: an exclusive sum of the thread totals (which also gives every
  thread the tile's aggregate, so no barrier of its own), seeded by the carry,
  then each thread's items scanned from that seed, after the scan's barrier;
- ``hand_carried/late_prefix``: the total carried by hand with the callback
  protocol's data flow: thread 0 publishes the prefix, every thread reads it
  after a barrier and only then adds it to its items;
- ``prefix_op/no_launch_bounds`` and ``hand_carried/no_launch_bounds``: the
  two kernels compiled without declaring the block size (for a configuration
  that declares it: ``KernelConfig.launch_bounds``);
- ``hand_carried/6_blocks_per_sm``: the ``hand_carried`` kernel launched with
  enough dynamic shared memory that at most 6 blocks fit on a multiprocessor.

The kernels run in turn, ``--rounds`` times, each time ``--reps`` timed launches
after warm-up; the reported time is the median over every round's launches, so
drift in clock or temperature hits every variant alike. Every result is checked.
Prints one ``RESULT`` line per kernel and a Markdown table::

    python bench/callback_variants.py --config b256_i8_direct_warp_scans [--rounds 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from collections.abc import Callable
from typing import Any

import _common
import _rowscan_kernels as rk
from numba import cuda


def make_cub_order_kernel(
    cfg: rk.KernelConfig, dtype: str, carry_dtype: str, *, auto_sync: bool = True
) -> Any:
    """The hand-carried tile loop with the arithmetic order of CUB's callback scan."""
    from scan import block

    VALUE, CARRY, ITEMS, TILE, IO, ALGO = rk.kernel_constants(cfg, dtype, carry_dtype)
    ZERO = CARRY(0)
    AUTO_SYNC = auto_sync

    @rk.kernel_jit(cfg)  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum_cub_order(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        items = cuda.local.array(ITEMS, VALUE)
        aggregate = cuda.local.array(1, VALUE)
        carry = ZERO
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, items, algorithm=IO)
            total = items[0]
            for i in range(1, ITEMS):
                total = VALUE(total + items[i])
            exclusive = block.exclusive_sum(
                total, block_aggregate=aggregate, algorithm=ALGO, auto_sync=AUTO_SYNC
            )
            running = VALUE(VALUE(carry) + exclusive)
            for i in range(ITEMS):
                running = VALUE(running + items[i])
                items[i] = running
            carry += CARRY(aggregate[0])
            block.store(dst[row], base, items, algorithm=IO)

    return row_cumsum_cub_order


def make_late_prefix_kernel(
    cfg: rk.KernelConfig, dtype: str, carry_dtype: str, *, auto_sync: bool = False
) -> Any:
    """The hand-carried tile loop with the data flow of the callback protocol.

    As with ``prefix_op``, thread 0 publishes the tile's prefix in shared
    memory and every thread reads it after a barrier and only then adds it to
    its items; the scan's block aggregate (known to every thread) advances the
    carried total. Two slots alternate, as in the hand-carried kernel.
    """
    from scan import block

    VALUE, CARRY, ITEMS, TILE, IO, ALGO = rk.kernel_constants(cfg, dtype, carry_dtype)
    ZERO = CARRY(0)
    AUTO_SYNC = auto_sync

    @rk.kernel_jit(cfg)  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum_late_prefix(src: Any, dst: Any) -> None:
        row = cuda.blockIdx.x
        published = cuda.shared.array(2, VALUE)
        items = cuda.local.array(ITEMS, VALUE)
        aggregate = cuda.local.array(1, VALUE)
        carry = ZERO
        slot = 0
        for base in range(0, src.shape[1], TILE):
            block.load(src[row], base, items, algorithm=IO)
            block.inclusive_sum(
                items, items, block_aggregate=aggregate, algorithm=ALGO, auto_sync=AUTO_SYNC
            )
            if cuda.threadIdx.x == 0:
                published[slot] = VALUE(carry)
            carry += CARRY(aggregate[0])
            cuda.syncthreads()
            prefix = published[slot]
            for i in range(ITEMS):
                items[i] += prefix
            slot ^= 1
            block.store(dst[row], base, items, algorithm=IO)

    return row_cumsum_late_prefix


def _sass(kernel: Any) -> tuple[int, int]:
    """Registers per thread and LDL+STL count of a compiled kernel ((-1, -1) if unknown)."""
    try:
        _, stats = rk.kernel_sass(kernel)
    except Exception:  # the simulator has no SASS
        return -1, -1
    return (-1 if stats.regs is None else stats.regs), stats.ldl + stats.stl


def _blocks_limit_bytes(blocks: int) -> int:
    """Dynamic shared memory per block that leaves room for at most ``blocks`` blocks per SM."""
    try:
        per_sm = int(cuda.get_current_device().MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
    except Exception:  # the simulator: no limit to model
        return 0
    # a block also holds its static shared memory and 1 KiB the driver reserves
    return int(per_sm / (blocks + 0.5)) - 2048


def _launch(
    kernel: Any, rows: int, block: int, d_src: Any, d_dst: Any, shared_bytes: int = 0
) -> None:
    kernel[rows, block, 0, shared_bytes](d_src, d_dst)


def without_launch_bounds(factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory`` for the same configuration compiled without launch bounds."""

    def make(cfg: rk.KernelConfig, *args: Any, **kwargs: Any) -> Any:
        return factory(dataclasses.replace(cfg, launch_bounds=False), *args, **kwargs)

    return make


#: variants launched with dynamic shared memory that caps resident blocks per SM
SHARED_LIMITED = {"hand_carried/6_blocks_per_sm": 6}

#: (label, kernel factory, auto_sync)
VARIANTS: tuple[tuple[str, Callable[..., Any], bool], ...] = (
    ("prefix_op", rk.make_prefix_kernel, True),
    ("prefix_op/auto_sync=False", rk.make_prefix_kernel, False),
    ("hand_carried", rk.make_hand_carried_kernel, False),
    ("hand_carried/auto_sync=True", rk.make_hand_carried_kernel, True),
    ("hand_carried/cub_order", make_cub_order_kernel, True),
    ("hand_carried/late_prefix", make_late_prefix_kernel, False),
    ("prefix_op/no_launch_bounds", without_launch_bounds(rk.make_prefix_kernel), True),
    (
        "hand_carried/no_launch_bounds",
        without_launch_bounds(rk.make_hand_carried_kernel),
        False,
    ),
    ("hand_carried/6_blocks_per_sm", rk.make_hand_carried_kernel, False),
)


def main(argv: list[str] | None = None) -> int:
    """Time the variants; returns the number of wrong results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        dest="configs",
        action="append",
        choices=[c.name for c in rk.CONFIGS],
        help="configuration (repeatable); default: every one in bench/rowscan.py",
    )
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    _common.add_common_args(parser, dtypes=rk.DTYPES)
    args = parser.parse_args(argv)
    _common.resolve_common_args(args, rk.DTYPES)
    by_name = {c.name: c for c in rk.CONFIGS}
    configs = [by_name[n] for n in args.configs] if args.configs else list(rk.CONFIGS)
    failures = 0
    table: list[list[object]] = []
    for dtype in args.dtypes:
        state = rk.MAIN_STATE[dtype]
        for cfg in configs:
            kernels = [
                (label, factory(cfg, dtype, state, auto_sync=sync))
                for label, factory, sync in VARIANTS
            ]
            for rows, cols in args.shapes:
                d_src = cuda.device_array((rows, cols), dtype=dtype)
                d_dst = cuda.device_array((rows, cols), dtype=dtype)
                rk.fill(d_src)
                times: dict[str, list[float]] = {label: [] for label, _ in kernels}
                ok: dict[str, bool] = {label: True for label, _ in kernels}
                for _ in range(args.rounds):
                    for label, kernel in kernels:
                        if not ok[label]:
                            continue
                        shared = (
                            _blocks_limit_bytes(SHARED_LIMITED[label])
                            if label in SHARED_LIMITED
                            else 0
                        )
                        launch = functools.partial(
                            _launch, kernel, rows, cfg.block, d_src, d_dst, shared
                        )
                        info = {"impl": label, "dtype": dtype, "config": cfg.name}
                        rk.poison(d_dst)
                        try:
                            times[label] += _common.time_launches(
                                launch,
                                cuda.event,
                                rk.elapsed_ms,
                                reps=args.reps,
                                warmup=args.warmup,
                            )
                        except Exception as exc:
                            _common.emit_error(exc, **info)
                            ok[label] = False
                            continue
                        ok[label] = rk.check(d_src, d_dst, info) and ok[label]
                base = _common.median(times["hand_carried"]) if times["hand_carried"] else 1.0
                for label, kernel in kernels:
                    if not times[label]:
                        failures += 1
                        continue
                    med = _common.median(times[label])
                    regs, spills = _sass(kernel)
                    _common.emit(
                        "RESULT",
                        impl=label,
                        dtype=dtype,
                        rows=rows,
                        cols=cols,
                        config=cfg.name,
                        state=state,
                        median_ms=med,
                        gbps=_common.gbps(rows, cols, d_src.dtype.itemsize, med),
                        vs_hand_carried=med / base,
                        registers=regs,
                        ldl_stl=spills,
                        reps=len(times[label]),
                        ok=ok[label],
                    )
                    shape = f"{rows}x{cols}"
                    timing = [f"{med:.4f}", f"{med / base:.3f}"]
                    table.append([cfg.name, dtype, shape, label, regs, spills, *timing])
                    failures += not ok[label]
                del d_src, d_dst
    print()
    print("| config | dtype | shape | kernel | registers | LDL+STL | median ms | / hand_carried |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in table:
        print("| " + " | ".join(str(v) for v in row) + " |")
    return failures


if __name__ == "__main__":
    sys.exit(main())
