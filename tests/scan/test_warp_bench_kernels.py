# SPDX-License-Identifier: Apache-2.0
"""bench/warp_bench.py's project kernels compile and link for sm_90, without a GPU.

Every configuration the benchmark can run (each ITEMS x warps a block of both
project variants, and the docs' program as ``default``) goes through
``scan.compile`` with the launch's block size, as the benchmark's build step
does; the linked cubin uses no local memory. The CUB kernels the benchmark
asks bench/cub_warp.cu for are the ones its macros define. Timings are the
benchmark's business, not this test's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers.bench import BENCH, load_bench
from helpers.kernels import CC

import scan

pytestmark = pytest.mark.nvrtc


warp_bench = load_bench("warp_bench")
toolchain = load_bench("_toolchain")

CASES = warp_bench.configs(variants=warp_bench.PROJECT_VARIANTS)


@pytest.mark.parametrize("cfg", CASES, ids=[cfg.label for cfg in CASES])
def test_project_kernel_links_for_sm90(cfg: Any) -> None:
    kernel = warp_bench.make_kernel(cfg)
    cubin = scan.compile(kernel, warp_bench.project_signature(), cc=CC, block=cfg.threads)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{cfg.label}: {usage.local} bytes of local memory a thread"


def test_default_configurations() -> None:
    # five ITEMS x three warps a block, then the docs' program
    cfgs = warp_bench.configs()
    assert len(cfgs) == 16
    assert cfgs[-1] == warp_bench.DEFAULT
    assert (cfgs[-1].items, cfgs[-1].warps) == (4, 4)
    natural = [c for c in cfgs if c.variant == "warp_io"]
    assert {(c.items, c.warps) for c in natural} == {
        (i, w) for i in warp_bench.ITEMS for w in warp_bench.WARPS
    }
    assert set(warp_bench.configs(quick=True)) <= set(cfgs)
    both = warp_bench.configs(variants=warp_bench.PROJECT_VARIANTS)
    assert len(both) == 46
    assert sum(c.variant == "uindex" for c in both) == 15
    assert sum(c.variant == "blocked" for c in both) == 15
    cub = warp_bench.cub_configs(cfgs)
    assert len(cub) == 15 * len(warp_bench.CUB_IO)
    assert {c.variant for c in cub} == set(warp_bench.CUB_IO)
    assert all(c.threads == 32 * c.warps for c in cfgs)
    assert warp_bench.Config(4, 8).grid(17) == 3


def test_cub_source_defines_every_kernel() -> None:
    source = (BENCH / "cub_warp.cu").read_text()
    body = re.search(r"namespace io {(.*?)}  // namespace io", source, re.S)
    assert body is not None
    assert set(re.findall(r"struct (\w+) {", body.group(1))) == set(warp_bench.CUB_IO)
    assert "warp_rowscan_w##WARPS##_i##ITEMS##_##IO" in source
    cfg = warp_bench.Config(8, 4, "transpose")
    assert cfg.symbol == "warp_rowscan_w4_i8_transpose"
    assert warp_bench._unit_line(cfg) == "WARP_ROWSCAN_KERNEL(4, 8, transpose)"


def test_docs_program_is_the_default() -> None:
    # ``default`` runs docs/warp.md's kernel itself, at the ITEMS the docs set
    example = warp_bench.docs_example()
    assert warp_bench.DEFAULT.items == example.ITEMS
    assert warp_bench.make_kernel(warp_bench.DEFAULT) is example.row_cumsum_per_warp
