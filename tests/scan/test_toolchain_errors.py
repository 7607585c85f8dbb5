# SPDX-License-Identifier: Apache-2.0
"""Toolchain failures are ToolchainErrors that say what is missing; failed compiles
leave nothing on disk unless dumping is asked for."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import scan
from scan import _compile, block

pytestmark = pytest.mark.nvrtc

ROOT = Path(__file__).resolve().parents[2]


def test_an_unsupported_compute_capability_is_named_before_compiling() -> None:
    with pytest.raises(scan.ToolchainError) as info:
        block.temp_storage("scan", np.int32, 128, cc=(5, 2))
    message = str(info.value)
    assert "cannot compile for sm_52 (compute capability 5.2)" in message
    assert "sm_90" in message  # what it supports
    assert "cc=(9, 0)" in message


def test_a_missing_nvrtc_is_a_toolchain_error_and_leaves_no_folder(tmp_path: Path) -> None:
    # cuda.pathfinder finds no libnvrtc: what a machine without NVRTC sees
    code = textwrap.dedent(
        """
        import cuda.pathfinder as pf
        found = pf.load_nvidia_dynamic_lib
        def load(name):
            if name == "nvrtc":
                raise pf.DynamicLibNotFoundError('Failure finding "libnvrtc.so.13"')
            return found(name)
        pf.load_nvidia_dynamic_lib = load
        import numpy as np
        import scan
        from scan import block
        try:
            block.temp_storage("load", np.int32, 128, 4, cc=(9, 0))
        except scan.ToolchainError as exc:
            print("ToolchainError:", exc)
        """
    )
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path),
        "STATEFN_SCAN_CACHE": "0",
        "NUMBA_ENABLE_CUDASIM": "0",
    }
    env.pop("STATEFN_SCAN_DUMP_DIR", None)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("ToolchainError: Cannot query the NVRTC version"), out.stdout
    assert "pip install 'numba-cuda[cu13]'" in out.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("statefn-scan-")]


# cuda.core 1.2's finaliser of a Program whose compile failed can raise (it is
# reported as "Exception ignored in Program.__dealloc__"): the two tests below
# free their failed programs themselves, so that noise stays in them.
_FAILED_PROGRAM_FINALISER = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)


@_FAILED_PROGRAM_FINALISER
def test_a_rejected_unit_keeps_its_source_in_the_error_not_on_disk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(_compile.DUMP_ENV, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with pytest.raises(scan.CompileError) as info:
        _compile.compile_provider("statefn_scan_broken", "this is not C++", cc=(9, 0))
    error: Any = info.value
    assert error.source == "this is not C++"
    assert error.source_path is None
    assert f"set {_compile.DUMP_ENV}=<folder> to keep the source" in str(error)
    assert not list(tmp_path.iterdir())
    del error, info
    gc.collect()


@_FAILED_PROGRAM_FINALISER
def test_dumping_keeps_the_unit_and_the_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(_compile.DUMP_ENV, str(tmp_path))
    with pytest.raises(scan.CompileError) as info:
        _compile.compile_provider("statefn_scan_broken2", "still not C++", cc=(9, 0))
    error: Any = info.value
    assert error.source_path == str(tmp_path / "statefn_scan_broken2.cu")
    assert (tmp_path / "statefn_scan_broken2.cu").read_text() == "still not C++"
    assert "options: -arch=sm_90" in (tmp_path / "statefn_scan_broken2.log").read_text()
    del error, info
    gc.collect()
