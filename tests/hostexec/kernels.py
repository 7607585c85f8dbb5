# SPDX-License-Identifier: Apache-2.0
"""The kernels the host tests run: each a case, its plans, its harness and its NumPy reference.

* :class:`~cases.block_cases.ScanCase` (the differential fuzzer's cases):
  a block-wide load, a block or warp scan with every option, a store, tile
  by tile along one row a block; the driver is the C++ twin of the fuzzer's
  kernel (:func:`cases.block_cases.scan_kernel`), the reference
  :func:`cases.block_cases.scan_reference`.
* :class:`ReduceCase`: load and ``block.reduce``/``block.sum`` of each tile,
  ``valid=`` for a short row's last tile, ``broadcast=``.
* :class:`ZipCase`: zipped tile I/O: a load of record items from one array
  a field (``oob_default`` per field), a scan of the records (the affine
  maps of a linear recurrence), a store of some fields (``field=``).
* :class:`LookbackCase`: a cross-block scan (``prefix_op=scan.lookback``)
  over a tile status that the generated init kernel initialised.
* :class:`WarpCase`: ``warp.load``, a warp scan over logical warps and
  ``warp.store``, one tile a logical warp.

Each ``*_program`` function builds the :class:`~hostexec.program.Program`
(the plans are made from plain facts, as the front ends make them from a
kernel's types), and each ``run_*`` function runs it and returns what the
kernel wrote; the ``*_reference`` functions compute what it must write.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from cases import block_cases as bc
from cases.block_cases import ScanCase

from scan._plan import ArrayFact, ScalarFact
from scan._primitives.block_scan._plan import plan_scan
from scan._primitives.tile_io._plan import plan_tile_io
from scan._primitives.warp_scan import plan_warp_scan

from .program import Arg, Program, array_decl, call, run, value_decls
from .toolchain import Builder

__all__ = ["harness_key", "run_scan_case", "scan_case_plans", "scan_program"]

_U8: Any = np.dtype(np.uint8)


def _temp(mode: str) -> ArrayFact | None:
    return None if mode == "implicit" else ArrayFact(_U8, 1)


def _launch(grid: str, block: tuple[int, int, int], kernel: str = "kernel") -> str:
    bx, by, bz = block
    return (
        "  ::hx::Launch launch;\n"
        f"  launch.grid = dim3{{{grid}}};\n"
        f"  launch.block = dim3{{{bx}, {by}, {bz}}};\n"
        f"  launch.kernel = {kernel};\n"
        "  launch.args = &a;\n"
        '  launch.seed = static_cast<uint64_t>(h.param("seed"));\n'
        "  ::hx::launch(launch);\n"
    )


def _temp_size(program: Program, plans: list[Any]) -> tuple[str, str]:
    """C++ setting ``a.temp_bytes``/``a.temp_align``: the largest caller-owned storage needed."""
    lines = ["  a.temp_bytes = 1;", "  a.temp_align = 16;"]
    decls = []
    for plan in plans:
        if plan is None or not getattr(plan, "caller_temp", False):
            continue
        sym = program.symbol(plan)
        decls.append(f'extern "C" const unsigned {sym}_temp_bytes, {sym}_temp_align;')
        lines.append(f"  if ({sym}_temp_bytes > a.temp_bytes) a.temp_bytes = {sym}_temp_bytes;")
        lines.append(f"  if ({sym}_temp_align > a.temp_align) a.temp_align = {sym}_temp_align;")
    return "\n".join(decls), "\n".join(lines)


# ---------------------------------------------------------------------------
# the fuzzer's scan cases


def scan_case_plans(case: ScanCase) -> tuple[Any, Any, Any]:
    """The (load, scan, store) plans of `case`'s kernel (None where it makes no such call)."""
    dtype = np.dtype(case.dtype)
    ipt = case.ipt
    temp = _temp(case.temp_storage)
    load: Any = None
    store: Any = None
    scan_plan: Any = None
    if case.io is not None:
        io: dict[str, Any] = {
            "array": ArrayFact(case.array_dtype, 1),
            "items": ArrayFact(dtype, 1, ipt),
            "algorithm": None if case.io == "default" else case.io,
            "temp_storage": temp,
            "block": case.block,
            "auto_sync": case.auto_sync,
        }
        oob = ScalarFact(dtype) if case.oob_default is not None else None
        load = plan_tile_io(function="load", oob_default=oob, **io)
        store = plan_tile_io(function="store", oob_default=None, **io)
    if case.entry != "none":
        values: Any = ScalarFact(dtype) if case.items_per_thread == 0 else ArrayFact(dtype, 1, ipt)
        common: dict[str, Any] = {
            "values": values,
            "out": ArrayFact(dtype, 1, ipt) if case.out_of_place and ipt > 0 else None,
            "mode": case.mode,
            "scan_op": bc.user_add if case.op == "user_add" else case.op,
            "initial_value": ScalarFact(dtype) if case.initial_value is not None else None,
            "prefix_op": case.prefix_descriptor(),
            "prefix_state": (
                ArrayFact(np.dtype(case.state_array or case.state_dtype), 1, 1)
                if case.passes_state
                else None
            ),
            "block": case.block,
        }
        aggregate = ArrayFact(dtype, 1, 1) if case.aggregate else None
        if case.is_warp:
            scan_plan = plan_warp_scan(
                function=f"warp.{case.entry}",
                warp_aggregate=aggregate,
                lanes=case.lanes,
                **common,
            )
        else:
            scan_plan = plan_scan(
                function=case.entry,
                block_aggregate=aggregate,
                algorithm=case.algorithm,
                temp_storage=temp,
                auto_sync=case.auto_sync,
                reverse=case.reverse,
                **common,
            )
    return load, scan_plan, store


def harness_key(case: ScanCase) -> ScanCase:
    """`case` with what its harness takes at run time set to fixed values.

    Cases with equal keys share one compiled harness: the tiles, the row's
    length, ``valid_items`` and the values of ``oob_default`` and
    ``initial_value`` are parameters of the run.
    """
    return replace(
        case,
        tiles=1,
        short=0,
        valid_items=None if case.valid_items is None else 0,
        oob_default=None if case.oob_default is None else 0,
        initial_value=None if case.initial_value is None else 0,
    )


def scan_program(case: ScanCase) -> Program:
    """The harness of `case`'s kernel: the C++ twin of :func:`cases.block_cases.scan_kernel`."""
    load, scan_plan, store = scan_case_plans(case)
    plans = [p for p in (load, scan_plan, store) if p is not None]
    program = Program(f"scan {harness_key(case)}", plans)
    dtype = np.dtype(case.dtype)
    ipt, threads = case.ipt, case.threads
    itemsize = case.array_dtype.itemsize
    caller = case.temp_storage != "implicit"
    temp = {"temp_storage": Arg("temp", "a.temp_bytes", 1)} if caller else {}
    body: list[str] = []
    if case.temp_storage != "implicit":
        body.append(
            "  unsigned char* temp = static_cast<unsigned char*>(::hx::shared_alloc("
            '-1, static_cast<size_t>(a.temp_bytes), static_cast<size_t>(a.temp_align), "temp"));'
        )
    stateful = case.stateful or case.passes_state
    if stateful:
        body += ["  state_t state[1];", "  state[0] = a.state_init[row * THREADS + rank];"]
    body += [
        "  value_t agg[1];",
        "  value_t items[IPT];",
        "  value_t res[IPT];",
        "  value_t x;",
        "  array_t* src_row = a.src + row * a.length;",
        "  array_t* dst_row = a.dst + row * a.length;",
        "  for (long long tile = 0; tile < a.tiles; ++tile) {",
    ]
    sync = [] if case.auto_sync else ["    __syncthreads();"]
    valid = {"valid_items": Arg("a.valid")} if case.valid_items is not None else {}
    offset = Arg("tile * TILE")
    scan_args: dict[str, Any] = {**temp}
    if scan_plan is not None:
        scan_args["values"] = Arg("x") if case.items_per_thread == 0 else Arg("items", "IPT")
        if case.out_of_place and case.items_per_thread > 0:
            scan_args["out"] = Arg("res", "IPT")
        if case.initial_value is not None:
            scan_args["initial_value"] = Arg("a.init[0]")
        if case.passes_state:
            scan_args["prefix_state"] = Arg("state", "1")
        if case.aggregate:
            scan_args["warp_aggregate" if case.is_warp else "block_aggregate"] = Arg("agg", "1")
    scan_lines: list[str] = []
    if scan_plan is not None:
        if case.items_per_thread == 0:
            source = "items[0]" if case.io is not None else "src_row[base]"
            scan_lines = [
                f"    x = {source};",
                "    { value_t ret; "
                + call(scan_plan, program.symbol(scan_plan), scan_args, "ret")
                + " x = ret; }",
            ]
            if case.io is not None:
                scan_lines.append("    items[0] = x;")
        else:
            scan_lines = ["    " + call(scan_plan, program.symbol(scan_plan), scan_args)]
    target = "res" if case.out_of_place and case.items_per_thread > 0 else "items"
    if case.io is None:
        body.append("    const long long base = (tile * THREADS + rank) * IPT;")
        if case.items_per_thread > 0:
            body.append("    for (int i = 0; i < IPT; ++i) items[i] = src_row[base + i];")
        body += scan_lines + sync
        if case.items_per_thread > 0:
            body.append(f"    for (int i = 0; i < IPT; ++i) dst_row[base + i] = {target}[i];")
        else:
            body.append("    dst_row[base] = x;")
    else:
        src = Arg("src_row", "a.length", itemsize)
        dst = Arg("dst_row", "a.length", itemsize)
        load_args: dict[str, Any] = {"src": src, "offset": offset, "items": Arg("items", "IPT")}
        if case.oob_default is not None:
            load_args["oob_default"] = Arg("a.oob[0]")
        store_args: dict[str, Any] = {"dst": dst, "offset": offset, "items": Arg(target, "IPT")}
        body += [
            "    for (int i = 0; i < IPT; ++i) items[i] = a.fill[0];",
            "    " + call(load, program.symbol(load), {**load_args, **valid, **temp}),
            *sync,
            *scan_lines,
            *(sync if scan_lines else []),
            "    " + call(store, program.symbol(store), {**store_args, **valid, **temp}),
            *sync,
        ]
    if stateful:
        body.append("    a.states[(row * a.tiles + tile) * THREADS + rank] = state[0];")
    if case.aggregate:
        body.append("    a.aggs[(row * a.tiles + tile) * THREADS + rank] = agg[0];")
    body.append("  }")
    decls, sizes = _temp_size(program, plans)
    state_dtype = np.dtype(case.state_array or case.state_dtype)
    program.driver_parts = [
        decls,
        "namespace hostexec_driver {",
        value_decls(dtype, state_dtype),
        array_decl(case.array_dtype),
        f"constexpr int THREADS = {threads};",
        f"constexpr int IPT = {ipt};",
        "constexpr long long TILE = THREADS * IPT;",
        "struct Args {",
        "  array_t* src; array_t* dst; state_t* states; value_t* aggs; state_t* state_init;",
        "  value_t* oob; value_t* init; value_t* fill;",
        "  long long length, tiles, valid, temp_bytes, temp_align;",
        "};",
        "void kernel(void* p) {",
        "  Args& a = *static_cast<Args*>(p);",
        "  const int rank = ::hx::rank();",
        "  const long long row = blockIdx.x;",
        *body,
        "}",
        "}  // namespace hostexec_driver",
        "int main(int argc, char** argv) {",
        "  using namespace hostexec_driver;",
        "  ::hx::Harness h(argc, argv);",
        "  Args a;",
        '  a.src = h.buffer<array_t>("src");',
        '  a.dst = h.buffer<array_t>("dst");',
        '  a.states = h.buffer<state_t>("states");',
        '  a.aggs = h.buffer<value_t>("aggs");',
        '  a.state_init = h.buffer<state_t>("state_init");',
        '  a.oob = h.buffer<value_t>("oob");',
        '  a.init = h.buffer<value_t>("init");',
        '  a.fill = h.buffer<value_t>("fill");',
        '  a.length = h.param("length");',
        '  a.tiles = h.param("tiles");',
        '  a.valid = h.param("valid");',
        sizes,
        _launch('static_cast<unsigned>(h.param("rows")), 1, 1', case.block),
        "  h.finish();",
        "  return 0;",
        "}",
    ]
    return program


def run_scan_case(
    builder: Builder, case: ScanCase, src: Any, state_init: Any, *, seed: int = 0
) -> dict[str, Any]:
    """Run `case`'s kernel on the host (one block a row); ``dst``, ``states``, ``aggs``."""
    rows = src.shape[0]
    dtype = np.dtype(case.dtype)
    sdtype = np.dtype(case.state_array or case.state_dtype)

    def one(value: Any) -> Any:
        return np.array([0 if value is None else value], dtype=dtype)

    buffers = {
        "src": np.ascontiguousarray(src, dtype=case.array_dtype),
        "dst": np.full(src.shape, case.sentinel, dtype=case.array_dtype),
        "states": np.zeros((rows, case.tiles, case.threads), dtype=sdtype),
        "aggs": np.zeros((rows, case.tiles, case.threads), dtype=dtype),
        "state_init": np.ascontiguousarray(state_init.astype(sdtype)),
        "oob": one(case.oob_default),
        "init": one(case.initial_value),
        "fill": one(case.sentinel),
    }
    params = {
        "rows": rows,
        "length": src.shape[1],
        "tiles": case.tiles,
        "valid": 0 if case.valid_items is None else case.valid_items,
        "seed": seed,
    }
    out = run(builder, scan_program(harness_key(case)), buffers, params)
    return {"dst": out["dst"], "states": out["states"], "aggs": out["aggs"]}
