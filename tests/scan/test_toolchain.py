# SPDX-License-Identifier: Apache-2.0
"""Toolchain identity: CCCL lookup and fallbacks, versions, header digest, identity dict."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scan import ToolchainError, _toolchain
from scan._toolchain import (
    cccl_include_dirs,
    cccl_version,
    header_digest,
    nvjitlink_version,
    nvrtc_version,
    nvvm_version,
    toolchain_identity,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_probes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(_toolchain.ENV_CCCL_INCLUDE, raising=False)
    monkeypatch.delenv(_toolchain.ENV_HEADER_DIGEST, raising=False)
    _toolchain._clear_caches()
    yield
    _toolchain._clear_caches()


def fake_cccl(root: Path, version: int = 3000001) -> Path:
    """A minimal CCCL tree: enough for lookup, version parsing and digests."""
    (root / "cub" / "block").mkdir(parents=True)
    (root / "cub" / "block" / "block_scan.cuh").write_text("// BlockScan\n")
    (root / "cuda" / "std" / "__cccl").mkdir(parents=True)
    (root / "cuda" / "std" / "__cccl" / "version.h").write_text(
        f"#define CCCL_VERSION {version}\n#define CCCL_MAJOR_VERSION (CCCL_VERSION / 1000000)\n"
    )
    (root / "thrust").mkdir()
    (root / "thrust" / "scan.h").write_text("// thrust scan\n")
    return root


# ------------------------------------------------------------------------ lookup


def test_include_dir_is_found_and_holds_block_scan() -> None:
    dirs = cccl_include_dirs()
    assert dirs
    assert all(os.path.isabs(d) for d in dirs)
    assert any((Path(d) / "cub" / "block" / "block_scan.cuh").is_file() for d in dirs)
    assert cccl_include_dirs() is dirs  # memoised


def test_environment_override_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tree = fake_cccl(tmp_path / "cccl")
    monkeypatch.setenv(_toolchain.ENV_CCCL_INCLUDE, os.pathsep.join([str(tree), "/nonexistent"]))
    assert cccl_include_dirs() == (str(tree), "/nonexistent")
    assert _toolchain.cccl_include_origin() == "$STATEFN_SCAN_CCCL_INCLUDE"
    assert cccl_version() == "3.0.1"


def test_bad_override_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_toolchain.ENV_CCCL_INCLUDE, str(tmp_path))
    with pytest.raises(ToolchainError, match=r"none of its folders contains cub/block/block_scan"):
        cccl_include_dirs()


def _no_pathfinder(monkeypatch: pytest.MonkeyPatch) -> None:
    # The site-packages wheel would win; the GPU machine has none, so look past it.
    monkeypatch.setattr(_toolchain, "_pathfinder_cccl", lambda: (None, "skipped by the test"))


def test_cuda_home_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _no_pathfinder(monkeypatch)
    fake_cccl(tmp_path / "toolkit" / "include" / "cccl", version=3000001)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    assert cccl_include_dirs() == (str(tmp_path / "toolkit" / "include" / "cccl"),)
    assert _toolchain.cccl_include_origin() == "$CUDA_HOME"
    assert cccl_version() == "3.0.1"


def test_old_layout_without_cccl_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _no_pathfinder(monkeypatch)
    include = tmp_path / "toolkit" / "include"
    (include / "cub" / "block").mkdir(parents=True)
    (include / "cub" / "block" / "block_scan.cuh").write_text("//\n")
    (include / "cub" / "version.cuh").write_text("#define CUB_VERSION 200500\n")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setenv("CUDA_PATH", str(tmp_path / "toolkit"))
    assert cccl_include_dirs() == (str(include),)
    assert cccl_version() == "2.5.0"


def test_nothing_found_lists_what_was_tried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_pathfinder(monkeypatch)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_toolchain, "_DEFAULT_TOOLKIT", tmp_path / "no-toolkit")
    with pytest.raises(ToolchainError) as info:
        cccl_include_dirs()
    message = str(info.value)
    for expected in (
        "Cannot find the CCCL headers",
        "skipped by the test",
        "$CUDA_HOME: not set",
        "nvcc on PATH: not found",
        "no-toolkit",
        "pip install 'numba-cuda[cu13]'",
        "STATEFN_SCAN_CCCL_INCLUDE",
    ):
        assert expected in message


@pytest.mark.skipif(
    not Path("/usr/local/cuda/include/cccl/cub/block/block_scan.cuh").is_file(),
    reason="no CUDA toolkit in /usr/local/cuda",
)
def test_real_toolkit_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_pathfinder(monkeypatch)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    dirs = cccl_include_dirs()
    assert Path(dirs[0], "cub", "block", "block_scan.cuh").is_file()
    assert re.fullmatch(r"\d+\.\d+\.\d+", cccl_version())


# ------------------------------------------------------------------------ versions


def test_versions_are_int_tuples() -> None:
    for version in (nvrtc_version(), nvjitlink_version()):
        assert len(version) == 2
        assert all(type(v) is int for v in version)
        assert version >= (12, 0)
    nvvm = nvvm_version()
    assert len(nvvm) == 6
    assert all(type(v) is int for v in nvvm)
    assert re.fullmatch(r"\d+\.\d+\.\d+", cccl_version())


# ------------------------------------------------------------------------ digest


def test_digest_is_stable_in_one_and_across_processes() -> None:
    dirs = cccl_include_dirs()
    first = header_digest(dirs)
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    _toolchain._clear_caches()
    assert header_digest(list(dirs)) == first
    # Imported under a bare `scan` package: the module imports no numba.
    code = (
        "import sys, types\n"
        "p = types.ModuleType('scan')\n"
        f"p.__path__ = [{str(ROOT / 'scan')!r}]\n"
        "sys.modules['scan'] = p\n"
        "import scan._toolchain as m\n"
        "print(m.header_digest(m.cccl_include_dirs()))"
    )
    env = {k: v for k, v in os.environ.items() if k != _toolchain.ENV_HEADER_DIGEST}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == first


def fresh_digest(folder: Path, *, full: bool = False) -> str:
    _toolchain._clear_caches()  # digests are memoised per process; these tests edit headers
    return header_digest([str(folder)], full=full)


def test_digest_is_memoised_per_process(tmp_path: Path) -> None:
    a = fake_cccl(tmp_path / "a")
    before = header_digest([str(a)])
    (a / "cub" / "block" / "block_scan.cuh").write_text("// changed, and longer\n")
    assert header_digest([str(a)]) == before
    assert fresh_digest(a) != before


def test_digest_ignores_location_and_times_but_sees_content(tmp_path: Path) -> None:
    a = fake_cccl(tmp_path / "a")
    base = fresh_digest(a)
    b = tmp_path / "elsewhere" / "b"
    shutil.copytree(a, b)
    os.utime(b / "cub" / "block" / "block_scan.cuh", (0, 0))
    assert fresh_digest(b) == base  # no paths, no mtimes

    (b / "cub" / "block" / "block_scan.cuh").write_text("// BlockSc4n\n")  # same size
    assert fresh_digest(b) != base

    c = tmp_path / "c"
    shutil.copytree(a, c)
    (c / "thrust" / "scan.h").write_text("// thrust scan, edited\n")  # outside cub/
    assert fresh_digest(c) == base  # the fast digest's documented blind spot
    assert fresh_digest(c, full=True) != fresh_digest(a, full=True)
    (c / "cuda" / "std" / "__cccl" / "version.h").write_text("#define CCCL_VERSION 3000002\n")
    assert fresh_digest(c) != base


def test_full_digest_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    a = fake_cccl(tmp_path / "a")
    fast = fresh_digest(a)
    monkeypatch.setenv(_toolchain.ENV_HEADER_DIGEST, "full")
    assert fresh_digest(a, full=True) == header_digest([str(a)]) != fast


# ------------------------------------------------------------------------ identity


def test_identity_has_every_component_and_no_paths() -> None:
    ident = toolchain_identity((9, 0))
    assert set(ident) == {
        "arch",
        "cccl",
        "headers",
        "nvrtc",
        "nvrtc_build",
        "nvjitlink",
        "nvjitlink_build",
        "nvvm",
        "nvvm_build",
    }
    assert ident["arch"] == "sm_90"
    assert toolchain_identity((10, 0))["arch"] == "sm_100"
    assert ident["nvrtc"] == "{}.{}".format(*nvrtc_version())
    assert ident["headers"] == header_digest(cccl_include_dirs())
    assert all(isinstance(v, str) and "/" not in v and "\\" not in v for v in ident.values())
    assert not any(v.startswith("unavailable:") for v in ident.values())
    ident["arch"] = "mutated"
    assert toolchain_identity((9, 0))["arch"] == "sm_90"  # a fresh copy each time


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF build ids")
def test_library_builds_are_elf_build_ids() -> None:
    for name in ("nvrtc_build", "nvjitlink_build", "nvvm_build"):
        assert re.fullmatch(r"build-id:[0-9a-f]{16,}", toolchain_identity((9, 0))[name])


def test_failed_probe_is_a_stable_marker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_toolchain.ENV_CCCL_INCLUDE, str(tmp_path))  # no headers there
    ident = toolchain_identity((9, 0))
    assert ident["cccl"] == ident["headers"] == "unavailable:ToolchainError"
    assert _toolchain._probe(lambda: 1 / 0) == "unavailable:ZeroDivisionError"
