# SPDX-License-Identifier: Apache-2.0
"""Block scans over record values: cases that run unchanged in the simulator and on a GPU.

The value is a pair record ``(a, b)`` of float32 and the operator composes
affine maps, ``(x.a * y.a, y.a * x.b + y.b)``: associative, not commutative,
with identity ``(1, 0)``. Inputs take ``a`` from {1, -1} and ``b`` from small
integers, so every result is exact in float32 whatever order CUB combines in.

A case names the entry point (``inclusive_scan``, ``exclusive_scan``, or
``scan`` with ``mode=``), the payload (a record scalar or a local array of
records moved with ``block.load``/``block.store``), the algorithm, the block
shape, the prefix callback (none, stateful carrying the running map across
tiles, or stateless seeding every tile with a constant) and the temp storage.
The kernel is generated source with every option a closure constant.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import block

__all__ = ["PAIR", "RecordCase", "combine", "record_cases", "reference", "run"]

PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
SEED = (1.0, 5.0)  # the stateless callback's prefix for every tile


def combine(x: Any, y: Any) -> tuple[Any, Any]:
    """Compose two affine maps (the selective-scan operator)."""
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateful(PAIR, name="carry_map")
def carry_map(state: Any, block_aggregate: Any) -> tuple[Any, Any]:
    prefix = (state[0].a, state[0].b)
    state[0].a = prefix[0] * block_aggregate.a
    state[0].b = block_aggregate.a * prefix[1] + block_aggregate.b
    return prefix


@statefn.stateless
def constant_seed(block_aggregate: Any) -> tuple[float, float]:
    return (1.0, 5.0)


@dataclass(frozen=True)
class RecordCase:
    """One record scan case (see the module docstring)."""

    entry: str = "inclusive_scan"  # or exclusive_scan, scan_inclusive, scan_exclusive
    scalar: bool = False
    algorithm: str = "raking"
    block: tuple[int, int, int] = (64, 1, 1)
    prefix: str = "stateful"  # or "none", "stateless"
    temp: str = "implicit"  # or "caller"
    ipt: int = 3
    tiles: int = 3
    short: int = 5  # items missing from the last tile (a guarded partial tile)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def items(self) -> int:
        return 1 if self.scalar else self.ipt

    @property
    def length(self) -> int:
        return self.tiles * self.threads * self.items - (0 if self.scalar else self.short)

    @property
    def mode(self) -> str:
        return "exclusive" if "exclusive" in self.entry else "inclusive"

    def __str__(self) -> str:
        shape = "x".join(str(d) for d in self.block if d > 1)
        payload = "scalar" if self.scalar else f"ipt{self.ipt}"
        return f"{self.entry}-{payload}-{self.algorithm}-{shape}-{self.prefix}-{self.temp}"


def record_cases() -> list[RecordCase]:
    """Every entry point x payload x algorithm, plus 2-D/3-D blocks and caller temp storage."""
    out = [
        RecordCase(entry=e, scalar=s, algorithm=a, prefix=p)
        for e, s, a in itertools.product(
            ("inclusive_scan", "exclusive_scan", "scan_inclusive", "scan_exclusive"),
            (False, True),
            ("raking", "raking_memoize", "warp_scans"),
        )
        for p in ("stateful",)
    ]
    out += [
        RecordCase(prefix="none"),
        RecordCase(entry="exclusive_scan", prefix="none", scalar=True),
        RecordCase(prefix="stateless"),
        RecordCase(block=(8, 4, 1), algorithm="warp_scans"),
        RecordCase(block=(4, 4, 2), scalar=True),
        RecordCase(block=(48, 1, 1), entry="exclusive_scan"),
        RecordCase(temp="caller"),
        RecordCase(temp="caller", scalar=True, algorithm="warp_scans", entry="exclusive_scan"),
    ]
    return out


def _call(case: RecordCase, value: str, out: str) -> str:
    name = "scan" if case.entry.startswith("scan_") else case.entry
    args = [value] + ([out] if out else [])
    kwargs = ["scan_op=combine"]
    if name == "scan":
        kwargs.append(f"mode={case.mode!r}")
    if case.prefix == "stateful":
        kwargs += ["prefix_op=carry_map", "prefix_state=state"]
    elif case.prefix == "stateless":
        kwargs.append("prefix_op=constant_seed")
    elif case.mode == "exclusive":
        kwargs.append("initial_value=(1.0, 0.0)")
    kwargs.append(f"algorithm={case.algorithm!r}")
    if case.temp == "caller":
        kwargs.append("temp_storage=temp")
    return f"block.{name}({', '.join(args + kwargs)})"


def kernel(case: RecordCase, temp: tuple[int, int] = (16, 16)) -> Any:
    """The case's kernel: one block per row, tile after tile."""
    bx, by, _ = case.block
    lines = [
        "def factory(TEMP_SIZE, TEMP_ALIGN):",
        "    @cuda.jit",
        "    def kernel(src, dst):",
        "        row = cuda.blockIdx.x",
        f"        rank = cuda.threadIdx.x + cuda.threadIdx.y * {bx} + cuda.threadIdx.z * {bx * by}",
        "        state = cuda.local.array(1, PAIR)",
        "        state[0].a = 1.0",
        "        state[0].b = 0.0",
    ]
    if case.temp == "caller":
        lines.append("        temp = cuda.shared.array(TEMP_SIZE, np.uint8, alignment=TEMP_ALIGN)")
    step = case.threads * case.items
    if case.scalar:
        lines += [
            f"        for base in range(0, src.shape[1], {step}):",
            "            r = " + _call(case, "src[row, base + rank]", ""),
            "            dst[row, base + rank] = r",
        ]
    else:
        lines += [
            f"        items = cuda.local.array({case.ipt}, PAIR)",
            f"        for base in range(0, src.shape[1], {step}):",
            "            block.load(src[row], base, items, oob_default=(1.0, 0.0))",
            "            " + _call(case, "items", "items"),
            "            block.store(dst[row], base, items)",
        ]
    lines.append("    return kernel")
    namespace: dict[str, Any] = {
        "cuda": cuda,
        "np": np,
        "block": block,
        "PAIR": PAIR,
        "combine": combine,
        "carry_map": carry_map,
        "constant_seed": constant_seed,
    }
    exec(compile("\n".join(lines), f"<record case {case}>", "exec"), namespace)
    return namespace["factory"](*temp)


def inputs(case: RecordCase, rows: int = 2, seed: int = 0) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    src = np.zeros((rows, case.length), PAIR)
    src["a"] = rng.choice(np.array([1.0, -1.0], np.float32), size=src.shape)
    src["b"] = rng.integers(-3, 4, size=src.shape).astype(np.float32)
    return src


def _scan_row(a: Any, b: Any, seed: tuple[float, float] | None, exclusive: bool) -> Any:
    out_a = np.empty_like(a)
    out_b = np.empty_like(b)
    acc = seed
    for i in range(len(a)):
        if exclusive:
            assert acc is not None
            out_a[i], out_b[i] = acc
        acc = (a[i], b[i]) if acc is None else (acc[0] * a[i], a[i] * acc[1] + b[i])
        if not exclusive:
            out_a[i], out_b[i] = acc
    return out_a, out_b


def reference(case: RecordCase, src: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """CUB's results written out: the stateful callback makes each row one scan."""
    out = np.zeros_like(src)
    exclusive = case.mode == "exclusive"
    tile = case.threads * case.items
    for r in range(src.shape[0]):
        a = src["a"][r].astype(np.float64)
        b = src["b"][r].astype(np.float64)
        if case.prefix == "stateful":
            ra, rb = _scan_row(a, b, (1.0, 0.0), exclusive)
        else:
            ra, rb = np.empty_like(a), np.empty_like(b)
            seed = SEED if case.prefix == "stateless" else ((1.0, 0.0) if exclusive else None)
            for t in range(0, len(a), tile):
                ra[t : t + tile], rb[t : t + tile] = _scan_row(
                    a[t : t + tile], b[t : t + tile], seed, exclusive
                )
        out["a"][r], out["b"][r] = ra, rb
    return out


def run(case: RecordCase, rows: int = 2) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(result, reference) of the case."""
    temp = (16, 16)
    if case.temp == "caller":
        layout = block.temp_storage(
            "scan", PAIR, case.block, case.items, algorithm=case.algorithm, cc=(9, 0)
        )
        temp = (layout.size, layout.alignment)
    k = kernel(case, temp)
    src = inputs(case, rows)
    dst = np.zeros_like(src)
    k[rows, case.block](src, dst)
    return dst, reference(case, src)
