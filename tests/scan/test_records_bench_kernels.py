# SPDX-License-Identifier: Apache-2.0
"""bench/records_bench.py's project kernels (bench/_records_cells.py) build for sm_90, no GPU.

Both ways of writing each task run in the benchmark: as docs/records.md did
before zipped tile I/O (two loads into numeric items, loops building the
records and taking their field out) and with zipped tile I/O (one load of
both arrays into the records, a store of one field). Each links through
``scan.compile`` with the launch's block size and uses no local memory.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.bench import load_bench
from helpers.kernels import CC

import scan

pytestmark = pytest.mark.nvrtc

records_cells = load_bench("_records_cells")
toolchain = load_bench("_toolchain")

CASES = [
    (task, cfg, zipped)
    for task in records_cells.TASKS
    for cfg in records_cells.configs(quick=True)
    for zipped in records_cells.PROJECT_IMPLS.values()
]


@pytest.mark.parametrize(
    ("task", "cfg", "zipped"),
    CASES,
    ids=[f"{t}-{c.symbol(t)}-{'zipped' if z else 'loads'}" for t, c, z in CASES],
)
def test_project_kernel_links_for_sm90(task: str, cfg: Any, zipped: bool) -> None:
    kernel = records_cells.project_kernel(task, cfg, zipped)
    cubin = scan.compile(kernel, records_cells.project_signature(task), cc=CC, block=cfg.threads)
    assert cubin[:4] == b"\x7fELF"
    usage = toolchain.only_kernel(cubin)
    assert usage.local == 0, f"{cfg.symbol(task)}: {usage.local} bytes of local memory a thread"
