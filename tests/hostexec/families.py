# SPDX-License-Identifier: Apache-2.0
"""Host kernels of the families the fuzzer's cases leave out: reduce, zipped tile I/O, warp I/O.

* :class:`ReduceCase`: each tile loaded and reduced (``block.reduce`` or
  ``block.sum``, numbers or records), ``valid=`` the row's items left from
  the tile's start (a short row's last tile is partial), ``broadcast=``.
* :class:`ZipCase`: zipped tile I/O: record items loaded from one array a
  field (``oob_default=`` a tuple, one value a field), scanned with the
  affine maps' composition and a stateful record callback carrying the
  prefix across tiles, and some fields stored (``field=``).
* :class:`WarpCase`: one row a logical warp: ``warp.load``, a warp scan
  (operators, initial values, a stateful callback), ``warp.store``, rows
  that start off the vector alignment.
* :class:`NeighbourCase`: a row walked tile by tile through
  ``block.adjacent_difference`` or ``block.flag_heads``, with or without
  ``carry=`` (the item before the row), ``out=`` or in place.

Each case has a ``*_program`` (its harness), a ``run_*`` (what the host
run wrote) and a ``*_reference`` (NumPy: what it must write).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from cases import block_cases as bc

from scan._plan import ArrayFact, ScalarFact, TupleFact, ZipFact
from scan._primitives.adjacent_difference import plan_adjacent_difference
from scan._primitives.block_reduce import plan_reduce
from scan._primitives.block_scan._plan import plan_scan
from scan._primitives.flag_heads import plan_flag_heads
from scan._primitives.tile_io._plan import plan_tile_io
from scan._primitives.warp_io import plan_warp_io
from scan._primitives.warp_scan import plan_warp_scan

from . import corpus
from .program import Arg, Program, array_decl, call, run, value_decls
from .toolchain import Builder

__all__ = [
    "RECORDS",
    "NeighbourCase",
    "ReduceCase",
    "WarpCase",
    "ZipCase",
    "neighbour_reference",
    "reduce_reference",
    "run_neighbours",
    "run_reduce",
    "run_warp",
    "run_zip",
    "warp_reference",
    "zip_reference",
]

#: The record dtypes the cases name.
RECORDS: dict[str, Any] = {
    "pair": corpus.PAIR,
    "affine": corpus.AFFINE,
    "mixed": np.dtype([("a", np.int16), ("b", np.float64)], align=True),
}
_OPS = {"user_add": bc.user_add, "last": corpus.last, "compose": corpus.compose}


def _dtype(name: str) -> Any:
    """The dtype a case names: a record of :data:`RECORDS`, or a NumPy scalar's (bfloat16 too)."""
    return RECORDS[name] if name in RECORDS else bc.array_dtype(name)


def _convert(source: Any, target: Any, x: str) -> str:
    """C++ converting `x` from `source` to ``value_t`` (`target`) as a front end does
    (``dtype=`` widens: half precision through float, a real value to a complex one's
    real part)."""
    if source.names is None and source.name in ("float16", "bfloat16"):
        x = f"static_cast<float>({x})"
    if target.kind == "c":
        part = "float" if target.itemsize == 8 else "double"
        if source.kind == "c":
            return f"value_t{{{part}({x}.re), {part}({x}.im)}}"
        return f"value_t{{{part}({x}), {part}(0)}}"
    return f"static_cast<value_t>({x})"


def _op(name: str) -> Any:
    return _OPS.get(name, name)


def _apply(name: str, a: Any, b: Any) -> Any:
    """The operator `name` on two values (records: tuples), as the generated code applies it."""
    if name == "compose":
        return (a[0] * b[0], b[0] * a[1] + b[1])
    if name == "last":
        return b
    return bc._REF_OPS[name](a, b)


def _tuple(value: Any) -> Any:
    return tuple(value.tolist()) if isinstance(value, np.void) else value


def _main(program: Program, buffers: list[tuple[str, str]], params: list[str], launch: str) -> str:
    lines = ["int main(int argc, char** argv) {", "  using namespace hostexec_driver;"]
    lines += ["  ::hx::Harness h(argc, argv);", "  Args a;"]
    lines += [f'  a.{name} = h.buffer<{ctype}>("{name}");' for name, ctype in buffers]
    lines += [f'  a.{name} = h.param("{name}");' for name in params]
    lines += [launch, "  h.finish();", "  return 0;", "}"]
    return "\n".join(lines)


def _launch(grid: str, block: tuple[int, int, int]) -> str:
    bx, by, bz = block
    return (
        "  ::hx::Launch launch;\n"
        f"  launch.grid = dim3{{{grid}}};\n"
        f"  launch.block = dim3{{{bx}, {by}, {bz}}};\n"
        "  launch.kernel = kernel;\n"
        "  launch.args = &a;\n"
        '  launch.seed = static_cast<uint64_t>(h.param("seed"));\n'
        "  ::hx::launch(launch);"
    )


def _kernel(head: list[str], body: list[str]) -> list[str]:
    return [
        "void kernel(void* p) {",
        "  Args& a = *static_cast<Args*>(p);",
        "  const int rank = ::hx::rank();",
        "  const long long row = blockIdx.x;",
        *head,
        *body,
        "}",
    ]


def _values(rng: np.random.Generator, dtype: np.dtype[Any], op: str, shape: Any) -> Any:
    """Inputs whose every combination the reference computes exactly."""
    if dtype.names is not None:
        out = np.zeros(shape, dtype)
        out[dtype.names[0]] = rng.choice(np.array([1, -1, 1]), size=shape)
        out[dtype.names[1]] = rng.integers(-9, 10, size=shape)
        return out
    if dtype.name == "bfloat16":  # small integers, drawn as float32's
        return bc._values(rng, np.dtype(np.float32), op, shape).astype(dtype)
    return bc._values(rng, dtype, "+" if op in ("last", "compose") else op, shape)


# ---------------------------------------------------------------------------
# block reduce


@dataclass(frozen=True)
class ReduceCase:
    """A tile loop reducing each tile (``block.reduce``/``block.sum``)."""

    dtype: str = "int32"
    op: str = "+"
    sum: bool = False
    block: tuple[int, int, int] = (64, 1, 1)
    items_per_thread: int = 4  # 0: one scalar a thread
    algorithm: str | None = None
    valid: bool = True
    broadcast: bool | None = False  # None: the library's default
    temp_storage: str = "implicit"
    tiles: int = 2
    short: int = 0
    accumulate: str | None = None  # dtype=: the accumulator's dtype

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def result_dtype(self) -> Any:
        """The dtype of the result: the accumulator's, or the items'."""
        return np.dtype(self.accumulate) if self.accumulate else _dtype(self.dtype)

    @property
    def ipt(self) -> int:
        return max(self.items_per_thread, 1)

    @property
    def length(self) -> int:
        return self.tiles * self.threads * self.ipt - self.short

    def key(self) -> ReduceCase:
        """The case's harness key: the tiles and the row's length are run-time values."""
        return ReduceCase(**{**self.__dict__, "tiles": 1, "short": 0})


def _reduce_plans(case: ReduceCase) -> tuple[Any, Any]:
    dtype = _dtype(case.dtype)
    load = plan_tile_io(
        function="load",
        array=ArrayFact(dtype, 1),
        items=ArrayFact(dtype, 1, case.ipt),
        algorithm=None,
        oob_default=None,
        temp_storage=None,
        block=case.block,
    )
    items: Any = ScalarFact(dtype) if case.items_per_thread == 0 else ArrayFact(dtype, 1, case.ipt)
    reduce = plan_reduce(
        function="sum" if case.sum else "reduce",
        items=items,
        op="+" if case.sum else _op(case.op),
        valid=ScalarFact(np.int64) if case.valid else None,
        broadcast=case.broadcast,
        algorithm=case.algorithm,
        temp_storage=None if case.temp_storage == "implicit" else ArrayFact(np.uint8, 1),
        block=case.block,
        dtype=case.accumulate,
    )
    return load, reduce


def reduce_program(case: ReduceCase) -> Program:
    """The harness of `case`: load, reduce, write each thread's result."""
    load, reduce = _reduce_plans(case)
    program = Program(f"reduce {case}", [load, reduce])
    dtype = _dtype(case.dtype)
    caller = case.temp_storage != "implicit"
    temp = {"temp_storage": Arg("temp", "a.temp_bytes", 1)} if caller else {}
    head = [
        "  item_t items[IPT];",
        "  value_t x;",
        "  const item_t* src_row = a.src + row * a.length;",
    ]
    if caller:
        sym = program.symbol(reduce)
        head.insert(
            0,
            "  unsigned char* temp = static_cast<unsigned char*>(::hx::shared_alloc(-1, "
            f'{sym}_temp_bytes, {sym}_temp_align < 16 ? 16 : {sym}_temp_align, "temp"));',
        )
    # a scalar passes its slot of the result's type (a front end converts it)
    items = Arg("x") if case.items_per_thread == 0 else Arg("items", "IPT")
    args = {"items": items, "valid": Arg("count"), **temp}
    body = [
        "  for (long long tile = 0; tile < a.tiles; ++tile) {",
        "    for (int i = 0; i < IPT; ++i) items[i] = a.fill[0];",
        "    "
        + call(
            load,
            program.symbol(load),
            {
                "src": Arg("src_row", "a.length", dtype.itemsize),
                "offset": Arg("tile * TILE"),
                "items": Arg("items", "IPT"),
            },
        ),
        f"    x = {_convert(dtype, case.result_dtype, 'items[0]')};",
        "    const long long count = a.length - tile * TILE;",
        "    value_t ret;",
        "    " + call(reduce, program.symbol(reduce), args, "ret"),
        "    a.out[(row * a.tiles + tile) * THREADS + rank] = ret;",
        "  }",
    ]
    decl = ""
    if caller:
        sym = program.symbol(reduce)
        decl = f'extern "C" const unsigned {sym}_temp_bytes, {sym}_temp_align;'
    item_type = (
        "using item_t = value_t;"
        if case.accumulate is None
        else value_decls(dtype).replace("value_t", "item_t")
    )
    program.driver_parts = [
        decl,
        "namespace hostexec_driver {",
        value_decls(case.result_dtype),
        item_type,
        f"constexpr int THREADS = {case.threads};",
        f"constexpr int IPT = {case.ipt};",
        "constexpr long long TILE = THREADS * IPT;",
        "struct Args { item_t* src; value_t* out; item_t* fill; long long length, tiles; };",
        *_kernel(head, body),
        "}  // namespace hostexec_driver",
        _main(
            program,
            [("src", "item_t"), ("out", "value_t"), ("fill", "item_t")],
            ["length", "tiles"],
            _launch('static_cast<unsigned>(h.param("rows")), 1, 1', case.block),
        ),
    ]
    return program


def run_reduce(builder: Builder, case: ReduceCase, src: Any, *, seed: int = 0) -> Any:
    """Each thread's result of each tile (rows x tiles x threads)."""
    dtype = _dtype(case.dtype)
    rows = src.shape[0]
    buffers = {
        "src": src,
        "out": np.zeros((rows, case.tiles, case.threads), case.result_dtype),
        "fill": np.zeros(1, dtype),
    }
    params = {"rows": rows, "length": case.length, "tiles": case.tiles, "seed": seed}
    return run(builder, reduce_program(case.key()), buffers, params)["out"]


def reduce_inputs(case: ReduceCase, rows: int, seed: int) -> Any:
    """Random rows for `case`."""
    rng = np.random.default_rng(seed)
    op = "+" if case.sum else case.op
    return _values(rng, _dtype(case.dtype), op, (rows, case.length))


def reduce_reference(case: ReduceCase, src: Any) -> tuple[Any, Any]:
    """(expected results, mask of the defined ones): thread 0's, every thread's with broadcast.

    Items are converted to the accumulator's dtype first (``dtype=``).
    """
    dtype = case.result_dtype
    rows = src.shape[0]
    tile = case.threads * case.ipt
    src = src.astype(dtype)
    broadcast = _reduce_plans(case)[1].broadcast  # None: the library's default
    want = np.zeros((rows, case.tiles, case.threads), dtype)
    defined = np.zeros(want.shape, bool)
    op = "+" if case.sum else case.op
    with np.errstate(all="ignore"):
        for r, t in itertools.product(range(rows), range(case.tiles)):
            part = src[r, t * tile : min((t + 1) * tile, case.length)]
            if not case.valid:  # a partial tile reduces the fill (0) too
                part = np.concatenate([part, np.zeros(tile - len(part), dtype)])
            acc = _tuple(part[0])
            for v in part[1:]:
                acc = _apply(op, acc, _tuple(v))
            value = np.array([acc], dtype)[0] if dtype.names else dtype.type(acc)
            threads = case.threads if broadcast else 1
            want[r, t, :threads] = value
            defined[r, t, :threads] = True
    return want, defined


# ---------------------------------------------------------------------------
# zipped tile I/O


@dataclass(frozen=True)
class ZipCase:
    """A tile loop of zipped loads, a record scan carried by a stateful callback, zipped stores."""

    record: str = "pair"
    block: tuple[int, int, int] = (64, 1, 1)
    items_per_thread: int = 4
    algorithm: str | None = None
    oob: bool = True
    scan: bool = True
    store: tuple[str, ...] = ("b",)
    tiles: int = 2
    short: int = 0
    valid_items: int | None = None
    reverse: bool = False  # scan each tile from its end, walking the row from its end
    half: str | None = None  # every array holds float16 or bfloat16 (a float record's fields)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def length(self) -> int:
        return self.tiles * self.threads * self.items_per_thread - self.short

    def array_dtypes(self) -> dict[str, Any]:
        """Each field's array dtype: the field's own, or the half-precision type."""
        dtype = RECORDS[self.record]
        return {
            n: dtype.fields[n][0] if self.half is None else _dtype(self.half) for n in dtype.names
        }

    def key(self) -> ZipCase:
        """The case's harness key (tiles, length and valid_items are run-time values)."""
        valid = None if self.valid_items is None else 0
        return ZipCase(**{**self.__dict__, "tiles": 1, "short": 0, "valid_items": valid})


#: the fields' out-of-range defaults: distinct, so a mix-up shows
ZIP_OOB = (1, 0)
ZIP_FILL = (77, 66)


def _zip_plans(case: ZipCase) -> tuple[Any, Any, Any]:
    dtype: Any = RECORDS[case.record]
    arrays = case.array_dtypes()
    assert dtype.names is not None
    items = ArrayFact(dtype, 1, case.items_per_thread)
    common: dict[str, Any] = {"items": items, "algorithm": case.algorithm, "temp_storage": None}
    load = plan_tile_io(
        function="load",
        array=ZipFact(tuple(ArrayFact(arrays[n], 1) for n in dtype.names)),
        oob_default=TupleFact((np.int64, np.int64)) if case.oob else None,
        block=case.block,
        **common,
    )
    stored = [ArrayFact(arrays[n], 1) for n in case.store]
    store = plan_tile_io(
        function="store",
        array=stored[0] if len(stored) == 1 else ZipFact(tuple(stored)),
        oob_default=None,
        block=case.block,
        field=case.store[0] if len(case.store) == 1 else case.store,
        **common,
    )
    scan = None
    if case.scan:
        scan = plan_scan(
            function="inclusive_scan",
            values=items,
            out=None,
            mode="inclusive",
            scan_op=corpus.compose,
            initial_value=None,
            prefix_op=corpus.running_compose(dtype),
            prefix_state=ArrayFact(dtype, 1, 1),
            block_aggregate=None,
            algorithm=None,
            temp_storage=None,
            block=case.block,
            reverse=case.reverse,
        )
    return load, scan, store


def zip_program(case: ZipCase) -> Program:
    """The harness of `case`."""
    load, scan, store = _zip_plans(case)
    program = Program(f"zip {case}", [p for p in (load, scan, store) if p is not None])
    dtype = RECORDS[case.record]
    assert dtype.names is not None
    ftypes = [np.dtype(t) for t in case.array_dtypes().values()]
    from scan._vocab import c_type

    names = list(dtype.names)
    srcs = [Arg(f"src_{n}", "a.length", ftypes[i].itemsize) for i, n in enumerate(names)]
    outs = [Arg(f"out_{n}", "a.length", ftypes[names.index(n)].itemsize) for n in case.store]
    valid = {"valid_items": Arg("a.valid")} if case.valid_items is not None else {}
    head = [
        "  value_t items[IPT];",
        "  value_t state[1];",
        "  state[0] = a.state_init[row];",
        *[f"  auto* src_{n} = a.{n} + row * a.length;" for n in names],
        *[f"  auto* out_{n} = a.out_{n} + row * a.length;" for n in case.store],
    ]
    load_args: dict[str, Any] = {"src": srcs, "offset": Arg("tile * TILE"), "items": Arg("items")}
    load_args["items"] = Arg("items", "IPT")
    if case.oob:
        load_args["oob_default"] = Arg("a.oob[0]")
    store_args = {
        "dst": outs if len(outs) > 1 else outs[0],
        "offset": Arg("tile * TILE"),
        "items": Arg("items", "IPT"),
    }
    first = "a.tiles - 1 - k" if case.reverse else "k"
    body = [
        "  for (long long k = 0; k < a.tiles; ++k) {",
        f"    const long long tile = {first};",
        "    for (int i = 0; i < IPT; ++i) items[i] = a.fill[0];",
        "    " + call(load, program.symbol(load), {**load_args, **valid}),
    ]
    if scan is not None:
        scan_args = {"values": Arg("items", "IPT"), "prefix_state": Arg("state", "1")}
        body.append("    " + call(scan, program.symbol(scan), scan_args))
    body += [
        "    " + call(store, program.symbol(store), {**store_args, **valid}),
        "    if (rank == 0) a.states[row * a.tiles + k] = state[0];",
        "  }",
    ]
    field_types = "\n".join(
        f"using {n}_t = {c_type(t)};" for n, t in zip(names, ftypes, strict=True)
    )
    program.driver_parts = [
        "namespace hostexec_driver {",
        value_decls(dtype),
        field_types,
        f"constexpr int IPT = {case.items_per_thread};",
        f"constexpr long long TILE = {case.threads} * IPT;",
        "struct Args {",
        *[f"  {n}_t* {n};" for n in names],
        *[f"  {n}_t* out_{n};" for n in case.store],
        "  value_t* oob; value_t* fill; value_t* state_init; value_t* states;",
        "  long long length, tiles, valid;",
        "};",
        *_kernel(head, body),
        "}  // namespace hostexec_driver",
        _main(
            program,
            [(n, f"{n}_t") for n in names]
            + [(f"out_{n}", f"{n}_t") for n in case.store]
            + [(b, "value_t") for b in ("oob", "fill", "state_init", "states")],
            ["length", "tiles", "valid"],
            _launch('static_cast<unsigned>(h.param("rows")), 1, 1', case.block),
        ),
    ]
    return program


def zip_inputs(case: ZipCase, rows: int, seed: int) -> Any:
    """Random record rows for `case` (each field then goes to its own array)."""
    rng = np.random.default_rng(seed)
    return _values(rng, RECORDS[case.record], "compose", (rows, case.length))


def run_zip(builder: Builder, case: ZipCase, src: Any, *, seed: int = 0) -> dict[str, Any]:
    """The stored arrays (``out_<field>``) and the states after each tile."""
    dtype = RECORDS[case.record]
    assert dtype.names is not None
    rows = src.shape[0]
    arrays = case.array_dtypes()
    buffers: dict[str, Any] = {n: np.ascontiguousarray(src[n], arrays[n]) for n in dtype.names}
    for n in case.store:
        buffers[f"out_{n}"] = np.full(src.shape, 55, dtype=arrays[n])
    buffers["oob"] = np.array([ZIP_OOB], dtype)
    buffers["fill"] = np.array([ZIP_FILL], dtype)
    buffers["state_init"] = np.array([(1, 0)] * rows, dtype)
    buffers["states"] = np.zeros((rows, case.tiles), dtype)
    params = {
        "rows": rows,
        "length": case.length,
        "tiles": case.tiles,
        "valid": 0 if case.valid_items is None else case.valid_items,
        "seed": seed,
    }
    out = run(builder, zip_program(case.key()), buffers, params)
    return {k: v for k, v in out.items() if k.startswith("out_") or k == "states"}


def zip_reference(case: ZipCase, src: Any) -> dict[str, Any]:
    """What `case`'s kernel stores, and each tile's state after it."""
    dtype = RECORDS[case.record]
    rows, tile = src.shape[0], case.threads * case.items_per_thread
    # half-precision arrays: the inputs are small integers (exact), the stores round to
    # nearest even as NumPy's (and ml_dtypes') conversions do
    arrays = case.array_dtypes()
    outs = {f"out_{n}": np.full(src.shape, 55, dtype=arrays[n]) for n in case.store}
    states = np.zeros((rows, case.tiles), dtype)
    pad = ZIP_OOB if case.oob else ZIP_FILL
    order = range(case.tiles - 1, -1, -1) if case.reverse else range(case.tiles)
    for r in range(rows):
        state = (1, 0)
        for k, t in enumerate(order):
            valid = case.length - t * tile
            if case.valid_items is not None:
                valid = min(valid, case.valid_items)
            # the items in the order the threads hold them (striped: item i of rank
            # q is tile item i * threads + q), scanned in that order
            pos = _positions(case.algorithm, case.threads, case.items_per_thread)
            items = [_tuple(src[r, t * tile + p]) if p < valid else pad for p in pos]
            if case.scan:  # the callback returns its state, then composes the aggregate in
                aggregate = items[0]
                for v in items[1:]:
                    aggregate = _apply("compose", aggregate, v)
                seed, state = state, _apply("compose", state, aggregate)
                if case.reverse:  # each item with the items after it, then the seed
                    acc, scanned = seed, []
                    for v in items[::-1]:
                        acc = _apply("compose", v, acc)
                        scanned.append(acc)
                    items = scanned[::-1]
                else:
                    acc, scanned = seed, []
                    for v in items:
                        acc = _apply("compose", acc, v)
                        scanned.append(acc)
                    items = scanned
            for n in case.store:
                field = dtype.names.index(n)
                for i, p in enumerate(pos):
                    if p < valid:
                        outs[f"out_{n}"][r, t * tile + p] = items[i][field]
            states[r, k] = state
    return {**outs, "states": states}


# ---------------------------------------------------------------------------
# warp tile I/O and warp scans


@dataclass(frozen=True)
class WarpCase:
    """One row a logical warp: ``warp.load``, a warp scan, ``warp.store``, tile by tile."""

    dtype: str = "int32"
    block: tuple[int, int, int] = (64, 1, 1)
    lanes: int = 32
    items_per_thread: int = 4
    load: str | None = None
    store: str | None = None
    oob: bool = True
    entry: str = "inclusive_sum"  # or "exclusive_sum", "inclusive_scan", "exclusive_scan", "none"
    op: str = "+"
    initial_value: int | None = None
    prefix: str = "none"  # or "running": a stateful callback carries each warp's prefix
    aggregate: bool = False
    tiles: int = 2
    short: int = 0
    valid_items: int | None = None
    shift: int = 0  # each row starts this many items past a 256-byte aligned address
    array: str | None = None  # the rows' dtype where it is not the items' (half precision)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def array_dtype(self) -> Any:
        """The rows' dtype."""
        return _dtype(self.array or self.dtype)

    @property
    def warps(self) -> int:
        return self.threads // self.lanes

    @property
    def warp_tile(self) -> int:
        return self.lanes * self.items_per_thread

    @property
    def length(self) -> int:
        return self.tiles * self.warp_tile - self.short

    @property
    def mode(self) -> str:
        return "exclusive" if self.entry.startswith("exclusive") else "inclusive"

    def key(self) -> WarpCase:
        """The harness key (tiles, lengths, valid_items, the initial value: run-time values)."""
        changes: dict[str, Any] = {"tiles": 1, "short": 0, "shift": 0}
        changes["valid_items"] = None if self.valid_items is None else 0
        changes["initial_value"] = None if self.initial_value is None else 0
        return WarpCase(**{**self.__dict__, **changes})


def _warp_plans(case: WarpCase) -> tuple[Any, Any, Any]:
    dtype = np.dtype(case.dtype)
    items = ArrayFact(dtype, 1, case.items_per_thread)
    io: dict[str, Any] = {
        "array": ArrayFact(case.array_dtype, 1),
        "items": items,
        "lanes": case.lanes,
        "block": case.block,
    }
    oob = ScalarFact(dtype) if case.oob else None
    load = plan_warp_io(function="load", algorithm=case.load, oob_default=oob, **io)
    store = plan_warp_io(function="store", algorithm=case.store, oob_default=None, **io)
    scan = None
    if case.entry != "none":
        running = bc.running(case.op, case.dtype) if case.prefix == "running" else None
        scan = plan_warp_scan(
            function=f"warp.{case.entry}",
            values=items,
            out=None,
            mode=case.mode,
            scan_op=_op(case.op),
            initial_value=ScalarFact(dtype) if case.initial_value is not None else None,
            prefix_op=running,
            prefix_state=ArrayFact(dtype, 1, 1) if running is not None else None,
            warp_aggregate=ArrayFact(dtype, 1, 1) if case.aggregate else None,
            lanes=case.lanes,
            block=case.block,
        )
    return load, scan, store


def warp_program(case: WarpCase) -> Program:
    """The harness of `case`."""
    load, scan, store = _warp_plans(case)
    program = Program(f"warp {case}", [p for p in (load, scan, store) if p is not None])
    dtype = np.dtype(case.dtype)
    size = case.array_dtype.itemsize
    valid = {"valid_items": Arg("a.valid")} if case.valid_items is not None else {}
    head = [
        "  const int lane = rank % LANES;",
        "  const long long wrow = row * WARPS + rank / LANES;",
        "  value_t items[IPT];",
        "  value_t state[1];",
        "  value_t agg[1];",
        "  state[0] = a.state_init[wrow];",
        "  array_t* src_row = a.src + wrow * a.stride + a.shift;",
        "  array_t* dst_row = a.dst + wrow * a.stride + a.shift;",
    ]
    offset = Arg("tile * WTILE")
    load_args: dict[str, Any] = {
        "src": Arg("src_row", "a.length", size),
        "offset": offset,
        "items": Arg("items", "IPT"),
        **valid,
    }
    if case.oob:
        load_args["oob_default"] = Arg("a.oob[0]")
    body = [
        "  for (long long tile = 0; tile < a.tiles; ++tile) {",
        "    for (int i = 0; i < IPT; ++i) items[i] = a.fill[0];",
        "    " + call(load, program.symbol(load), load_args),
    ]
    if scan is not None:
        scan_args: dict[str, Any] = {"values": Arg("items", "IPT")}
        if case.initial_value is not None:
            scan_args["initial_value"] = Arg("a.init[0]")
        if case.prefix == "running":
            scan_args["prefix_state"] = Arg("state", "1")
        if case.aggregate:
            scan_args["warp_aggregate"] = Arg("agg", "1")
        body.append("    " + call(scan, program.symbol(scan), scan_args))
    store_args = {
        "dst": Arg("dst_row", "a.length", size),
        "offset": offset,
        "items": Arg("items", "IPT"),
        **valid,
    }
    body += [
        "    " + call(store, program.symbol(store), store_args),
        "    a.states[(wrow * a.tiles + tile) * LANES + lane] = state[0];",
    ]
    if case.aggregate:
        body.append("    a.aggs[(wrow * a.tiles + tile) * LANES + lane] = agg[0];")
    body.append("  }")
    program.driver_parts = [
        "namespace hostexec_driver {",
        value_decls(dtype),
        array_decl(case.array_dtype),
        f"constexpr int LANES = {case.lanes};",
        f"constexpr int WARPS = {case.warps};",
        f"constexpr int IPT = {case.items_per_thread};",
        "constexpr long long WTILE = LANES * IPT;",
        "struct Args {",
        "  array_t* src; array_t* dst; value_t* state_init; value_t* states; value_t* aggs;",
        "  value_t* oob; value_t* init; value_t* fill;",
        "  long long length, stride, shift, tiles, valid;",
        "};",
        *_kernel(head, body),
        "}  // namespace hostexec_driver",
        _main(
            program,
            [("src", "array_t"), ("dst", "array_t")]
            + [(b, "value_t") for b in ("state_init", "states", "aggs", "oob", "init", "fill")],
            ["length", "stride", "shift", "tiles", "valid"],
            _launch('static_cast<unsigned>(h.param("rows")), 1, 1', case.block),
        ),
    ]
    return program


def warp_inputs(case: WarpCase, blocks: int, seed: int) -> tuple[Any, Any]:
    """Random rows (one a logical warp) and each row's initial state."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(case.dtype)
    rows = blocks * case.warps
    src = _values(rng, dtype, case.op, (rows, case.length)).astype(case.array_dtype)
    state = _values(rng, dtype, case.op, rows)
    return src, state


def run_warp(
    builder: Builder, case: WarpCase, src: Any, state: Any, *, seed: int = 0
) -> dict[str, Any]:
    """``dst``, ``states`` and ``aggs`` (rows x tiles x lanes) of `case` on the host."""
    dtype = np.dtype(case.dtype)
    rows = src.shape[0]
    stride = case.length + case.shift
    padded = np.full((rows, stride), bc.SENTINEL, case.array_dtype)
    padded[:, case.shift :] = src
    buffers = {
        "src": padded,
        "dst": np.full((rows, stride), bc.SENTINEL, case.array_dtype),
        "state_init": np.ascontiguousarray(state, dtype),
        "states": np.zeros((rows, case.tiles, case.lanes), dtype),
        "aggs": np.zeros((rows, case.tiles, case.lanes), dtype),
        "oob": np.zeros(1, dtype),
        "init": np.array([case.initial_value or 0], dtype),
        "fill": np.array([bc.SENTINEL], dtype),
    }
    params = {
        "rows": rows // case.warps,
        "length": case.length,
        "stride": stride,
        "shift": case.shift,
        "tiles": case.tiles,
        "valid": 0 if case.valid_items is None else case.valid_items,
        "seed": seed,
    }
    out = run(builder, warp_program(case.key()), buffers, params)
    return {"dst": out["dst"][:, case.shift :], "states": out["states"], "aggs": out["aggs"]}


def _positions(algorithm: str | None, lanes: int, ipt: int) -> list[int]:
    """Tile position of each lane's items in lane-major order (blocked, or striped)."""
    if algorithm == "striped":
        return [i * lanes + lane for lane in range(lanes) for i in range(ipt)]
    return list(range(lanes * ipt))


def warp_reference(case: WarpCase, src: Any, state: Any) -> dict[str, Any]:
    """What `case`'s kernel writes: each logical warp scans its row's tiles, carrying its prefix."""
    dtype = np.dtype(case.dtype)
    rows, wt, lanes = src.shape[0], case.warp_tile, case.lanes
    dst = np.full(src.shape, bc.SENTINEL, case.array_dtype)
    states = np.zeros((rows, case.tiles, lanes), dtype)
    aggs = np.zeros((rows, case.tiles, lanes), dtype)
    pad = dtype.type(0 if case.oob else bc.SENTINEL)
    op = case.op
    with np.errstate(all="ignore"):
        for r in range(rows):
            carried = dtype.type(state[r])
            for t in range(case.tiles):
                valid = case.length - t * wt
                if case.valid_items is not None:
                    valid = min(valid, case.valid_items)
                pos = _positions(case.load, lanes, case.items_per_thread)
                x = [dtype.type(src[r, t * wt + p]) if p < valid else pad for p in pos]
                aggregate = x[0]
                for v in x[1:]:
                    aggregate = dtype.type(_apply(op, aggregate, v))
                seed: Any = None
                if case.prefix == "running":
                    seed, carried = carried, dtype.type(_apply(op, carried, aggregate))
                elif case.initial_value is not None:
                    seed = dtype.type(case.initial_value)
                elif case.mode == "exclusive":
                    seed = dtype.type(0)
                out, acc = [], seed
                for v in x:
                    if case.mode == "exclusive":
                        out.append(acc)
                    acc = v if acc is None else dtype.type(_apply(op, acc, v))
                    if case.mode == "inclusive":
                        out.append(acc)
                if case.entry == "none":
                    out = x
                store_pos = _positions(case.store, lanes, case.items_per_thread)
                for k, p in enumerate(store_pos):
                    if p < valid and p < wt:
                        dst[r, t * wt + p] = out[k]
                states[r, t] = carried if case.prefix == "running" else state[r]
                aggs[r, t] = aggregate
    return {"dst": dst, "states": states, "aggs": aggs}


# ---------------------------------------------------------------------------
# differences and run heads


@dataclass(frozen=True)
class NeighbourCase:
    """A tile loop of ``block.adjacent_difference`` or ``block.flag_heads`` over each row."""

    function: str = "adjacent_difference"
    dtype: str = "int32"
    flags: str = "int32"  # flag_heads: the flags' dtype
    block: tuple[int, int, int] = (64, 1, 1)
    items_per_thread: int = 4
    carry: bool = True
    out: bool = False  # adjacent_difference: into out= (else in place)
    op: str | None = None  # "gap": a user operator (previous and item more than 2 apart)
    temp_storage: str = "implicit"
    tiles: int = 3
    short: int = 0

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def length(self) -> int:
        return self.tiles * self.threads * self.items_per_thread - self.short

    @property
    def result_dtype(self) -> Any:
        return (
            _dtype(self.dtype) if self.function == "adjacent_difference" else np.dtype(self.flags)
        )

    def key(self) -> NeighbourCase:
        """The case's harness key: the tiles and the row's length are run-time values."""
        return NeighbourCase(**{**self.__dict__, "tiles": 1, "short": 0})


def _gap_difference(a: Any, b: Any) -> Any:
    return a - b if a - b > 2 else 0


def _gap_head(previous: Any, item: Any) -> Any:
    return item - previous > 2


corpus.register(
    _gap_difference, "r = a - b > 2 ? static_cast<value_t>(a - b) : static_cast<value_t>(0);"
)
corpus.register(_gap_head, "r = static_cast<value_t>(b - a > 2);")


def _neighbour_plans(case: NeighbourCase) -> tuple[Any, Any]:
    dtype = _dtype(case.dtype)
    items = ArrayFact(dtype, 1, case.items_per_thread)
    load = plan_tile_io(
        function="load",
        array=ArrayFact(dtype, 1),
        items=items,
        algorithm=None,
        oob_default=None,
        temp_storage=None,
        block=case.block,
    )
    common: dict[str, Any] = {
        "function": case.function,
        "items": items,
        "carry": ArrayFact(dtype, 1, 1, memory="local") if case.carry else None,
        "temp_storage": None if case.temp_storage == "implicit" else ArrayFact(np.uint8, 1),
        "block": case.block,
    }
    if case.function == "adjacent_difference":
        op = _gap_difference if case.op == "gap" else "-"
        plan = plan_adjacent_difference(out=items if case.out else None, op=op, **common)
    else:
        flags = ArrayFact(np.dtype(case.flags), 1, case.items_per_thread)
        plan = plan_flag_heads(flags=flags, op=_gap_head if case.op == "gap" else None, **common)
    return load, plan


def neighbour_program(case: NeighbourCase) -> Program:
    """The harness of `case`: load, difference or flag, write the tile's valid results."""
    load, plan = _neighbour_plans(case)
    program = Program(f"neighbours {case}", [load, plan])
    dtype = _dtype(case.dtype)
    caller = case.temp_storage != "implicit"
    sym = program.symbol(plan)
    head = [
        "  value_t items[IPT];",
        "  result_t results[IPT];",
        "  value_t carry[1] = {a.first[0]};",
        "  const value_t* src_row = a.src + row * a.length;",
    ]
    temp: dict[str, Arg] = {}
    if caller:
        head.insert(
            0,
            "  unsigned char* temp = static_cast<unsigned char*>(::hx::shared_alloc(-1, "
            f'{sym}_temp_bytes, {sym}_temp_align < 16 ? 16 : {sym}_temp_align, "temp"));',
        )
        temp = {"temp_storage": Arg("temp", "a.temp_bytes", 1)}
    args: dict[str, Arg] = {"items": Arg("items", "IPT"), "carry": Arg("carry", "1"), **temp}
    if case.function == "flag_heads":
        args["flags"] = Arg("results", "IPT")
        copy = ""
    elif case.out:
        args["out"] = Arg("results", "IPT")
        copy = ""
    else:  # in place: the items become the differences
        copy = "    for (int i = 0; i < IPT; ++i) results[i] = items[i];"
    body = [
        "  for (long long tile = 0; tile < a.tiles; ++tile) {",
        "    for (int i = 0; i < IPT; ++i) items[i] = a.fill[0];",
        "    "
        + call(
            load,
            program.symbol(load),
            {
                "src": Arg("src_row", "a.length", dtype.itemsize),
                "offset": Arg("tile * TILE"),
                "items": Arg("items", "IPT"),
            },
        ),
        "    " + call(plan, sym, args),
        copy,
        "    for (int i = 0; i < IPT; ++i) {",
        "      const long long k = tile * TILE + rank * IPT + i;",
        "      if (k < a.length) a.out[row * a.length + k] = results[i];",
        "    }",
        "    a.carried[(row * a.tiles + tile) * THREADS + rank] = carry[0];",
        "  }",
    ]
    decl = f'extern "C" const unsigned {sym}_temp_bytes, {sym}_temp_align;' if caller else ""
    result_type = (
        "using result_t = value_t;"
        if case.function == "adjacent_difference"
        else f"using result_t = {'bool' if case.flags == 'bool' else array_decl_type(case.flags)};"
    )
    program.driver_parts = [
        decl,
        "namespace hostexec_driver {",
        value_decls(dtype),
        result_type,
        f"constexpr int THREADS = {case.threads};",
        f"constexpr int IPT = {case.items_per_thread};",
        "constexpr long long TILE = THREADS * IPT;",
        "struct Args { value_t* src; result_t* out; value_t* carried; value_t* fill; "
        "value_t* first; long long length, tiles; };",
        *_kernel(head, body),
        "}  // namespace hostexec_driver",
        _main(
            program,
            [
                ("src", "value_t"),
                ("out", "result_t"),
                ("carried", "value_t"),
                ("fill", "value_t"),
                ("first", "value_t"),
            ],
            ["length", "tiles"],
            _launch('static_cast<unsigned>(h.param("rows")), 1, 1', case.block),
        ),
    ]
    return program


def array_decl_type(name: str) -> str:
    """The C++ type of an integer flags dtype."""
    return {
        "int8": "signed char",
        "int16": "short",
        "int32": "int",
        "int64": "long long",
        "uint8": "unsigned char",
        "uint16": "unsigned short",
        "uint32": "unsigned int",
        "uint64": "unsigned long long",
    }[name]


FIRST = 7


def run_neighbours(builder: Builder, case: NeighbourCase, src: Any, *, seed: int = 0) -> Any:
    """(the rows' results, every thread's carry[0] after each tile)."""
    dtype = _dtype(case.dtype)
    rows = src.shape[0]
    buffers = {
        "src": src,
        "out": np.zeros((rows, case.length), case.result_dtype),
        "carried": np.zeros((rows, case.tiles, case.threads), dtype),
        "fill": np.zeros(1, dtype),
        "first": np.full(1, FIRST, dtype),
    }
    params = {"rows": rows, "length": case.length, "tiles": case.tiles, "seed": seed}
    got = run(builder, neighbour_program(case.key()), buffers, params)
    return got["out"], got["carried"]


def neighbour_inputs(case: NeighbourCase, rows: int, seed: int) -> Any:
    """Rows of runs of small integers (exact in every dtype)."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 5, (rows, case.length)) * (rng.random((rows, case.length)) < 0.4)
    return (np.cumsum(steps, axis=1) % 60).astype(_dtype(case.dtype))


def neighbour_reference(case: NeighbourCase, src: Any) -> tuple[Any, Any]:
    """(the rows' results, the carry after each tile: the tile's last item, the fill past
    the row's end; without carry= the first item is kept or flagged)."""
    dtype = _dtype(case.dtype)
    rows = src.shape[0]
    tile = case.threads * case.items_per_thread
    wide = src.astype(np.float64)
    previous = np.concatenate([np.full((rows, 1), float(FIRST)), wide[:, :-1]], axis=1)
    if case.function == "adjacent_difference":
        diff = wide - previous
        if case.op == "gap":
            diff = np.where(diff > 2, diff, 0)
        with np.errstate(over="ignore"):
            want = diff.astype(np.int64).astype(dtype) if dtype.kind in "iu" else diff.astype(dtype)
        if not case.carry:
            for t in range(case.tiles):
                want[:, t * tile] = src[:, t * tile]
    else:
        heads = wide - previous > 2 if case.op == "gap" else wide != previous
        want = heads.astype(case.result_dtype)
        if not case.carry:
            want[:, ::tile] = 1
    carried = np.full((rows, case.tiles, case.threads), FIRST, dtype)
    if case.carry:
        for t in range(case.tiles):
            last = min((t + 1) * tile, case.length) - 1
            padded = (t + 1) * tile > case.length
            carried[:, t, :] = 0 if padded else src[:, last][:, None]
    return want, carried
