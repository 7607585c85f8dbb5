# SPDX-License-Identifier: Apache-2.0
"""``python -m scan cache info|clear|list|path``."""

from __future__ import annotations

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
