# SPDX-License-Identifier: Apache-2.0
"""Warp tile I/O's plans, refusals and providers (``scan._primitives.warp_io``).

The providers are compiled by NVRTC against the pip wheels' CCCL and, when
one is found, a CUDA 13.0 toolkit's CCCL 3.0 (the GPU machine's headers).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cccl import compile_variants_with_cccl_3_0, skip_reason, toolkit_cccl

from scan import PlanError, ScanTypeError
from scan._build import _source
from scan._codegen import render_group
from scan._compile import compile_provider
from scan._plan import ArrayFact, ScalarFact, TupleFact
from scan._primitives.warp_io import ALGORITHMS, SPEC, WarpIOPlan, plan_warp_io

PAIR = np.dtype([("c", np.float64), ("g", np.float64)])


def io_plan(
    function: Any = "load",
    dtype: Any = np.int32,
    ipt: int = 4,
    *,
    lanes: object = 32,
    algorithm: object = None,
    oob: Any = None,
    block: tuple[int, int, int] = (64, 1, 1),
    array: ArrayFact | None = None,
    items: Any = None,
) -> WarpIOPlan:
    """The plan of one ``warp.load``/``warp.store`` call; defaults: int32, 32 lanes x 4 items."""
    return plan_warp_io(
        function=function,
        array=array if array is not None else ArrayFact(dtype, 1, None, True, "global"),
        items=items if items is not None else ArrayFact(dtype, 1, ipt, True, "local"),
        algorithm=algorithm,
        oob_default=oob,
        lanes=lanes,
        block=block,
    )


def render(plan: WarpIOPlan) -> str:
    return SPEC.render(plan, [], None, None)


# ---------------------------------------------------------------- plans and refusals


def test_defaults() -> None:
    plan = io_plan()
    assert plan.algorithm == ALGORITHMS[0] == "vectorize"
    assert (plan.direction, plan.lanes, plan.items_per_thread) == ("load", 32, 4)
    assert plan.warp_tile == 128
    assert not plan.has_oob_default
    assert io_plan(lanes=4, ipt=3).warp_tile == 12
    assert io_plan("store").function == "warp.store"
    assert io_plan().symbol.startswith("statefn_scan_warp_load_")
    assert io_plan("store").symbol.startswith("statefn_scan_warp_store_")


def test_vector_stores() -> None:
    assert io_plan("store", np.int32, 4).vector_stores == 4
    assert io_plan("store", np.int32, 8).vector_stores == 4
    assert io_plan("store", np.int32, 2).vector_stores == 2
    assert io_plan("store", np.int32, 3).vector_stores == 1
    assert io_plan("store", np.int8, 4).vector_stores == 4
    assert io_plan("store", np.float64, 4).vector_stores == 1  # wider than 4 bytes
    assert io_plan("store", PAIR, 4).vector_stores == 1
    assert io_plan("store", np.int32, 4, algorithm="direct").vector_stores == 1
    assert io_plan("store", np.int32, 4, algorithm="striped").vector_stores == 1


def test_keys_differ_by_what_the_code_depends_on() -> None:
    base = io_plan()
    others = [
        io_plan(lanes=16),
        io_plan(lanes=1),
        io_plan(algorithm="direct"),
        io_plan(algorithm="striped"),
        io_plan("store"),
        io_plan(oob=ScalarFact(np.int32)),
        io_plan(ipt=3),
        io_plan(dtype=np.float64),
        io_plan(block=(128, 1, 1)),
    ]
    keys = {base.key, *(p.key for p in others)}
    assert len(keys) == len(others) + 1
    assert len({base.symbol, *(p.symbol for p in others)}) == len(others) + 1
    assert io_plan(algorithm="vectorize").key == base.key  # the default, spelled out


def test_items_must_be_a_local_array() -> None:
    with pytest.raises(ScanTypeError, match="items must be a 1-D local array"):
        io_plan(items=ScalarFact(np.int32))


def test_the_array_must_be_one_contiguous_row() -> None:
    with pytest.raises(ScanTypeError, match=r"src must be a 1-D array \(got 2-D\); index a row"):
        io_plan(array=ArrayFact(np.int32, 2))
    with pytest.raises(ScanTypeError, match=r"dst must be a 1-D array \(got 2-D\)"):
        io_plan("store", array=ArrayFact(np.int32, 2))
    with pytest.raises(ScanTypeError, match="src must be C-contiguous"):
        io_plan(array=ArrayFact(np.int32, 1, None, False))


def test_items_and_array_have_one_dtype() -> None:
    with pytest.raises(ScanTypeError, match="items have dtype int64 but src has int32"):
        io_plan(items=ArrayFact(np.int64, 1, 4, True, "local"))
    with pytest.raises(ScanTypeError, match="items have dtype float32 but dst has float64"):
        io_plan("store", np.float64, items=ArrayFact(np.float32, 1, 4, True, "local"))


def test_algorithms() -> None:
    for algorithm in ALGORITHMS:
        assert io_plan(algorithm=algorithm).algorithm == algorithm
    for algorithm in ["transpose", "warp_transpose", "VECTORIZE", 3]:
        with pytest.raises(PlanError, match="algorithm must be one of 'vectorize', 'direct'"):
            io_plan(algorithm=algorithm)


def test_oob_default_is_for_loads() -> None:
    with pytest.raises(PlanError, match="oob_default= only applies to load"):
        io_plan("store", oob=ScalarFact(np.int32))
    assert io_plan(oob=ScalarFact(np.int32)).has_oob_default


@pytest.mark.parametrize("lanes", [0, 3, 12, 33, 64, True, "32"])
def test_lanes_must_be_a_power_of_two_up_to_32(lanes: object) -> None:
    with pytest.raises(PlanError, match="lanes= must be a literal power of two from 1 to 32"):
        io_plan(lanes=lanes)


def test_the_block_must_hold_whole_logical_warps() -> None:
    with pytest.raises(PlanError, match="not a multiple of lanes=32"):
        io_plan(block=(48, 1, 1))
    with pytest.raises(PlanError, match="not a multiple of lanes=32"):
        io_plan("store", block=(48, 1, 1))
    assert io_plan(block=(48, 1, 1), lanes=16).lanes == 16
    assert io_plan(block=(4, 3, 2), lanes=8).block == (4, 3, 2)


def test_record_oob_default() -> None:
    assert io_plan(dtype=PAIR, ipt=2, oob=TupleFact((np.float64, np.float64))).has_oob_default
    assert io_plan(dtype=PAIR, ipt=2, oob=TupleFact((np.int32, np.float32))).has_oob_default
    assert io_plan(dtype=PAIR, ipt=2, oob=ScalarFact(PAIR)).has_oob_default
    for wrong in [(np.float64,), (np.float64, np.float64, np.float64)]:
        with pytest.raises(ScanTypeError, match=r"oob_default is a tuple of \(.*\) but values are"):
            io_plan(dtype=PAIR, ipt=2, oob=TupleFact(wrong))
    with pytest.raises(ScanTypeError, match="oob_default is a tuple but values are int32"):
        io_plan(oob=TupleFact((np.int32, np.int32)))
    other = np.dtype([("c", np.float32), ("g", np.float32)])
    with pytest.raises(ScanTypeError, match="a record operand must have exactly the values'"):
        io_plan(dtype=PAIR, ipt=2, oob=ScalarFact(other))


# ---------------------------------------------------------------- the rendered C++


def test_vectorized_loads() -> None:
    text = render(io_plan())
    assert "if (valid >= 128) {" in text
    assert "cub::LoadDirectBlockedVectorized(lane, p, thread_items);" in text
    assert "cub::LoadDirectBlocked(lane, p, thread_items, " in text  # the partial tile
    assert "cub::RowMajorTid(64, 1, 1) % 32" in text
    # records and odd counts too: CUB checks the alignment and falls back itself
    assert "LoadDirectBlockedVectorized" in render(io_plan(dtype=PAIR, ipt=2))
    assert "LoadDirectBlockedVectorized" in render(io_plan(dtype=np.int8, ipt=3))
    assert "Vectorized" not in render(io_plan(algorithm="direct"))


def test_vectorized_stores_check_the_alignment() -> None:
    text = render(io_plan("store", np.int32, 4))
    assert "% 16 == 0) cub::StoreDirectBlockedVectorized(lane, p, thread_items); " in text
    assert "else cub::StoreDirectBlocked(lane, p, thread_items);" in text
    assert "% 8 == 0) cub::StoreDirectBlockedVectorized" in render(io_plan("store", np.int32, 2))
    assert "% 4 == 0) cub::StoreDirectBlockedVectorized" in render(io_plan("store", np.int8, 4))
    for plan in [
        io_plan("store", PAIR, 2),
        io_plan("store", np.float64, 4),
        io_plan("store", np.int32, 3),
        io_plan("store", np.int32, 4, algorithm="direct"),
    ]:
        text = render(plan)
        assert "Vectorized" not in text
        assert "cub::StoreDirectBlocked(lane, p, thread_items);" in text
        assert "cub::StoreDirectBlocked(lane, p, thread_items, " in text


def test_striped() -> None:
    text = render(io_plan(lanes=8, algorithm="striped", ipt=3))
    assert "if (valid >= 24) {" in text
    assert "cub::LoadDirectStriped<8>(lane, p, thread_items);" in text
    assert "cub::LoadDirectStriped<8>(lane, p, thread_items, static_cast<int>(" in text
    assert "% 8;" in text
    text = render(io_plan("store", lanes=4, algorithm="striped"))
    assert "cub::StoreDirectStriped<4>(lane, p, thread_items);" in text
    assert "Blocked" not in text


def test_the_partial_tile_is_guarded() -> None:
    guard = "static_cast<int>(valid > 0 ? valid : 0)"
    text = render(io_plan(oob=ScalarFact(np.int32)))
    assert (
        f"cub::LoadDirectBlocked(lane, p, thread_items, {guard}, "
        "*static_cast<const value_t*>(oob_default));"
    ) in text
    text = render(io_plan())
    assert f"cub::LoadDirectBlocked(lane, p, thread_items, {guard});" in text
    assert "static_cast<const value_t*>(oob_default)" not in text  # the items keep their values
    text = render(io_plan(algorithm="striped", oob=ScalarFact(np.int32)))
    assert f"cub::LoadDirectStriped<32>(lane, p, thread_items, {guard}, *static_cast" in text
    assert f"cub::StoreDirectBlocked(lane, p, thread_items, {guard});" in render(io_plan("store"))


def test_no_shared_memory_and_no_barrier() -> None:
    for plan in [io_plan(), io_plan("store", algorithm="striped")]:
        text = render(plan)
        assert "cub::NullType" in text
        assert "__syncthreads" not in text
        assert "__syncwarp" not in text
        assert not SPEC.shares_storage(plan)


# ---------------------------------------------------------------- NVRTC

_DTYPES = {"int32": np.dtype(np.int32), "float64": np.dtype(np.float64), "int8": np.dtype(np.int8)}

#: Items per thread by algorithm (1 for loads with oob_default) and lanes by dtype.
_ITEMS = {"vectorize": 4, "direct": 3, "striped": 2}
_LANES = {"int32": 32, "float64": 4, "int8": 16, "record": 1}

#: (direction, algorithm, dtype, oob_default, items per thread, lanes): every
#: direction, algorithm and dtype, with and without oob_default for loads.
_PLANS = [
    (direction, algorithm, dtype, oob, 1 if oob else _ITEMS[algorithm], _LANES[dtype])
    for direction, algorithm, dtype, oob in itertools.product(
        ["load", "store"], ALGORITHMS, list(_LANES), [False, True]
    )
    if direction == "load" or not oob
]

#: The CCCL 3.0 check's units: each (direction, algorithm)'s plans in one unit
#: (one NVRTC run each: the parsing of CUB's headers is most of a run's time).
_VARIANTS = sorted({(v[0], v[1]) for v in _PLANS})


def variant_plan(
    direction: str, algorithm: str, dtype: str, oob: bool, ipt: int, lanes: int
) -> WarpIOPlan:
    value = PAIR if dtype == "record" else _DTYPES[dtype]
    fact = TupleFact((np.float64, np.float64)) if dtype == "record" else ScalarFact(value)
    return io_plan(
        direction, value, ipt, lanes=lanes, algorithm=algorithm, oob=fact if oob else None
    )


def variant_source(direction: str, algorithm: str) -> str:
    """The providers of one direction and algorithm, every dtype and oob_default, as one unit."""
    plans = [variant_plan(*v) for v in _PLANS if v[:2] == (direction, algorithm)]
    name = f"warp_{direction}_{algorithm}"
    units = [
        (f"{name}_{i}", SPEC.render(plan, [], f"{name}_{i}", None), False)
        for i, plan in enumerate(plans)
    ]
    return render_group(name, units)


def test_the_variants_cover_every_combination() -> None:
    assert len(_PLANS) == 3 * 4 * 2 + 3 * 4
    assert len({v[:4] for v in _PLANS}) == len(_PLANS)
    # the vector stores of 4-byte and 1-byte items are among them
    vector = [variant_plan(*v).vector_stores for v in _PLANS if v[0] == "store"]
    assert vector.count(4) == 2
    assert len(_VARIANTS) == 6
    text = variant_source("load", "vectorize")
    assert text.count("cub::LoadDirectBlockedVectorized(") == 8  # 4 dtypes x oob_default


@pytest.mark.nvrtc
def test_every_variant_compiles() -> None:
    for variant in _PLANS:
        plan = variant_plan(*variant)
        compile_provider(plan.symbol, _source(plan), cc=(9, 0), what=f"warp io {variant}")


@pytest.mark.nvrtc
@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_every_variant_compiles_with_cccl_3_0(tmp_path: Path) -> None:
    assert compile_variants_with_cccl_3_0(__file__, tmp_path) == f"ok {len(_VARIANTS)}"
