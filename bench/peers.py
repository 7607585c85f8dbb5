# SPDX-License-Identifier: Apache-2.0
"""What a user would call instead for a row-wise running total, and a copy for scale.

``basic``: a device-to-device copy (torch ``Tensor.copy_``: the bandwidth
ceiling), ``torch.cumsum(dim=1)`` and ``cupy.cumsum(axis=1)`` (on the same
memory, through ``__cuda_array_interface__``). ``compile``:
``torch.compile(torch.cumsum)`` (Inductor's scan lowering), kept apart because
its compiles are slow. Outputs keep the input dtype (``dtype=`` is passed so
int32 is not widened to int64) and every result is checked.

Usage: ``python bench/peers.py [--which basic|compile|all] [--dtype int32] [--shape RxC] ...``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import _common

DTYPES = ("int32", "float32")


def _cupy_time_ms(launch: Callable[[], object], *, reps: int, warmup: int) -> list[float]:
    import cupy as cp  # type: ignore[import-not-found, unused-ignore]

    return _common.time_launches(
        launch,
        lambda: cp.cuda.Event(),
        lambda a, b: float(cp.cuda.get_elapsed_time(a, b)),
        reps=reps,
        warmup=warmup,
    )


def _measure(
    label: dict[str, object],
    launch: Callable[[], object],
    check: Callable[[], bool],
    poison: Callable[[], object],
    timer: Callable[..., list[float]],
    args: argparse.Namespace,
    itemsize: int,
) -> bool:
    poison()
    launch()
    ok = check()
    times = timer(launch, reps=args.reps, warmup=args.warmup)
    ok = check() and ok
    med = _common.median(times)
    rows = int(str(label["rows"]))
    cols = int(str(label["cols"]))
    _common.emit(
        "RESULT",
        **label,
        median_ms=med,
        min_ms=min(times),
        gbps=_common.gbps(rows, cols, itemsize, med),
        ok=ok,
        reps=len(times),
    )
    return ok


def run_basic(args: argparse.Namespace, x: Any, out: Any, dtype: str) -> int:
    """Copy, torch.cumsum and cupy.cumsum on one input; return the failure count."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    from _torch_util import check_rowwise_cumsum, time_ms

    rows, cols = x.shape
    itemsize = x.element_size()
    failures = 0

    def poison() -> None:
        out.fill_(float("nan") if out.is_floating_point() else -1)

    def base(impl: str, config: str) -> dict[str, object]:
        return {"impl": impl, "dtype": dtype, "rows": rows, "cols": cols, "config": config}

    cases: list[tuple[dict[str, object], Callable[[], object], Callable[[], bool], Any]] = []
    copy_label = base("copy", "torch_copy_")
    cases.append(
        (
            copy_label,
            lambda: out.copy_(x),
            lambda: _equal_or_report(out, x, copy_label),
            time_ms,
        )
    )
    cumsum_label = base("torch.cumsum", "dim1")
    cases.append(
        (
            cumsum_label,
            lambda: torch.cumsum(x, dim=1, dtype=x.dtype, out=out),
            lambda: check_rowwise_cumsum(x, out, cumsum_label),
            time_ms,
        )
    )
    try:
        import cupy as cp  # type: ignore[import-not-found, unused-ignore]

        xc = cp.asarray(x)
        oc = cp.asarray(out)
        cupy_label = base("cupy.cumsum", "axis1")
        cases.append(
            (
                cupy_label,
                lambda: cp.cumsum(xc, axis=1, dtype=xc.dtype, out=oc),
                lambda: _cupy_sync() and check_rowwise_cumsum(x, out, cupy_label),
                _cupy_time_ms,
            )
        )
    except Exception as exc:
        failures += 1
        _common.emit_error(exc, **base("cupy.cumsum", "axis1"))

    for label, launch, check, timer in cases:
        try:
            failures += 0 if _measure(label, launch, check, poison, timer, args, itemsize) else 1
        except Exception as exc:
            failures += 1
            _common.emit_error(exc, **label)
    return failures


def _cupy_sync() -> bool:
    import cupy as cp  # type: ignore[import-not-found, unused-ignore]

    cp.cuda.Device().synchronize()
    return True


def _equal_or_report(out: Any, x: Any, label: dict[str, object]) -> bool:
    import torch  # type: ignore[import-not-found, unused-ignore]

    torch.cuda.synchronize()
    if bool(torch.equal(out, x)):
        return True
    _common.emit("MISMATCH", **label, msg="copy differs from its source")
    return False


def run_compile(args: argparse.Namespace, x: Any, dtype: str) -> int:
    """torch.compile(torch.cumsum) on one input; return the failure count."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    from _torch_util import check_rowwise_cumsum, time_ms

    rows, cols = x.shape
    label: dict[str, object] = {
        "impl": "torch.compile",
        "dtype": dtype,
        "rows": rows,
        "cols": cols,
        "config": "inductor_default",
    }
    try:

        def cumsum_rows(t: Any) -> Any:
            return torch.cumsum(t, dim=1, dtype=t.dtype)

        compiled = torch.compile(cumsum_rows, dynamic=False, fullgraph=True)
        result: list[Any] = [None]

        def launch() -> None:
            result[0] = compiled(x)

        ok = _measure(
            label,
            launch,
            lambda: check_rowwise_cumsum(x, result[0], label),
            lambda: None,
            time_ms,
            args,
            x.element_size(),
        )
        result[0] = None
        return 0 if ok else 1
    except Exception as exc:
        _common.emit_error(exc, **label)
        return 1


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    _common.add_common_args(parser, dtypes=DTYPES)
    parser.add_argument("--which", choices=("basic", "compile", "all"), default="all")
    args = parser.parse_args(argv)
    _common.resolve_common_args(args, DTYPES)

    import torch  # type: ignore[import-not-found, unused-ignore]
    from _torch_util import make_input

    _common.emit("DEVICE", name=torch.cuda.get_device_name(), torch=torch.__version__)
    failures = 0
    for dtype in args.dtypes:
        for rows, cols in args.shapes:
            x = make_input(rows, cols, dtype)
            if args.which in ("basic", "all"):
                out = torch.empty_like(x)
                failures += run_basic(args, x, out, dtype)
                del out
            if args.which in ("compile", "all"):
                failures += run_compile(args, x, dtype)
            del x
            torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
