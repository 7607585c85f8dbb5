# SPDX-License-Identifier: Apache-2.0
"""bench/lookback_bench.py's kernels and C++ program build for sm_90, without a GPU.

Every project kernel the benchmark runs by default (the look-back kernels of
the three tasks at each threads x items, with their tile statuses, and the
one-block-per-row kernel) goes through ``scan.compile`` with the launch's
block size, as the benchmark's build step does; the linked cubin uses no
local memory. Where nvcc is found, bench/cub_lookback.cu (the
``cub::DeviceScan`` anchors) builds the way the benchmark builds it, and its
inputs, computed on the host, are bit for bit the Python side's. Timings are
the benchmark's business, not this test's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.bench import BENCH, load_bench
from helpers.kernels import CC

import scan

pytestmark = pytest.mark.nvrtc


lookback_bench = load_bench("lookback_bench")
toolchain = load_bench("_toolchain")

CASES = lookback_bench.configs(lookback_bench.TASKS)


@pytest.mark.parametrize("cfg", CASES, ids=[cfg.key for cfg in CASES])
def test_project_kernel_links_for_sm90(cfg: Any) -> None:
    kernel = lookback_bench.make_kernel(cfg)
    cubin = scan.compile(kernel, lookback_bench.project_signature(cfg), cc=CC, block=cfg.threads)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{cfg.key}: {usage.local} bytes of local memory a thread"


def test_default_configurations() -> None:
    cfgs = lookback_bench.configs(lookback_bench.TASKS)
    by_kernel: dict[str, list[Any]] = {}
    for cfg in cfgs:
        by_kernel.setdefault(f"{cfg.kernel}_{cfg.dtype}", []).append(cfg)
    assert set(by_kernel) == {
        "cumsum_int32",
        "cumsum_float32",
        "recurrence_pair",
        "rows_lookback_int32",
        "rows_block_int32",
    }
    # the default configuration first, every look-back block a whole number of warps
    for name, group in by_kernel.items():
        if name != "rows_block_int32":
            assert (group[0].threads, group[0].items) == lookback_bench.DEFAULT_SHAPE
        assert all(c.threads % 32 == 0 for c in group)
    assert set(lookback_bench.configs(lookback_bench.TASKS, quick=True)) <= set(cfgs)
    # --config replaces the look-back shapes; the default stays
    only = lookback_bench.configs(("cumsum",), dtypes=("int32",), shapes=[(128, 24)])
    assert [(c.threads, c.items) for c in only] == [(256, 8), (128, 24)]
    # launch shapes: one block a tile, a row of tiles per row, one block per row
    n = 2**28
    assert lookback_bench.Config("cumsum", 256, 8).grid(1, n) == n // 2048
    assert lookback_bench.Config("rows_lookback", 256, 8).grid(16, 2**24) == (8192, 16)
    assert lookback_bench.Config("rows_block", 256, 8).grid(16, 2**24) == 16
    assert lookback_bench.Config("cumsum", 128, 24).tiles(3073) == 2


def test_tile_status_types() -> None:
    # the kernels take the status as scan.tile_status_dtype of the values they scan
    cfg = lookback_bench.Config("rows_lookback", 256, 8)
    sig = lookback_bench.project_signature(cfg)
    assert sig[2].ndim == 2
    assert np.dtype(sig[2].dtype.dtype) == scan.tile_status_dtype(np.int32)
    rec = lookback_bench.project_signature(lookback_bench.Config("recurrence", 256, 8, "pair"))
    assert np.dtype(rec[2].dtype.dtype) == scan.tile_status_dtype(lookback_bench.PAIR)
    assert len(lookback_bench.project_signature(lookback_bench.Config("rows_block", 256, 8))) == 2


def test_inputs() -> None:
    common = load_bench("_common")
    index = np.arange(100_000, dtype=np.int64)
    assert np.array_equal(lookback_bench.hash_index(index) % 7 - 3, common.element_value(index))
    pairs = lookback_bench.pair_values(index)
    assert pairs.dtype == lookback_bench.PAIR
    assert (pairs["a"] >= 0.9).all()
    assert (pairs["a"] < 1.0).all()
    assert (pairs["b"] >= -1.0).all()
    assert (pairs["b"] < 1.0).all()
    # exact in float32: the same values from float64 arithmetic
    h1 = lookback_bench.hash_index(2 * index)
    assert np.array_equal(pairs["a"].astype(np.float64), 1.0 - (1 + h1 % 1638) / 16384.0)
    sums = lookback_bench.host_input("rows", "int32", 4, 25)
    assert sums.shape == (4, 25)
    ref = lookback_bench.reference("rows", sums)
    assert np.array_equal(ref[:, -1], sums.sum(axis=1))


def test_parse_size() -> None:
    assert lookback_bench.parse_size("cumsum=1000") == ("cumsum", (1, 1000))
    assert lookback_bench.parse_size("rows=16x4096") == ("rows", (16, 4096))
    with pytest.raises(argparse.ArgumentTypeError, match="one row"):
        lookback_bench.parse_size("cumsum=2x100")
    with pytest.raises(argparse.ArgumentTypeError, match="TASK"):
        lookback_bench.parse_size("scan=100")


def test_cub_program_builds_and_makes_the_same_inputs(tmp_path: Path) -> None:
    nvcc = load_bench("_toolchain").find_tool("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found")
    source = (BENCH / "cub_lookback.cu").read_text()
    for call in ("InclusiveSum(", "InclusiveScan(", "InclusiveSumByKey("):
        assert f"cub::DeviceScan::{call}" in source
    for variants in lookback_bench.CUB_VARIANTS.values():
        for variant in variants:
            assert f'"{variant}"' in source
    # nvcc's own CCCL, as the benchmark's first C++ program
    version, include = lookback_bench.cccl_candidates(nvcc, tmp_path)[0]
    assert include is None
    assert version != "toolkit", "the CCCL version probe failed"
    unit = lookback_bench.CubProgram(version, include, tmp_path / "cub_lookback")
    lookback_bench._build_program(unit, nvcc, CC)
    assert unit.ok, unit.message
    n = 100_003
    proc = subprocess.run(
        [str(unit.program), "inputs", "--n", str(n)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = json.loads(proc.stdout)
    word_sum, host_input = lookback_bench.word_sum, lookback_bench.host_input
    assert got["int32"] == word_sum(host_input("cumsum", "int32", 1, n))
    assert got["float32"] == word_sum(host_input("cumsum", "float32", 1, n))
    assert got["pairs"] == word_sum(host_input("recurrence", "pair", 1, n))
