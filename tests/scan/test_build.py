# SPDX-License-Identifier: Apache-2.0
"""The build layer works for any front end: callbacks come from the front end's
compiler, are cached under its name, and providers are compiled once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import statefn
from scan import _build, _cache
from scan._plan import ArrayFact
from scan._primitives.block_scan._plan import plan_scan

pytestmark = pytest.mark.nvrtc


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


class Compiler:
    """A front end's callback compiler that counts its compilations."""

    def __init__(self, frontend: str) -> None:
        self.frontend = frontend
        self.calls = 0

    def __call__(self, descriptor: Any, value_dtype: Any, cc: Any) -> _build.CompiledCallback:
        from scan._numba_cuda._lowering import CALLBACKS

        self.calls += 1
        return CALLBACKS(descriptor, value_dtype, cc)


def _plan() -> Any:
    return plan_scan(
        function="inclusive_sum",
        values=ArrayFact(np.int32, 1, 4),
        out=None,
        mode="inclusive",
        scan_op="+",
        initial_value=None,
        prefix_op=running_total,
        prefix_state=ArrayFact(np.int64, 1, 1),
        block_aggregate=None,
        algorithm="raking",
        temp_storage=None,
        block=(64, 1, 1),
    )


def test_callbacks_are_compiled_by_the_front_end_and_cached_under_its_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(tmp_path))
    _cache._reset_default_cache()
    try:
        first, second = Compiler("front-end-a 1.0"), Compiler("front-end-b 2.0")
        built = _build.build(_plan(), (9, 0), first)
        again = _build.build(_plan(), (9, 0), first)
        other = _build.build(_plan(), (9, 0), second)
    finally:
        _cache._reset_default_cache()
    assert (first.calls, second.calls) == (1, 1)  # one entry per front end
    assert built == again
    assert built.symbol == _plan().symbol
    assert built.link[0].symbol == built.symbol
    assert len(built.link) == 2  # the provider, then the callback
    assert built.link[1].symbol.startswith("statefn_stateful_")
    assert other.link[0] == built.link[0]  # one provider unit for both front ends


def test_plans_without_callbacks_need_no_compiler() -> None:
    layout = _build.temp_storage_layout(
        "scan", np.dtype(np.int32), 64, 4, algorithm=None, cc=(9, 0)
    )
    assert layout.size > 0
    assert layout.alignment > 0
    with pytest.raises(TypeError, match="needs a callback compiler"):
        _build.build(_plan(), (9, 0), None)


def test_a_kernel_build_does_not_read_temp_storage_layouts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Only ``block.temp_storage`` links a unit to PTX for its layout; a kernel's
    build compiles its one unit and nothing else."""
    from numba import cuda

    import scan
    from scan import block

    def kernel(src: Any, dst: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items)
        block.inclusive_sum(items, items)
        block.store(dst, 0, items)

    from scan import _compile

    reads: list[str] = []
    read_layouts = _compile._read_layouts

    def counted(name: str, *args: Any) -> Any:
        reads.append(name)
        return read_layouts(name, *args)

    monkeypatch.setattr(_compile, "_read_layouts", counted)
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(tmp_path))
    _cache._reset_default_cache()
    try:
        scan.compile(cuda.jit(kernel), "void(int32[::1], int32[::1])", cc=(9, 0), block=64)
        kernel_stats, kernel_reads = _cache.stats(), len(reads)
        block.temp_storage("scan", np.int32, 64, 4, algorithm=None, cc=(9, 0))
        query_stats = _cache.stats()
    finally:
        _cache._reset_default_cache()
    assert kernel_stats["builds:provider"] == 1
    assert kernel_reads == 0
    assert "builds:layout" not in kernel_stats
    assert query_stats["builds:layout"] == 1
    assert len(reads) == 1
