# SPDX-License-Identifier: Apache-2.0
"""The providers a kernel calls compile in one NVRTC unit, and units never clash.

A unit costs mostly the parsing of CUB's headers, so the calls typed for one
kernel (and the device functions it calls) compile together. Each unit's
entry points carry a suffix of their own, so a kernel may link several units
that hold the same provider.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.kernels import CC, compile_kernel, link_cubin, typing_error
from helpers.plans import scan_plan
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import _build, _cache, block
from scan._codegen import group_storage, render_group
from scan._plan import ArrayFact
from scan._primitives.block_scan._plan import plan_scan
from scan._primitives.tile_io._plan import plan_tile_io

pytestmark = pytest.mark.nvrtc

I32 = types.int32[::1]


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _provider_builds() -> int:
    return int(_cache.stats().get("builds:provider", 0))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache folder, so build counts mean NVRTC runs."""
    monkeypatch.setenv("STATEFN_SCAN_CACHE_DIR", str(tmp_path / "cache"))
    _cache._reset_default_cache()
    yield
    monkeypatch.undo()
    _cache._reset_default_cache()


def test_one_kernel_one_unit(fresh_cache: None) -> None:
    # 96 threads x 3 items: a configuration no other test compiles
    def k(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(3, np.int32)
        for base in range(0, src.shape[0], 288):
            block.load(src, base, items, threads=96)
            block.inclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, threads=96
            )
            block.exclusive_sum(items, items, threads=96)
            block.store(dst, base, items, threads=96)

    before = _provider_builds()
    codes = compile_kernel(k, (I32, I32))
    assert _provider_builds() - before == 1  # load, two scans and store: one NVRTC run
    names = sorted(c.name for c in codes[1:])
    assert [n for n in names if n.startswith("statefn_scan_")] == [
        n for n in names if n.startswith("statefn_scan_group_")
    ]
    assert link_cubin(codes)[:4] == b"\x7fELF"


def test_each_kernel_has_a_unit_of_its_own(fresh_cache: None) -> None:
    def first(src, dst):
        items = cuda.local.array(2, np.int32)
        block.load(src, 0, items, threads=112)
        block.inclusive_sum(items, items, threads=112)
        block.store(dst, 0, items, threads=112)

    def second(src, dst):
        items = cuda.local.array(2, np.int32)
        block.load(src, 0, items, threads=112)
        block.exclusive_sum(items, items, threads=112)  # new
        block.store(dst, 0, items, threads=112)

    compile_kernel(first, (I32, I32))
    before = _provider_builds()
    codes = compile_kernel(second, (I32, I32))
    assert _provider_builds() - before == 1  # load, exclusive sum and store together
    units = [c.name for c in codes[1:] if c.name.startswith("statefn_scan_")]
    assert len(units) == 1, units
    assert link_cubin(codes)[:4] == b"\x7fELF"
    again = compile_kernel(second, (I32, I32))  # the same calls: the same unit
    assert _provider_builds() - before == 1
    assert [c.name for c in again[1:]] == [c.name for c in codes[1:]]


def test_a_kernel_sharing_a_call_gets_storage_sized_by_its_own_calls() -> None:
    # The first kernel's warp_transpose exchanges overflow shared memory; the
    # second has the same scan but vector tile I/O and must not inherit the
    # first kernel's overlaid buffer.
    def big(src, dst):
        items = cuda.local.array(16, np.int32)
        for base in range(0, src.shape[0], 16384):
            block.load(src, base, items, algorithm="warp_transpose")
            block.inclusive_sum(items, items)
            block.store(dst, base, items, algorithm="warp_transpose")

    def small(src, dst):
        items = cuda.local.array(16, np.int32)
        for base in range(0, src.shape[0], 16384):
            block.load(src, base, items, algorithm="vectorize")
            block.inclusive_sum(items, items)
            block.store(dst, base, items, algorithm="vectorize")

    # too much shared memory is named with the fix
    with pytest.raises(scan.CompileError, match=r"kernel \S*big needs \d+ bytes of static shared"):
        scan.compile(big, (I32, I32), cc=CC, block=1024)
    assert scan.compile(small, (I32, I32), cc=CC, block=1024)[:4] == b"\x7fELF"


def _io_plan(direction: str, threads: int, dtype: type = np.float32):
    dt = np.dtype(dtype)
    return plan_tile_io(
        function=direction,  # type: ignore[arg-type]
        array=ArrayFact(dtype=dt, ndim=1),
        items=ArrayFact(dtype=dt, ndim=1, length=4),
        algorithm=None,
        oob_default=None,
        temp_storage=None,
        block=(threads, 1, 1),
    )


def _callback_scan_plan(algorithm: str | None = None, auto_sync: bool = True):
    """An int32 inclusive sum of 64 threads x 4 items with running_total as prefix_op."""
    return plan_scan(
        function="inclusive_sum",
        values=ArrayFact(dtype=np.dtype(np.int32), ndim=1, length=4),
        out=None,
        mode="inclusive",
        scan_op="+",
        initial_value=None,
        prefix_op=running_total,
        prefix_state=ArrayFact(dtype=np.dtype(np.int64), ndim=1, length=1),
        block_aggregate=None,
        algorithm=algorithm,
        temp_storage=None,
        block=(64, 1, 1),
        auto_sync=auto_sync,
    )


def test_units_holding_the_same_provider_link_together() -> None:
    from cuda.core import Linker, LinkerOptions, ObjectCode

    load, store, other = _io_plan("load", 48), _io_plan("store", 48), _io_plan("load", 40)
    one = _build.build(load, CC, None, together=[load, store])
    two = _build.build(load, CC, None, together=[load, other])
    assert one.symbol != two.symbol  # the same provider, a local name in each unit
    assert one.symbol.startswith(load.symbol)
    assert two.symbol.startswith(load.symbol)
    objs = [ObjectCode.from_ltoir(o.link[0].ltoir) for o in (one, two)]
    ptx = Linker(*objs, options=LinkerOptions(arch="sm_90", ptx=True, link_time_optimization=True))
    text = ptx.link("ptx").code
    text = text.decode() if isinstance(text, bytes) else str(text)
    # each unit's copy of the load keeps its own name: nothing is defined twice
    assert f"{one.symbol}_temp_bytes" in text
    assert f"{two.symbol}_temp_bytes" in text


def test_group_source_renames_every_export_and_includes_each_header_once() -> None:
    load, store = _io_plan("load", 48), _io_plan("store", 48)
    units = [(p.symbol + "_x", _build._source(p, p.symbol + "_x"), False) for p in (load, store)]
    text = render_group("statefn_scan_group_x", units)
    assert text.count("#include <cub/block/block_load.cuh>") == 1
    assert text.count("#include <cub/block/block_store.cuh>") == 1
    for p in (load, store):
        assert f"{p.symbol}_x(" in text
        assert f"{p.symbol}_x_temp_bytes" in text
        assert f"{p.symbol}(" not in text
    assert text.count("__shared__ temp_storage_t library_temp_storage;") == 2  # one each


def test_sharing_providers_overlay_one_buffer() -> None:
    load, store = _io_plan("load", 48), _io_plan("store", 48)
    storage = group_storage("statefn_scan_group_x")
    units = [
        (p.symbol + "_x", _build._source(p, p.symbol + "_x", storage), True) for p in (load, store)
    ]
    text = render_group("statefn_scan_group_x", units)
    assert "library_temp_storage" not in text
    assert "union statefn_scan_group_x_storage_t {" in text
    assert text.count("statefn_scan_group_x_storage()") == 4  # declared, defined, used twice


def _lookback_plan(algorithm: str, reverse: bool = False):
    """An int64 inclusive sum of 128 threads x 4 items with prefix_op=scan.lookback."""
    status = np.dtype(scan.tile_status_dtype(np.int64))
    return scan_plan(
        values=ArrayFact(dtype=np.dtype(np.int64), ndim=1, length=4),
        prefix_op=scan.lookback,
        prefix_state=ArrayFact(dtype=status, ndim=1),
        algorithm=algorithm,
        reverse=reverse,
    )


def test_storage_is_shared_only_after_a_trailing_barrier() -> None:
    assert _build._shares_storage(_callback_scan_plan("raking"))
    # CUB's barrier after the callback stands in for the trailing one: a
    # following call writing the same buffer could overwrite the prefix slot
    assert not _build._shares_storage(_callback_scan_plan("warp_scans"))
    assert not _build._shares_storage(_callback_scan_plan("raking", auto_sync=False))
    assert _build._shares_storage(_io_plan("load", 64))  # warp_transpose
    # a look-back's later tiles are such a callback scan (the look-back op is
    # their callback); a reverse one ends with its exchange barrier
    assert not _build._shares_storage(_lookback_plan("warp_scans"))
    assert _build._shares_storage(_lookback_plan("raking"))
    assert _build._shares_storage(_lookback_plan("warp_scans", reverse=True))


@pytest.mark.parametrize(
    "plan",
    [
        _callback_scan_plan("warp_scans"),
        _callback_scan_plan("raking"),
        _lookback_plan("warp_scans"),
        _lookback_plan("raking"),
        _lookback_plan("warp_scans", reverse=True),
        _lookback_plan("raking", reverse=True),
    ],
    ids=lambda p: f"{'lookback' if p.lookback else 'callback'}-{p.algorithm}-{p.reverse}",
)
def test_a_provider_without_its_own_trailing_barrier_never_shares_storage(plan) -> None:
    # a shared buffer is written by the next provider with no barrier of its
    # own first: every branch of a sharing provider must end with one
    # (a look-back scan whose later tiles lacked it raced with the store after it)
    source = _build._source(plan, plan.symbol + "_x", group_storage("statefn_scan_group_x"))
    relies_on_cub = "no barrier: CUB's barrier after the prefix callback" in source
    assert not (relies_on_cub and _build._shares_storage(plan))


def test_a_kernel_overlays_its_calls_storage_as_cub_kernels_do() -> None:
    # 512 threads x 16 int32 items with warp_transpose tile I/O: 32 KiB for the
    # load's exchange and 32 KiB for the store's, more than the 48 KiB of static
    # shared memory a kernel may have unless the two overlay
    def k(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(16, np.int32)
        for base in range(0, src.shape[0], 8192):
            block.load(src, base, items, algorithm="warp_transpose")
            block.inclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, algorithm="raking"
            )
            block.store(dst, base, items, algorithm="warp_transpose")

    cubin = scan.compile(k, (I32, I32), cc=CC, block=512)
    assert cubin[:4] == b"\x7fELF"


def test_a_kernel_that_failed_typing_leaves_no_calls_behind() -> None:
    def broken(src, dst):
        items = cuda.local.array(2, np.int32)
        block.load(src, 0, items, threads=72)  # typed, then the next call is refused
        block.inclusive_sum(items, items, threads=72, initial_value=1, prefix_op=running_total)

    assert typing_error(broken, (I32, I32))  # refused after the load was typed

    def good(src, dst):
        items = cuda.local.array(2, np.int32)
        block.store(dst, 0, items, threads=64)

    from scan._numba_cuda._typing import KERNEL_GROUPS

    compile_kernel(good, (I32, I32))
    grouped = {
        plan.block
        for groups in KERNEL_GROUPS.by_library.values()
        for group in groups.values()
        for plan in group
    }
    assert (72, 1, 1) not in grouped


def test_scan_compile_output_lists_the_unit_once() -> None:
    def k(src, dst):
        items = cuda.local.array(2, np.int32)
        block.load(src, 0, items)
        block.inclusive_sum(items, items)
        block.store(dst, 0, items)

    objects = scan.compile(k, (I32, I32), cc=CC, output="ltoir", block=56)
    assert isinstance(objects, list)
    assert len(objects) == 2  # the kernel, then the unit with load, scan and store


def test_a_unit_links_without_the_callbacks_of_providers_left_uncalled() -> None:
    from cuda.core import Linker, LinkerOptions, ObjectCode

    from scan._numba_cuda._lowering import CALLBACKS

    load, with_callback = _io_plan("load", 64, np.int32), _callback_scan_plan()
    built = _build.build(load, CC, CALLBACKS, together=[load, with_callback])
    assert len(built.link) == 1  # the unit; the load calls no callback
    options = LinkerOptions(arch="sm_90", link_time_optimization=True)
    cubin = Linker(ObjectCode.from_ltoir(built.link[0].ltoir), options=options).link("cubin")
    assert b"statefn_stateful_" not in bytes(cubin.code)  # dropped with the uncalled scan
