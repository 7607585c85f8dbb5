# SPDX-License-Identifier: Apache-2.0
"""bench/reverse_bench.py's project kernels compile and link for sm_90, without a GPU.

Every configuration the benchmark runs by default (both tasks, each threads x
items and scan algorithm, the library's defaults among them) goes through
``scan.compile`` with the launch's block size, as the benchmark's build step
does; the linked cubin uses no local memory. The CUB kernels the benchmark
asks bench/cub_reverse.cu for are the ones its macros define. Timings are the
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


reverse_bench = load_bench("reverse_bench")
toolchain = load_bench("_toolchain")

CASES = [(task, cfg) for task in reverse_bench.TASKS for cfg in reverse_bench.configs()]


@pytest.mark.parametrize(("task", "cfg"), CASES, ids=[f"{task}-{cfg.label}" for task, cfg in CASES])
def test_project_kernel_links_for_sm90(task: str, cfg: Any) -> None:
    kernel = reverse_bench.make_kernel(task, cfg)
    cubin = scan.compile(kernel, reverse_bench.project_signature(task), cc=CC, block=cfg.threads)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{task} {cfg.label}: {usage.local} bytes of local memory a thread"


def test_default_configurations() -> None:
    # four threads x items, each with raking, warp_scans and the library's defaults
    cfgs = reverse_bench.configs()
    assert len(cfgs) == 12
    assert {(c.threads, c.items) for c in cfgs} == set(reverse_bench.THREADS_ITEMS)
    assert {c.algo for c in cfgs} == {"raking", "warp_scans", "default"}
    assert set(reverse_bench.configs(quick=True)) <= set(cfgs)
    cub = reverse_bench.cub_configs(cfgs)
    assert len(cub) == 8
    assert {c.algo for c in cub} == set(reverse_bench.CUB_ALGORITHMS)


def test_cub_source_defines_every_kernel() -> None:
    source = (BENCH / "cub_reverse.cu").read_text()
    body = re.search(r"namespace algo {(.*?)}  // namespace algo", source, re.S)
    assert body is not None
    assert set(re.findall(r"struct (\w+) {", body.group(1))) == set(reverse_bench.CUB_ALGORITHMS)
    assert "reverse_suffix_i32_t##THREADS##_i##ITEMS##_##ALGO" in source
    assert "reverse_recurrence_t##THREADS##_i##ITEMS##_##ALGO" in source
    cfg = reverse_bench.Config(256, 8, "warp_scans")
    assert cfg.symbol("suffix_i32") == "reverse_suffix_i32_t256_i8_warp_scans"
    assert cfg.symbol("recurrence") == "reverse_recurrence_t256_i8_warp_scans"
    assert reverse_bench._unit_line("recurrence", cfg).startswith("REVERSE_RECURRENCE_KERNEL(")


def test_triton_space_is_pruned_as_records_bench() -> None:
    space = reverse_bench.triton_configs(False, 2048)
    assert space
    assert all(2 <= c.block // (32 * c.warps) <= 16 for c in space)
    assert {c.flip for c in space} == {False, True}
    assert all(c.block <= 2048 for c in space)
