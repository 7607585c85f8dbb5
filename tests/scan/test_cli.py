# SPDX-License-Identifier: Apache-2.0
"""``python -m scan cache info|clear|list|path``."""

from __future__ import annotations

import errno
import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scan import _cache
from scan._cache import Artifact, ArtifactCache
from scan._cli import main
from scan._keys import cache_key

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "cli-cache"
    monkeypatch.delenv(_cache.ENV_CACHE, raising=False)
    monkeypatch.delenv(_cache.ENV_CACHE_MAX_BYTES, raising=False)
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(d))
    _cache._reset_default_cache()
    yield d
    _cache._reset_default_cache()


def populate(d: Path) -> str:
    key = cache_key("provider", {"cli": "1"})
    ArtifactCache(d).put(
        key, Artifact(payload=b"x" * 2048, meta={"temp_bytes": 672}), kind="provider"
    )
    return key


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_path(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "cache", "path") == f"{cache_dir}\n"


def test_info_text(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    populate(cache_dir)
    out = run(capsys, "cache", "info")
    assert f"location:  {cache_dir}\n" in out
    assert "state:     enabled (read-write)\n" in out
    assert "entries:   1 (provider 1)\n" in out
    assert "(bound 1.0 GiB)" in out
    assert ("no GPU found; showing the default" in out) or ("current device" in out)
    for component in ("arch", "cccl", "headers", "nvrtc", "nvjitlink", "nvvm"):
        assert f"\n  {component} " in out
    assert "CCCL headers (" in out


def test_info_json(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(run(capsys, "cache", "info", "--json"))
    assert doc["directory"] == str(cache_dir)
    assert doc["enabled"] is True
    assert doc["entries"] == 0
    assert doc["entries_by_kind"] == {}
    assert doc["max_bytes"] == 1 << 30
    assert doc["toolchain"]["arch"] == "sm_{}{}".format(*doc["cc"])


def test_list_and_clear(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "cache", "list") == "no entries\n"
    key = populate(cache_dir)
    (cache_dir / "notes.txt").write_text("not ours")
    lines = run(capsys, "cache", "list").splitlines()
    assert lines[0].split() == ["key", "kind", "size", "last", "used"]
    assert lines[1].split()[:4] == [key, "provider", "2.0", "KiB"]
    doc = json.loads(run(capsys, "cache", "list", "--json"))
    assert [(e["key"], e["kind"], e["size"]) for e in doc] == [(key, "provider", 2048)]
    assert run(capsys, "cache", "clear") == f"removed 2 files from {cache_dir}\n"
    assert sorted(os.listdir(cache_dir)) == ["notes.txt"]


def test_disabled_cache(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(_cache.ENV_CACHE, "off")
    _cache._reset_default_cache()
    out = run(capsys, "cache", "info")
    assert "state:     disabled, memory only (disabled by $STATEFN_SCAN_CACHE)" in out
    assert "nothing to clear" in run(capsys, "cache", "clear")


def test_usage_errors(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["cache", "shred"])
    assert info.value.code == 2
    assert "invalid choice: 'shred'" in capsys.readouterr().err


def test_python_dash_m(cache_dir: Path) -> None:
    populate(cache_dir)
    env = {**os.environ, _cache.ENV_CACHE_DIR: str(cache_dir)}
    out = subprocess.run(
        [sys.executable, "-m", "scan", "cache", "list"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert " provider " in out.stdout


# ------------------------------------------------------------------------ version


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import scan
    import statefn

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"statefn-scan {statefn.__version__}\n"
    assert statefn.__version__ == scan.__version__ == importlib.metadata.version("statefn-scan")


# ------------------------------------------------------------------------ doctor


def test_doctor_text(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "doctor")
    lines = out.splitlines()
    names = [line[8:].split("  ")[0] for line in lines[:-1]]
    assert names == [
        "statefn-scan",
        "Python",
        "numba-cuda",
        "NVRTC",
        "nvJitLink",
        "NVVM",
        "CCCL headers",
        "CUDA driver",
        "GPU",
        "compile cache",
    ]
    for line in lines[:7]:
        assert line.startswith("ok      "), line
    assert f"{cache_dir}; 0 entries, 0 B" in out
    assert lines[-1] == "everything scan.block needs is installed"


def test_doctor_json(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(run(capsys, "doctor", "--json"))
    assert doc["ok"] is True
    assert doc["missing"] == []
    by_name = {c["name"]: c for c in doc["checks"]}
    assert by_name["NVRTC"]["value"].startswith("13.")
    assert by_name["NVRTC"]["detail"].endswith(".so.13") or "nvrtc" in by_name["NVRTC"]["detail"]
    assert by_name["statefn-scan"]["value"] == importlib.metadata.version("statefn-scan")


def test_doctor_fails_without_a_required_component(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from scan import ToolchainError, _toolchain

    def no_nvrtc() -> tuple[int, int]:
        raise ToolchainError("Cannot query the NVRTC version (OSError: libnvrtc.so.13).")

    monkeypatch.setattr(_toolchain, "nvrtc_version", no_nvrtc)
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "MISSING NVRTC          missing              Cannot query the NVRTC version" in out
    assert out.endswith(
        "missing: NVRTC. Kernels that call scan.block cannot be compiled until they are "
        "installed (see the lines above).\n"
    )


def test_doctor_without_a_gpu_is_not_a_failure(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from scan import _cli

    monkeypatch.setattr(
        _cli,
        "_driver_checks",
        lambda: [_cli._Check("CUDA driver", True, "none", "not loaded (no libcuda)")],
    )
    assert main(["doctor"]) == 0
    assert "none    CUDA driver    none                 not loaded (no libcuda)\n" in (
        capsys.readouterr().out
    )


# ------------------------------------------------------------------------ cache edges


def test_clear_a_read_only_cache_fails_and_says_why(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    populate(cache_dir)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    assert main(["cache", "clear"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    first = sorted(p.name for p in cache_dir.iterdir() if p.suffix == ".json")[0]
    assert captured.err == (
        f"error: cannot clear {cache_dir}: 2 of 2 files not deleted (Read-only file system: "
        f"{first}). Clear it where it is writable (as its owner, on a read-write mount), or set "
        "$STATEFN_SCAN_CACHE_DIR to a folder of your own.\n"
    )


def test_closed_pipe_ends_quietly(cache_dir: Path) -> None:
    cache = ArtifactCache(cache_dir)
    for i in range(600):  # more JSON than a pipe buffers
        cache.put(cache_key("provider", {"i": str(i)}), Artifact(payload=b"x"), kind="provider")
    env = {**os.environ, _cache.ENV_CACHE_DIR: str(cache_dir)}
    with subprocess.Popen(
        [sys.executable, "-m", "scan", "cache", "list", "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert proc.stdout.read(1) == b"["
        proc.stdout.close()  # as `| head -c 1` does
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141
    assert stderr == ""


def test_missing_home_is_not_created(tmp_path: Path) -> None:
    home = tmp_path / "nonexistent"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEFN_SCAN_", "XDG_"))}
    env["HOME"] = str(home)
    out = subprocess.run(
        [sys.executable, "-m", "scan", "cache", "info"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert not home.exists()
    assert (
        f"state:     disabled, memory only (the home folder {home} does not exist and is not "
        "created; set $STATEFN_SCAN_CACHE_DIR or $XDG_CACHE_HOME to use a disk cache)\n"
    ) in out.stdout
    assert out.stderr == ""


# ------------------------------------------------------------------------ demo


def test_demo_without_a_gpu_runs_in_the_simulator(tmp_path: Path) -> None:
    from scan._target import device_cc

    if device_cc() is not None:
        pytest.skip("a GPU is present: the demo runs on it")
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", _cache.ENV_CACHE_DIR: str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "scan.demo", "--rows", "1", "--cols", "600"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == (
        "no CUDA GPU found (numba.cuda.is_available() is False): running the demo in the "
        "CUDA simulator at a small size (NUMBA_ENABLE_CUDASIM=1)"
    )
    assert lines[1] == "row-wise running total, 1 x 600 int32, on CUDA simulator (no GPU)"
    assert lines[-1] == "matches numpy.cumsum and row totals: True"
    assert "Traceback" not in out.stderr
