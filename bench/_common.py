# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the row-scan benchmarks: data, timing, checks and record lines.

Every benchmark script prints one line per measurement::

    RESULT impl=cub_cpp dtype=int32 rows=8192 cols=65536 config=b256_i8_... gbps=... ok=1

plus ``ERROR ...`` lines for configurations that could not run and ``MISMATCH ...``
lines for wrong results. ``bench/run_all.py`` collects these lines from every part.

The input data are the same everywhere: element ``i`` of the row-major array is
``element_value(i)``, a counter-based hash mapped to an integer in [-3, 3]. The
C++ benchmark (``cub_rowscan.cu``) implements the same function. Integer-valued
data keep float32 running sums exact (|sum| <= 3 * 65536 < 2**24), so every
implementation is checked by exact equality, for both dtypes.

This module imports only the standard library at import time; NumPy is imported
where it is used, so ``run_all.py --help`` works anywhere.
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "QUICK_SHAPES",
    "SEED",
    "SHAPES",
    "SassStats",
    "TimingEvent",
    "add_common_args",
    "element_value",
    "emit",
    "emit_error",
    "gbps",
    "host_reference_rows",
    "parse_record",
    "parse_res_usage",
    "parse_sass",
    "parse_shape",
    "rows_to_check",
    "time_launches",
]

# ---------------------------------------------------------------------------- shapes

#: (rows, cols) of the full benchmark: both are 2 GiB per int32/float32 array.
SHAPES: tuple[tuple[int, int], ...] = ((8192, 65536), (262144, 2048))
#: (rows, cols) of a ``--quick`` smoke run.
QUICK_SHAPES: tuple[tuple[int, int], ...] = ((64, 16384), (1024, 2048))


def parse_shape(text: str) -> tuple[int, int]:
    """Parse ``"ROWSxCOLS"`` into ``(rows, cols)``.

    Parameters
    ----------
    text : str
        For example ``"8192x65536"``.

    Returns
    -------
    tuple of int
        ``(rows, cols)``, both positive.

    Raises
    ------
    argparse.ArgumentTypeError
        If the text is not two positive integers joined by ``x``.
    """
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if match is None or int(match.group(1)) <= 0 or int(match.group(2)) <= 0:
        raise argparse.ArgumentTypeError(
            f"a shape must be ROWSxCOLS with positive integers (e.g. 8192x65536), got {text!r}"
        )
    return int(match.group(1)), int(match.group(2))


def add_common_args(parser: argparse.ArgumentParser, *, dtypes: Sequence[str]) -> None:
    """Add the options every benchmark script shares.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Parser to extend with ``--shape``, ``--dtype``, ``--reps``, ``--warmup``, ``--quick``.
    dtypes : sequence of str
        Dtype names the script supports (the default is all of them).
    """
    parser.add_argument(
        "--shape",
        dest="shapes",
        action="append",
        type=parse_shape,
        metavar="ROWSxCOLS",
        help="shape to run (repeatable); default: 8192x65536 and 262144x2048",
    )
    parser.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        choices=list(dtypes),
        help=f"dtype to run (repeatable); default: {', '.join(dtypes)}",
    )
    parser.add_argument("--reps", type=int, default=30, help="timed launches per config")
    parser.add_argument("--warmup", type=int, default=3, help="untimed launches before timing")
    parser.add_argument(
        "--quick", action="store_true", help="tiny shapes and few repetitions (smoke test)"
    )


def resolve_common_args(args: argparse.Namespace, dtypes: Sequence[str]) -> None:
    """Fill defaults that depend on ``--quick`` into ``args`` (in place)."""
    if args.shapes is None:
        args.shapes = list(QUICK_SHAPES if args.quick else SHAPES)
    if args.dtypes is None:
        args.dtypes = list(dtypes)
    if args.quick:
        args.reps = min(args.reps, 5)
        args.warmup = min(args.warmup, 1)
    if args.reps < 1 or args.warmup < 0:
        raise SystemExit(f"--reps must be >= 1 and --warmup >= 0, got {args.reps}, {args.warmup}")


# ---------------------------------------------------------------------------- data

SEED = 12345


def _mix32_int(x: int) -> int:
    x &= 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


#: the seed after mixing, folded into every element index
SEED_MIX = _mix32_int(SEED)


def element_value(index: Any) -> Any:
    """Value of element ``index`` of the benchmark input, an integer in [-3, 3].

    Works element-wise on Python ints, NumPy int64 arrays and torch int64 tensors,
    and compiles as a Numba CUDA device function: it uses only int64 operators,
    and the 32-bit multiplications are split into 16-bit halves so no product
    leaves the int64 range.

    Parameters
    ----------
    index : int or int64 array
        Row-major element index (``row * cols + col``); only its low 32 bits count.

    Returns
    -------
    int or int64 array
        ``mix32(index ^ mix32(SEED)) % 7 - 3``, as in ``cub_rowscan.cu``.
    """
    x = (index & 0xFFFFFFFF) ^ SEED_MIX
    x = x ^ (x >> 16)
    x = ((x * 0x352D) + (((x * 0x7FEB) & 0xFFFF) << 16)) & 0xFFFFFFFF
    x = x ^ (x >> 15)
    x = ((x * 0xA68B) + (((x * 0x846C) & 0xFFFF) << 16)) & 0xFFFFFFFF
    x = x ^ (x >> 16)
    return x % 7 - 3


def rows_to_check(rows: int) -> list[int]:
    """Rows whose full contents are compared on the host: first, second, middle, last."""
    return sorted({0, min(1, rows - 1), rows // 2, rows - 1})


def host_reference_rows(row_ids: Iterable[int], cols: int) -> Any:
    """Exact inclusive sums of the given rows, as an int64 NumPy array ``(len(row_ids), cols)``."""
    import numpy as np

    ids = np.asarray(list(row_ids), dtype=np.int64)
    index = ids[:, None] * cols + np.arange(cols, dtype=np.int64)[None, :]
    return np.cumsum(element_value(index), axis=1)


# ---------------------------------------------------------------------------- timing


class TimingEvent(Protocol):
    """A CUDA event as torch, CuPy and Numba expose it."""

    def record(self) -> Any: ...

    def synchronize(self) -> Any: ...


def time_launches(
    launch: Callable[[], object],
    new_event: Callable[[], TimingEvent],
    elapsed_ms: Callable[[TimingEvent, TimingEvent], float],
    *,
    reps: int,
    warmup: int,
) -> list[float]:
    """Time ``reps`` launches enqueued back to back; return each one's milliseconds.

    ``warmup`` untimed launches go first and are not waited for, so the device is
    busy when the first event is recorded. Then an event is recorded before every
    launch and one after the last; all of it is enqueued without waiting, so while
    the host is faster than the device (a launch costs microseconds, a kernel here
    about a millisecond) no interval includes host-side launch overhead.

    Parameters
    ----------
    launch : callable
        Enqueues one launch on the stream the events record on.
    new_event : callable
        Makes a timing-enabled event.
    elapsed_ms : callable
        Milliseconds between two recorded events.
    reps, warmup : int
        Timed and untimed launch counts.

    Returns
    -------
    list of float
        One duration per timed launch, in milliseconds.
    """
    for _ in range(warmup):
        launch()
    events = [new_event() for _ in range(reps + 1)]
    for i in range(reps):
        events[i].record()
        launch()
    events[reps].record()
    events[reps].synchronize()
    return [elapsed_ms(events[i], events[i + 1]) for i in range(reps)]


def gbps(rows: int, cols: int, itemsize: int, ms: float) -> float:
    """GB/s (1e9 bytes) counting every element read once and written once."""
    return 2.0 * rows * cols * itemsize / (ms * 1e-3) / 1e9


# ---------------------------------------------------------------------------- record lines

_TAGS = (
    "RESULT",
    "ERROR",
    "MISMATCH",
    "DEVICE",
    "KERNEL",
    "SASS",
    "FL_CHILD",
    "FIRST_LAUNCH",
    "LAUNCH",
    "SKIP",
)


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.6g}"
    return shlex.quote(str(value))


def emit(tag: str = "RESULT", /, **fields: object) -> None:
    """Print one record line (``TAG key=value ...``) and flush."""
    body = " ".join(f"{key}={_format_value(value)}" for key, value in fields.items())
    print(f"{tag} {body}", flush=True)


def emit_error(exc: BaseException, **fields: object) -> None:
    """Print an ``ERROR`` record for ``exc`` plus its traceback on stderr, loudly."""
    import traceback

    message = f"{type(exc).__name__}: {exc}".replace("\n", " | ")[:600]
    emit("ERROR", **fields, msg=message)
    traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.flush()


def parse_record(line: str) -> dict[str, str] | None:
    """Parse a record line into a dict (its tag under ``"tag"``), or None for other lines."""
    text = line.strip()
    tag, _, rest = text.partition(" ")
    if tag not in _TAGS:
        return None
    try:
        tokens = shlex.split(rest)
    except ValueError:
        tokens = rest.split()
    record = {"tag": tag}
    for token in tokens:
        key, sep, value = token.partition("=")
        if sep:
            record[key] = value
    return record


# ---------------------------------------------------------------------------- SASS


@dataclass
class SassStats:
    """Instruction counts of one kernel's SASS and its resource usage.

    Attributes
    ----------
    function : str
        Kernel symbol.
    instructions : int
        Instruction count.
    ldl, stl : int
        Local-memory loads and stores (spills, local arrays).
    lds, sts : int
        Shared-memory loads and stores.
    regs, local_bytes, stack_bytes, shared_bytes : int or None
        From ``cuobjdump -res-usage`` when available.
    """

    function: str
    instructions: int = 0
    ldl: int = 0
    stl: int = 0
    lds: int = 0
    sts: int = 0
    regs: int | None = None
    local_bytes: int | None = None
    stack_bytes: int | None = None
    shared_bytes: int | None = None


_FUNCTION_RE = re.compile(r"^\s*Function\s*:\s*(\S+)")
_NVDISASM_FUNCTION_RE = re.compile(r"^\s*\.text\.(\S+?):")
_INSTRUCTION_RE = re.compile(r"/\*[0-9a-fA-F]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)[.\s;]")
_RES_RE = re.compile(r"^\s*Function\s+(\S+?):?\s*$")
_RES_FIELD_RE = re.compile(r"(REG|STACK|SHARED|LOCAL):(\d+)")


def parse_sass(text: str) -> dict[str, SassStats]:
    """Count instructions per function in ``cuobjdump -sass`` or ``nvdisasm`` output."""
    stats: dict[str, SassStats] = {}
    current: SassStats | None = None
    for line in text.splitlines():
        header = _FUNCTION_RE.match(line) or _NVDISASM_FUNCTION_RE.match(line)
        if header is not None:
            current = stats.setdefault(header.group(1), SassStats(header.group(1)))
            continue
        match = _INSTRUCTION_RE.search(line)
        if match is None or current is None:
            continue
        opcode = match.group(1)
        current.instructions += 1
        if opcode in ("LDL", "STL", "LDS", "STS"):
            attr = opcode.lower()
            setattr(current, attr, getattr(current, attr) + 1)
    return stats


def parse_res_usage(text: str, stats: dict[str, SassStats]) -> None:
    """Add ``cuobjdump -res-usage`` figures to ``stats`` (in place)."""
    name: str | None = None
    for line in text.splitlines():
        header = _RES_RE.match(line)
        if header is not None:
            name = header.group(1)
            continue
        fields = dict(_RES_FIELD_RE.findall(line))
        if name is None or not fields:
            continue
        entry = stats.setdefault(name, SassStats(name))
        entry.regs = int(fields["REG"]) if "REG" in fields else entry.regs
        entry.stack_bytes = int(fields["STACK"]) if "STACK" in fields else entry.stack_bytes
        entry.shared_bytes = int(fields["SHARED"]) if "SHARED" in fields else entry.shared_bytes
        entry.local_bytes = int(fields["LOCAL"]) if "LOCAL" in fields else entry.local_bytes
        name = None


def cubin_sass(cuobjdump: str, cubin: str) -> tuple[str, dict[str, SassStats]]:
    """SASS text and per-function statistics of a cubin file, from ``cuobjdump``.

    ``cuobjdump -sass`` gives the instructions, ``-res-usage`` registers and
    memory; a failed disassembly gives empty text and no statistics.
    """
    sass, usage = (
        subprocess.run(
            [cuobjdump, flag, cubin], capture_output=True, text=True, check=False, timeout=300
        )
        for flag in ("-sass", "-res-usage")
    )
    if sass.returncode != 0:
        return "", {}
    stats = parse_sass(sass.stdout)
    parse_res_usage(usage.stdout, stats)
    return sass.stdout, stats


def median(values: Sequence[float]) -> float:
    """Median of a non-empty sequence."""
    return float(statistics.median(values))
