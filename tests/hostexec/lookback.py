# SPDX-License-Identifier: Apache-2.0
"""Host kernels of cross-block scans (``prefix_op=scan.lookback``) over a real tile status.

A :class:`LookbackCase` scans ``rows`` sequences of ``tiles`` tiles, one block
a tile, as tests/fuzz/test_fuzz_lookback.py does on a GPU (forward, or
``reverse=True`` with tile 0 the sequence's last), over a status that the
generated status unit (:func:`scan._tile_status.status_unit`) initialises:
the harness fills the status memory with random bytes, as fresh device
memory may hold anything, launches the unit's ``_init`` kernel with the
library's grid (:func:`scan._tile_status.init_launch`) on a row size from
:func:`scan._lookback.status_row_bytes`, then the scan. All the blocks run
at once, interleaved at every wait (a seed picks the order), so tiles find
earlier tiles invalid, partial or inclusive.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Any

import numpy as np
from cases import block_cases as bc

import scan
from scan._lookback import STATUS_SLACK, STATUS_UNIT, status_dtype, status_row_bytes
from scan._plan import ArrayFact, ScalarFact, TupleFact
from scan._primitives.block_scan._plan import plan_scan
from scan._primitives.tile_io._plan import plan_tile_io
from scan._tile_status import init_launch, status_unit

from . import corpus
from .families import RECORDS, _apply, _tuple, _values
from .program import Arg, Program, call, run, value_decls
from .toolchain import Builder

__all__ = ["LookbackCase", "lookback_program", "lookback_reference", "run_lookback"]

_OPS = {"user_add": bc.user_add, "compose": corpus.compose}


@dataclass(frozen=True)
class LookbackCase:
    """One cross-block scan: the values, operator, mode, seed, tiles and status shape."""

    dtype: str = "int32"  # or a record of families.RECORDS
    op: str = "+"  # "+", "max", "min", "user_add"; "compose" for records
    mode: str = "inclusive"
    seeded: bool = False
    block: tuple[int, int, int] = (64, 1, 1)
    items_per_thread: int = 4
    tiles: int = 3
    short: int = 0
    rows: int = 1
    two_d: bool = False  # a (rows, tiles) status, tile=blockIdx.x
    reverse: bool = False
    algorithm: str | None = None
    deterministic: bool = False  # scan.tile_status(..., deterministic=True)

    @property
    def value_dtype(self) -> np.dtype[Any]:
        return RECORDS.get(self.dtype) or np.dtype(self.dtype)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def tile_items(self) -> int:
        return self.threads * self.items_per_thread

    @property
    def length(self) -> int:
        return max(1, self.tiles * self.tile_items - self.short)

    def key(self) -> LookbackCase:
        """The harness key: tiles, rows and the row's length are run-time values."""
        rows = 2 if self.two_d else 1
        return LookbackCase(**{**self.__dict__, "tiles": 1, "short": 0, "rows": rows})

    def identity(self) -> Any:
        """The operator's identity: what a partial tile's padding holds."""
        dtype = self.value_dtype
        if self.op == "compose":
            return (1, 0)
        if self.op == "max":
            return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
        if self.op == "min":
            return np.inf if dtype.kind == "f" else np.iinfo(dtype).max
        return 0

    def seed(self) -> Any:
        """The initial value of a seeded scan (records: the identity map)."""
        return (1, 0) if self.op == "compose" else 3


def _plans(case: LookbackCase) -> tuple[Any, Any, Any]:
    dtype = case.value_dtype
    record = dtype.names is not None
    operand: Any = TupleFact((np.float64, np.float64)) if record else ScalarFact(dtype)
    items = ArrayFact(dtype, 1, case.items_per_thread)
    io: dict[str, Any] = {"array": ArrayFact(dtype, 1), "items": items, "temp_storage": None}
    load = plan_tile_io(
        function="load", algorithm=None, oob_default=operand, block=case.block, **io
    )
    store = plan_tile_io(function="store", algorithm=None, oob_default=None, block=case.block, **io)
    scan_plan = plan_scan(
        function="scan",
        values=items,
        out=None,
        mode=case.mode,
        scan_op=_OPS.get(case.op, case.op),
        initial_value=operand if case.seeded else None,
        prefix_op=scan.lookback,
        prefix_state=ArrayFact(status_dtype(dtype, deterministic=case.deterministic), 1),
        block_aggregate=None,
        algorithm=case.algorithm,
        temp_storage=None,
        block=case.block,
        reverse=case.reverse,
        tile=ScalarFact(np.int32) if case.two_d else None,
    )
    return load, scan_plan, store


def lookback_program(case: LookbackCase) -> Program:
    """The harness: the status unit's init kernel, then the scan kernel."""
    load, scan_plan, store = _plans(case)
    name, status_source = status_unit(case.value_dtype)
    program = Program(f"lookback {case}", [load, scan_plan, store], extra=[status_source])
    dtype = case.value_dtype
    size = dtype.itemsize
    offset = Arg("base")
    scan_args: dict[str, Any] = {
        "values": Arg("items", "IPT"),
        "prefix_state": Arg("status_row", f"a.row_bytes / {STATUS_UNIT}", STATUS_UNIT),
    }
    if case.seeded:
        scan_args["initial_value"] = Arg("a.init[0]")
    if case.two_d:
        scan_args["tile"] = Arg("t")
    body = [
        "void init_kernel(void* p) {",
        "  Args& a = *static_cast<Args*>(p);",
        f"  {name}_init(a.status, a.row_bytes);",
        "}",
        "void kernel(void* p) {",
        "  Args& a = *static_cast<Args*>(p);",
        f"  const long long row = {'blockIdx.y' if case.two_d else '0'};",
        "  const long long t = blockIdx.x;",
        f"  const long long base = {'(a.last - t)' if case.reverse else 't'} * TILE;",
        "  value_t items[IPT];",
        "  value_t* src_row = a.src + row * a.length;",
        "  value_t* dst_row = a.dst + row * a.length;",
        "  unsigned char* status_row = a.status + row * a.row_bytes;",
        "  for (int i = 0; i < IPT; ++i) items[i] = a.oob[0];",
        "  "
        + call(
            load,
            program.symbol(load),
            {
                "src": Arg("src_row", "a.length", size),
                "offset": offset,
                "items": Arg("items", "IPT"),
                "oob_default": Arg("a.oob[0]"),
            },
        ),
        "  " + call(scan_plan, program.symbol(scan_plan), scan_args),
        "  "
        + call(
            store,
            program.symbol(store),
            {
                "dst": Arg("dst_row", "a.length", size),
                "offset": offset,
                "items": Arg("items", "IPT"),
            },
        ),
        "}",
    ]
    launches = (
        '  if (h.param("layout") == 1) {\n'
        f'    std::printf("%llu %u\\n", {name}_tile_bytes, {name}_padding);\n'
        "    return 0;\n  }\n"
        "  Args a;\n"
        '  a.src = h.buffer<value_t>("src");\n'
        '  a.dst = h.buffer<value_t>("dst");\n'
        '  a.status = h.buffer<unsigned char>("status");\n'
        '  a.oob = h.buffer<value_t>("oob");\n'
        '  a.init = h.buffer<value_t>("init");\n'
        '  a.length = h.param("length");\n'
        '  a.row_bytes = h.param("row_bytes");\n'
        '  a.last = h.param("tiles") - 1;\n'
        "  ::hx::Launch init;\n"
        '  init.grid = dim3{static_cast<unsigned>(h.param("init_x")), '
        'static_cast<unsigned>(h.param("init_y")), 1};\n'
        '  init.block = dim3{static_cast<unsigned>(h.param("init_threads")), 1, 1};\n'
        "  init.kernel = init_kernel;\n"
        "  init.args = &a;\n"
        '  init.seed = static_cast<uint64_t>(h.param("seed"));\n'
        "  ::hx::launch(init);\n"
        "  ::hx::Launch launch;\n"
        '  launch.grid = dim3{static_cast<unsigned>(h.param("tiles")), '
        'static_cast<unsigned>(h.param("grid_y")), 1};\n'
        f"  launch.block = dim3{{{case.block[0]}, {case.block[1]}, {case.block[2]}}};\n"
        "  launch.kernel = kernel;\n"
        "  launch.args = &a;\n"
        '  launch.seed = static_cast<uint64_t>(h.param("seed"));\n'
        "  ::hx::launch(launch);\n"
    )
    program.driver_parts = [
        f'extern "C" const unsigned long long {name}_tile_bytes;',
        f'extern "C" const unsigned {name}_padding;',
        f'extern "C" void {name}_init(void* status, long long row_bytes);',
        "namespace hostexec_driver {",
        value_decls(dtype),
        f"constexpr int IPT = {case.items_per_thread};",
        f"constexpr long long TILE = {case.threads} * IPT;",
        "struct Args {",
        "  value_t* src; value_t* dst; unsigned char* status; value_t* oob; value_t* init;",
        "  long long length, row_bytes, last;",
        "};",
        *body,
        "}  // namespace hostexec_driver",
        "int main(int argc, char** argv) {",
        "  using namespace hostexec_driver;",
        "  ::hx::Harness h(argc, argv);",
        launches + "  h.finish();",
        "  return 0;",
        "}",
    ]
    return program


_layouts: dict[str, tuple[int, int]] = {}


def status_layout(builder: Builder, program: Program) -> tuple[int, int]:
    """(bytes a tile, padding tiles) of the host's ``cub::ScanTileState``, from the harness."""
    source = program.source()
    if source not in _layouts:
        exe = builder.build(source, program.name)
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "params.txt").write_text("layout 1\n", encoding="utf-8")
            out = subprocess.run([str(exe), tmp], capture_output=True, text=True, check=True)
        tile_bytes, padding = (int(v) for v in out.stdout.split())
        _layouts[source] = (tile_bytes, padding)
    return _layouts[source]


def lookback_inputs(case: LookbackCase, seed: int) -> Any:
    """Random sequences, one a row."""
    rng = np.random.default_rng(seed)
    return _values(rng, case.value_dtype, case.op, (case.rows, case.length))


def run_lookback(
    builder: Builder,
    case: LookbackCase,
    src: Any,
    *,
    seed: int = 0,
    counts: dict[str, int] | None = None,
) -> Any:
    """The scanned sequences (``dst``) of `case` on the host (`counts`: see :func:`run`)."""
    dtype = case.value_dtype
    program = lookback_program(case.key())
    tile_bytes, padding = status_layout(builder, program)
    row_bytes = status_row_bytes(case.tiles, tile_bytes, padding)
    holds = (row_bytes - STATUS_SLACK) // tile_bytes - padding
    (init_x, init_y), threads = init_launch(holds, case.rows if case.two_d else None)
    garbage = np.random.default_rng(seed + 1).integers(0, 256, case.rows * row_bytes, np.uint8)
    one = [case.identity(), case.seed()]
    values = np.array(one if dtype.names else [dtype.type(v) for v in one], dtype)
    buffers = {
        "src": np.ascontiguousarray(src),
        "dst": np.zeros_like(src),
        "status": garbage,
        "oob": values[:1],
        "init": values[1:],
    }
    params = {
        "layout": 0,
        "length": case.length,
        "row_bytes": row_bytes,
        "tiles": case.tiles,
        "grid_y": case.rows if case.two_d else 1,
        "init_x": init_x,
        "init_y": init_y,
        "init_threads": threads,
        "seed": seed,
    }
    return run(builder, program, buffers, params, counts=counts)["dst"]


def lookback_reference(case: LookbackCase, src: Any) -> Any:
    """Each row scanned whole: forward, or from its end (each item with the items after it)."""
    dtype = case.value_dtype
    out = np.zeros_like(src)
    with np.errstate(all="ignore"):
        for r in range(src.shape[0]):
            seq = [_tuple(v) for v in src[r]]
            if case.reverse:
                seq = seq[::-1]
            acc: Any = case.seed() if case.seeded else (0 if case.mode == "exclusive" else None)
            res = []
            for v in seq:
                if case.mode == "exclusive":
                    res.append(acc)
                if acc is None:
                    acc = v
                elif case.reverse:
                    acc = _fix(dtype, _apply(case.op, v, acc))
                else:
                    acc = _fix(dtype, _apply(case.op, acc, v))
                if case.mode == "inclusive":
                    res.append(acc)
            if case.reverse:
                res = res[::-1]
            out[r] = np.array(res, dtype) if dtype.names else np.array(res).astype(dtype)
    return out


def _fix(dtype: np.dtype[Any], value: Any) -> Any:
    """`value` in the value type (integers wrap)."""
    if dtype.names is not None:
        return tuple(np.array([value], dtype)[0].tolist())
    return dtype.type(value)
