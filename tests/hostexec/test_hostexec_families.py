# SPDX-License-Identifier: Apache-2.0
"""The generated reduce, zipped tile I/O, warp I/O and look-back code, run on the host, equal NumPy.

Every case runs in two schedules of the threads (in order, and a seeded
random interleaving); the look-back cases in three, with every block of the
grid running at once, and the runs must between them have met tiles whose
status was invalid, partial and inclusive.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hostexec import families as fam
from hostexec import lookback as lb
from hostexec.program import Arg, Program, call, run, value_decls
from hostexec.suite import LOOKBACKS, NEIGHBOURS, REDUCES, WARPS, ZIPS
from hostexec.toolchain import Builder
from scan._plan import ArrayFact
from scan._primitives.tile_io._plan import plan_tile_io


@pytest.fixture(scope="module")
def prebuilt(builder: Builder) -> Builder:
    """Every case's harness, building in parallel before the first test waits for one."""
    sources = [fam.reduce_program(c.key()).source() for c in REDUCES]
    sources += [fam.zip_program(c.key()).source() for c in ZIPS]
    sources += [fam.warp_program(c.key()).source() for c in WARPS]
    sources += [lb.lookback_program(c.key()).source() for c in LOOKBACKS]
    sources += [fam.neighbour_program(c.key()).source() for c in NEIGHBOURS]
    for source in sources:
        builder.submit(source)
    return builder


def _ids(cases: list[Any]) -> list[str]:
    return [str(i) for i in range(len(cases))]


@pytest.mark.parametrize("case", REDUCES, ids=_ids(REDUCES))
def test_reduce_equals_numpy(prebuilt: Builder, case: fam.ReduceCase) -> None:
    src = fam.reduce_inputs(case, 2, 0)
    want, defined = fam.reduce_reference(case, src)
    for seed in (0, 5):
        got = fam.run_reduce(prebuilt, case, src, seed=seed)
        np.testing.assert_array_equal(got[defined], want[defined])


@pytest.mark.parametrize("case", NEIGHBOURS, ids=_ids(NEIGHBOURS))
def test_differences_and_heads_equal_numpy(prebuilt: Builder, case: fam.NeighbourCase) -> None:
    src = fam.neighbour_inputs(case, 2, 0)
    want, carried = fam.neighbour_reference(case, src)
    for seed in (0, 5):
        got, got_carried = fam.run_neighbours(prebuilt, case, src, seed=seed)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_carried, carried)


@pytest.mark.parametrize("case", ZIPS, ids=_ids(ZIPS))
def test_zipped_io_equals_numpy(prebuilt: Builder, case: fam.ZipCase) -> None:
    src = fam.zip_inputs(case, 2, 0)
    want = fam.zip_reference(case, src)
    for seed in (0, 5):
        got = fam.run_zip(prebuilt, case, src, seed=seed)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.mark.parametrize("case", WARPS, ids=_ids(WARPS))
def test_warp_io_and_scans_equal_numpy(prebuilt: Builder, case: fam.WarpCase) -> None:
    src, state = fam.warp_inputs(case, 2, 0)
    want = fam.warp_reference(case, src, state)
    keys = ["dst", "states"] + (["aggs"] if case.aggregate else [])
    for seed in (0, 5):
        got = fam.run_warp(prebuilt, case, src, state, seed=seed)
        for key in keys:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


#: what the look-back runs met, over every case and schedule
_MET: dict[str, int] = {}


@pytest.mark.parametrize("case", LOOKBACKS, ids=_ids(LOOKBACKS))
def test_lookback_equals_numpy(prebuilt: Builder, case: lb.LookbackCase) -> None:
    src = lb.lookback_inputs(case, 0)
    want = lb.lookback_reference(case, src)
    for seed in (0, 3, 11):
        got = lb.run_lookback(prebuilt, case, src, seed=seed, counts=_MET)
        np.testing.assert_array_equal(got, want)


def test_a_deterministic_lookback_is_bitwise_the_same_in_every_schedule(
    prebuilt: Builder,
) -> None:
    """Float sums whose grouping shows in the last bits: every interleaving gives the same."""
    case = lb.LookbackCase(dtype="float32", deterministic=True, tiles=12, short=3)
    src = np.random.default_rng(3).standard_normal((1, case.length)).astype(np.float32) * 1e3
    runs = [lb.run_lookback(prebuilt, case, src, seed=seed) for seed in range(6)]
    for got in runs[1:]:
        np.testing.assert_array_equal(got.view(np.uint32), runs[0].view(np.uint32))
    want = np.cumsum(src.astype(np.float64), axis=1)
    np.testing.assert_allclose(runs[0], want, rtol=1e-4, atol=0.5)


def test_lookback_runs_met_every_status() -> None:
    if not _MET:
        pytest.skip("runs after test_lookback_equals_numpy")
    for event in ("waits on an invalid tile", "combines a partial tile", "stops at an inclusive"):
        assert any(event in met and n > 0 for met, n in _MET.items()), (event, _MET)


def _one_block(
    dtype: np.dtype[Any], pointers: list[str], body: list[str], setup: list[str]
) -> list[str]:
    """A driver running `body` in one block of 64 threads, each with ``value_t items[4]``;
    ``Args`` holds the `pointers` (``value_t*``), which `setup` sets in ``main``."""
    return [
        "namespace hostexec_driver {",
        value_decls(dtype),
        "struct Args { " + " ".join(f"value_t* {name};" for name in pointers) + " };",
        "void kernel(void* p) {",
        "  Args& a = *static_cast<Args*>(p);",
        "  value_t items[4];",
        *body,
        "}",
        "}  // namespace hostexec_driver",
        "int main(int argc, char** argv) {",
        "  using namespace hostexec_driver;",
        "  ::hx::Harness h(argc, argv);",
        "  Args a;",
        *setup,
        "  ::hx::Launch launch;",
        "  launch.grid = dim3{1, 1, 1};",
        "  launch.block = dim3{64, 1, 1};",
        "  launch.kernel = kernel;",
        "  launch.args = &a;",
        "  ::hx::launch(launch);",
        "  h.finish();",
        "  return 0;",
        "}",
    ]


def test_items_keep_their_values_after_a_store(builder: Builder) -> None:
    """A store through an exchange leaves the kernel's items as they were (CUB's exchanges its
    argument in place: the generated store hands it a copy), so a second store writes them again."""
    io: dict[str, Any] = {
        "array": ArrayFact(np.int32, 1),
        "items": ArrayFact(np.int32, 1, 4),
        "algorithm": "warp_transpose",
        "temp_storage": None,
        "block": (64, 1, 1),
    }
    load = plan_tile_io(function="load", oob_default=None, **io)
    store = plan_tile_io(function="store", oob_default=None, **io)
    program = Program("store twice", [load, store])

    def move(plan: Any, array: str, to: str) -> str:
        args = {array: Arg(to, "256", 4), "offset": Arg("0"), "items": Arg("items", "4")}
        return "  " + call(plan, program.symbol(plan), args)

    program.driver_parts = _one_block(
        np.dtype(np.int32),
        ["src", "first", "second"],
        [move(load, "src", "a.src"), move(store, "dst", "a.first"), move(store, "dst", "a.second")],
        [f'  a.{name} = h.buffer<value_t>("{name}");' for name in ("src", "first", "second")],
    )
    src = np.arange(256, dtype=np.int32)
    zeros = np.zeros(256, np.int32)
    out = run(builder, program, {"src": src, "first": zeros, "second": zeros}, {})
    np.testing.assert_array_equal(out["first"], src)
    np.testing.assert_array_equal(out["second"], src)


@pytest.mark.parametrize("shift", [0, 4])
@pytest.mark.parametrize("algorithm", ["warp_transpose", "direct", "striped"])
def test_records_move_as_words_only_where_aligned(
    builder: Builder, algorithm: str, shift: int
) -> None:
    """Records of 8 bytes aligned to 4 (two float32) move through full tiles as 8-byte words
    where the array is 8-byte aligned, and field by field where it starts 4 bytes past that:
    the same bits both ways, and no word access at a misaligned address (the runtime refuses
    one, as a GPU faults on it)."""
    pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
    io: dict[str, Any] = {
        "array": ArrayFact(pair, 1),
        "items": ArrayFact(pair, 1, 4),
        "algorithm": algorithm,
        "temp_storage": None,
        "block": (64, 1, 1),
    }
    load = plan_tile_io(function="load", oob_default=None, **io)
    store = plan_tile_io(function="store", oob_default=None, **io)
    program = Program(f"records {algorithm} shift {shift}", [load, store])
    n = 2 * 64 * 4  # two full tiles

    def move(plan: Any, array: str, to: str, offset: str) -> str:
        args = {array: Arg(to, str(n), 8), "offset": Arg(offset), "items": Arg("items", "4")}
        return "    " + call(plan, program.symbol(plan), args)

    program.driver_parts = _one_block(
        pair,
        ["src", "dst"],
        [
            "  for (int tile = 0; tile < 2; ++tile) {",
            move(load, "src", "a.src", "tile * 256"),
            move(store, "dst", "a.dst", "tile * 256"),
            "  }",
        ],
        [
            '  const int shift = static_cast<int>(h.param("shift"));',
            '  a.src = reinterpret_cast<value_t*>(h.buffer<unsigned char>("src") + shift);',
            '  a.dst = reinterpret_cast<value_t*>(h.buffer<unsigned char>("dst") + shift);',
        ],
    )
    values = np.zeros(n, pair)
    values["a"] = np.arange(n, dtype=np.float32)
    values["b"] = -np.arange(n, dtype=np.float32) - 0.5
    raw = np.zeros(n * 8 + 8, np.uint8)
    raw[shift : shift + n * 8] = values.view(np.uint8)
    out = run(builder, program, {"src": raw, "dst": np.zeros_like(raw)}, {"shift": shift})
    np.testing.assert_array_equal(out["dst"][shift : shift + n * 8], raw[shift : shift + n * 8])
