# SPDX-License-Identifier: Apache-2.0
"""bench/neighbours_bench.py's project kernels compile and link for sm_90, without a GPU.

Every configuration the benchmark runs (each task, threads x items and tile
I/O) goes through ``scan.compile`` with the launch's block size, as its
build step does; the linked cubin uses no local memory (the carried item
stays in a register). The CUB C++ kernels it names are the ones
bench/cub_neighbours.cu's macro makes, so both contenders of a configuration
can be built. Timings are the benchmark's business, not this test's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers.bench import BENCH, load_bench
from helpers.kernels import CC

import scan

pytestmark = pytest.mark.nvrtc

neighbours_bench = load_bench("neighbours_bench")
toolchain = load_bench("_toolchain")

CASES = [(task, cfg) for task in neighbours_bench.TASKS for cfg in neighbours_bench.configs()]


@pytest.mark.parametrize(("task", "cfg"), CASES, ids=[f"{t}-{c.label}" for t, c in CASES])
def test_project_kernel_links_for_sm90(task: str, cfg: Any) -> None:
    kernel = neighbours_bench.project_kernel(task, cfg)
    cubin = scan.compile(kernel, neighbours_bench.project_signature(), cc=CC, block=cfg.threads)
    assert cubin[:4] == b"\x7fELF"
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{task} {cfg.label}: {usage.local} bytes of local memory a thread"


def test_cub_kernel_names_match_the_cu_macro() -> None:
    text = (BENCH / "cub_neighbours.cu").read_text()
    assert "neighbours_##TASK##_t##THREADS##_i##ITEMS##_##IO" in text
    for io in neighbours_bench.IO:
        assert re.search(rf"struct {io} \{{", text), io
    for task in neighbours_bench.TASKS:
        assert re.search(rf"struct {task} \{{", text), task
    cfg = neighbours_bench.configs()[0]
    assert neighbours_bench.cub_symbol("diff", cfg) == "neighbours_diff_t128_i4_vectorize"
