# SPDX-License-Identifier: Apache-2.0
"""bench/reduce_bench.py's project kernels compile and link for sm_90, without a GPU.

Every configuration the benchmark runs by default (each task, threads x
items, reduce algorithm and load algorithm) goes through ``scan.compile``
with the launch's block size, as the benchmark's build step does; the linked
cubin uses no local memory. The names of the algorithms the benchmark offers
are the ones bench/cub_reduce.cu defines, so both contenders of a
configuration can be built. Timings are the benchmark's business, not this
test's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers.bench import BENCH, load_bench
from helpers.kernels import CC

import scan

pytestmark = pytest.mark.nvrtc


reduce_bench = load_bench("reduce_bench")
toolchain = load_bench("_toolchain")

CASES = [(task, cfg) for task in reduce_bench.TASKS for cfg in reduce_bench.configs()]


@pytest.mark.parametrize(("task", "cfg"), CASES, ids=[f"{task}-{cfg.label}" for task, cfg in CASES])
def test_project_kernel_links_for_sm90(task: str, cfg: Any) -> None:
    kernel = reduce_bench.make_kernel(reduce_bench.TASKS[task], cfg)
    cubin = scan.compile(kernel, reduce_bench.project_signature(task), cc=CC, block=cfg.threads)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{task} {cfg.label}: {usage.local} bytes of local memory a thread"


def test_default_configurations() -> None:
    # the defaults: four threads x items, three reduce algorithms, vectorized loads
    assert len(reduce_bench.configs()) == 12
    assert {c.algo for c in reduce_bench.configs()} == set(reduce_bench.REDUCE_ALGORITHMS)
    quick = reduce_bench.configs(quick=True)
    assert set(quick) <= set(reduce_bench.configs())


def test_cub_source_defines_every_algorithm_and_task() -> None:
    source = (BENCH / "cub_reduce.cu").read_text()

    def structs(namespace: str) -> set[str]:
        body = re.search(
            rf"namespace {namespace} {{(.*?)}}  // namespace {namespace}", source, re.S
        )
        assert body is not None, namespace
        return set(re.findall(r"struct (\w+) {", body.group(1)))

    assert structs("io") == set(reduce_bench.LOAD_ALGORITHMS)
    assert structs("algo") == set(reduce_bench.REDUCE_ALGORITHMS)
    for task in reduce_bench.TASKS:
        assert f"struct {task} {{" in source
    assert "reduce_##TASK##_t##THREADS##_i##ITEMS##_##IO##_##ALGO" in source
    cfg = reduce_bench.Config(256, 4, "vectorize", "raking")
    assert cfg.symbol("sum_f32") == "reduce_sum_f32_t256_i4_vectorize_raking"
