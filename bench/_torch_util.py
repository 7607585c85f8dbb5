# SPDX-License-Identifier: Apache-2.0
"""torch helpers shared by the Triton and peer benchmarks: data, checks, timing.

Imported only by scripts that run with torch available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import _common
import numpy as np
import torch  # type: ignore[import-not-found, unused-ignore]

__all__ = ["check_rowwise_cumsum", "make_input", "time_ms", "torch_dtype"]

_CHUNK = 1 << 26


def torch_dtype(name: str) -> Any:
    """torch dtype for a dtype name (``"int32"``, ``"float32"``)."""
    return {"int32": torch.int32, "float32": torch.float32}[name]


def make_input(rows: int, cols: int, dtype: str) -> Any:
    """The benchmark input (``_common.element_value`` of each index) as a CUDA tensor."""
    out = torch.empty((rows, cols), dtype=torch_dtype(dtype), device="cuda")
    flat = out.view(-1)
    n = flat.numel()
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        index = torch.arange(start, stop, dtype=torch.int64, device="cuda")
        flat[start:stop] = _common.element_value(index).to(out.dtype)
    torch.cuda.synchronize()
    return out


def check_rowwise_cumsum(src: Any, out: Any, label: dict[str, object]) -> bool:
    """Check ``out`` is the row-wise inclusive sum of ``src``; print a MISMATCH record if not.

    Every element is checked on the device (``out[:, 0] == src[:, 0]`` and
    ``out[:, c] - out[:, c - 1] == src[:, c]``, exact for the integer-valued input),
    and a few full rows are compared on the host with an exact NumPy reference.
    """
    torch.cuda.synchronize()
    rows, cols = src.shape
    if tuple(out.shape) != (rows, cols) or out.dtype != src.dtype:
        _common.emit(
            "MISMATCH",
            **label,
            msg=f"expected a {src.dtype} output of shape {(rows, cols)}, "
            f"got {out.dtype} of shape {tuple(out.shape)}",
        )
        return False
    step = max(1, _CHUNK // cols)
    bad = 0
    for r0 in range(0, rows, step):
        s = src[r0 : r0 + step]
        o = out[r0 : r0 + step]
        bad += int((o[:, 0] != s[:, 0]).sum().item())
        if cols > 1:
            bad += int(((o[:, 1:] - o[:, :-1]) != s[:, 1:]).sum().item())
    if bad:
        _common.emit("MISMATCH", **label, bad_elements=bad)
        return False
    row_ids = _common.rows_to_check(rows)
    expected = _common.host_reference_rows(row_ids, cols)
    got = out[row_ids].cpu().numpy().astype(np.int64)
    if not np.array_equal(got, expected):
        k, col = (int(v[0]) for v in np.nonzero(got != expected))
        _common.emit(
            "MISMATCH",
            **label,
            row=row_ids[k],
            col=col,
            got=int(got[k, col]),
            expected=int(expected[k, col]),
        )
        return False
    return True


def _torch_event() -> Any:
    return torch.cuda.Event(enable_timing=True)


def _torch_elapsed(a: Any, b: Any) -> float:
    return float(a.elapsed_time(b))


def time_ms(launch: Callable[[], object], *, reps: int, warmup: int) -> list[float]:
    """Per-launch milliseconds of ``launch`` on torch's current stream."""
    return _common.time_launches(launch, _torch_event, _torch_elapsed, reps=reps, warmup=warmup)
