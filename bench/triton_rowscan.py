# SPDX-License-Identifier: Apache-2.0
"""Row-wise inclusive sum in Triton, the prefix carried by hand across tiles.

One program per row walks the row in tiles of ``BLOCK`` elements: ``tl.cumsum``
scans a tile, the carried total of the earlier tiles is added, and the tile's
``tl.sum`` is added to the carry. This is what a Triton user writes today for a
long-row running total. Several ``BLOCK`` / ``num_warps`` configurations run for
each shape and dtype; each result is checked (see ``_torch_util``).

Usage: ``python bench/triton_rowscan.py [--dtype int32] [--shape RxC] [--reps N] [--quick]``
"""

import argparse
import functools
import sys
from typing import Any

import _common

DTYPES = ("int32", "float32")
#: (BLOCK, num_warps) configurations; those with BLOCK > cols are skipped
CONFIGS: tuple[tuple[int, int], ...] = ((1024, 4), (1024, 8), (2048, 4), (2048, 8), (4096, 8))


def _build_kernel() -> Any:
    import triton  # type: ignore[import-not-found, unused-ignore]
    import triton.language as tl  # type: ignore[import-not-found, unused-ignore]

    @triton.jit  # type: ignore[untyped-decorator, unused-ignore]
    def row_cumsum(src, dst, cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):  # type: ignore[no-untyped-def, unused-ignore]
        row = tl.program_id(0).to(tl.int64)
        row_src = src + row * cols
        row_dst = dst + row * cols
        carry = tl.zeros((), dtype=dst.dtype.element_ty)
        for start in range(0, cols, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            if EVEN:
                x = tl.load(row_src + offs)
            else:
                x = tl.load(row_src + offs, mask=offs < cols, other=0)
            y = tl.cumsum(x, axis=0) + carry
            if EVEN:
                tl.store(row_dst + offs, y)
            else:
                tl.store(row_dst + offs, y, mask=offs < cols)
            carry += tl.sum(x, axis=0).to(carry.dtype)

    return row_cumsum


def _run_shape(kernel: Any, args: argparse.Namespace, dtype: str, rows: int, cols: int) -> int:
    """Time every (BLOCK, num_warps) configuration on one input; return the failure count."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    from _torch_util import check_rowwise_cumsum, make_input, time_ms

    x = make_input(rows, cols, dtype)
    out = torch.empty_like(x)
    failures = 0
    for block, warps in CONFIGS:
        if block > max(cols, 1024):
            continue
        label: dict[str, object] = {
            "impl": "triton",
            "dtype": dtype,
            "rows": rows,
            "cols": cols,
            "config": f"BLOCK{block}_w{warps}",
        }
        launch = functools.partial(
            _launch, kernel, x, out, BLOCK=block, EVEN=cols % block == 0, num_warps=warps
        )
        try:
            out.fill_(float("nan") if out.is_floating_point() else -1)
            launch()  # compiles
            ok = check_rowwise_cumsum(x, out, label)
            times = time_ms(launch, reps=args.reps, warmup=args.warmup)
            ok = check_rowwise_cumsum(x, out, label) and ok
            med = _common.median(times)
            _common.emit(
                "RESULT",
                **label,
                block=block,
                warps=warps,
                median_ms=med,
                min_ms=min(times),
                gbps=_common.gbps(rows, cols, x.element_size(), med),
                ok=ok,
                reps=len(times),
            )
            failures += 0 if ok else 1
        except Exception as exc:
            failures += 1
            _common.emit_error(exc, **label)
    return failures


def _launch(kernel: Any, x: Any, out: Any, **meta: Any) -> None:
    rows, cols = x.shape
    kernel[(rows,)](x, out, cols, **meta)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    _common.add_common_args(parser, dtypes=DTYPES)
    args = parser.parse_args(argv)
    _common.resolve_common_args(args, DTYPES)

    import torch  # type: ignore[import-not-found, unused-ignore]
    import triton  # type: ignore[import-not-found, unused-ignore]

    _common.emit(
        "DEVICE",
        name=torch.cuda.get_device_name(),
        triton=triton.__version__,
        torch=torch.__version__,
    )
    kernel = _build_kernel()
    failures = 0
    for dtype in args.dtypes:
        for rows, cols in args.shapes:
            failures += _run_shape(kernel, args, dtype, rows, cols)
            torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
