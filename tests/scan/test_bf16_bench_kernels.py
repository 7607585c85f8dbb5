# SPDX-License-Identifier: Apache-2.0
"""bench/bf16_rowscan.py's kernels compile for sm_90, without a GPU.

Two of the project's configurations (every default; the tile I/O and scan
algorithm named as CUB's) go through ``scan.compile`` with the launch's block
size, as the benchmark's build step does, and use no local memory (the whole
set is ``bench/bf16_rowscan.py --build-only``). Where nvcc is found, one CUB
unit builds the way the benchmark builds it and defines every kernel the
benchmark asks it for. Timings are the benchmark's business, not this test's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.bench import BENCH, load_bench
from helpers.kernels import CC

import scan

pytestmark = pytest.mark.nvrtc

bf16_rowscan = load_bench("bf16_rowscan")
toolchain = load_bench("_toolchain")

CASES = [
    bf16_rowscan.Config(256, 8, "default", "default"),
    bf16_rowscan.Config(128, 8, "warp_scans", "warp_transpose"),
]


@pytest.mark.parametrize("cfg", CASES, ids=[cfg.label for cfg in CASES])
def test_project_kernel_links_for_sm90(cfg: Any) -> None:
    kernel = bf16_rowscan.make_kernel(cfg)
    cubin = scan.compile(kernel, bf16_rowscan.project_signature(), cc=CC, block=cfg.threads)
    assert isinstance(cubin, bytes)
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{cfg}: {usage.local} bytes of local memory a thread"


def test_configurations() -> None:
    cfgs = bf16_rowscan.configs()
    pairs = set(bf16_rowscan.THREADS_ITEMS)
    assert {(c.threads, c.items) for c in cfgs} == pairs
    assert len(cfgs) == len(pairs) * 5  # every default, then 2 tile I/O x 2 scan algorithms
    cub = bf16_rowscan.cub_configs(cfgs)
    assert len(cub) == len(pairs) * 4
    assert {c.algo for c in cub} == set(bf16_rowscan.CUB_ALGORITHMS)
    assert set(bf16_rowscan.configs(quick=True)) <= set(cfgs)
    for cols in (2048, 65536):
        space = bf16_rowscan.triton_configs(False, cols)
        assert space
        assert all(4 <= c.block // (32 * c.warps) <= 16 for c in space)
        assert all(c.block <= max(cols, 1024) for c in space)
    # 8192 x 65536 and 262144 x 2048 bfloat16: 1 GiB each way
    assert {r * c * 2 for r, c in bf16_rowscan.SHAPES} == {1 << 30}


def test_cub_unit_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nvcc = load_bench("_toolchain").find_tool("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found")
    source = (BENCH / "cub_bf16_rowscan.cu").read_text()
    for needle in ("cub::BlockLoad<", "cub::BlockScan<float", "__float2bfloat16_rn"):
        assert needle in source
    monkeypatch.syspath_prepend(str(BENCH))  # the build's own imports (_harness, _toolchain)
    cfgs = [c for c in bf16_rowscan.configs() if (c.threads, c.items) == (256, 8)]
    (unit,) = bf16_rowscan.build_cub(cfgs, tmp_path, CC)
    assert unit.ok, unit.message
    symbols = set(toolchain.cubin_usage(unit.cubin.read_bytes()))
    assert symbols == {c.symbol for c in unit.kernels}
    assert len(unit.kernels) == 4
