# SPDX-License-Identifier: Apache-2.0
"""The persistent artifact cache: format, corruption, permissions, concurrency, eviction, keys."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from scan import CacheWarning, _cache
from scan._cache import (
    Artifact,
    ArtifactCache,
    default_cache,
    default_directory,
    get_or_build,
)
from scan._keys import cache_key, compile_key

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")

# Child processes import scan._cache under a bare `scan` package: the cache and
# the modules it uses import no numba, and skipping `scan/__init__` (which does)
# keeps eight interpreters cheap on a two-core CI machine.
_LOAD_CACHE = f"""
import sys, types
_pkg = types.ModuleType("scan")
_pkg.__path__ = [{str(ROOT / "scan")!r}]
sys.modules["scan"] = _pkg
import scan._cache as _mod
from scan._keys import cache_key
Artifact, ArtifactCache = _mod.Artifact, _mod.ArtifactCache
"""


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for var in (_cache.ENV_CACHE, _cache.ENV_CACHE_MAX_BYTES):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(tmp_path / "default-cache"))
    _cache._reset_default_cache()
    yield
    _cache._reset_default_cache()


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def key_of(name: str) -> str:
    return cache_key("provider", {"name": name})


def art(data: bytes = b"\x7fLTO-IR payload", **meta: int | str | float | bool | None) -> Artifact:
    return Artifact(payload=data, meta=meta or {"temp_bytes": 672, "temp_align": 16})


class Builder:
    """A build callable that counts its calls."""

    def __init__(self, artifact: Artifact) -> None:
        self.artifact = artifact
        self.calls = 0

    def __call__(self) -> Artifact:
        self.calls += 1
        return self.artifact


@contextlib.contextmanager
def only_cache_warnings(match: str) -> Iterator[list[str]]:
    """Collect the warnings raised inside; all must be CacheWarnings containing `match`."""
    messages: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield messages
    for w in caught:
        assert issubclass(w.category, CacheWarning), w
        assert match in str(w.message), str(w.message)
        messages.append(str(w.message))


def disk_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# ------------------------------------------------------------------------ values and keys


def test_artifact_meta_is_read_only_and_validated() -> None:
    a = Artifact(payload=bytearray(b"xy"), meta={"n": 1, "f": 0.5, "b": True, "s": "t", "z": None})
    assert a.payload == b"xy"
    assert type(a.payload) is bytes
    with pytest.raises(TypeError):
        a.meta["n"] = 2  # type: ignore[index]
    with pytest.raises(TypeError, match=r"meta\['bad'\] must be str, int, float, bool or None"):
        Artifact(payload=b"", meta={"bad": [1]})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="finite"):
        Artifact(payload=b"", meta={"nan": float("nan")})


def test_cache_key_is_canonical_versioned_and_pinned() -> None:
    parts = {"b": "2", "a": "1"}
    assert cache_key("provider", parts) == cache_key("provider", dict(reversed(parts.items())))
    assert cache_key("provider", parts) != cache_key("callback", parts)
    text = '{"kind":"provider","parts":{"a":"1","b":"2"},"schema":1}'
    assert cache_key("provider", parts) == hashlib.sha256(text.encode()).hexdigest()


def test_cache_key_rejects_non_string_parts() -> None:
    with pytest.raises(TypeError, match=r"must map str to str; got 'cc': \(9, 0\) \(tuple\)"):
        cache_key("provider", {"cc": (9, 0)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="cache kind must match"):
        cache_key("Provider kind", {})


IDENTITY = {
    "arch": "sm_90",
    "cccl": "3.5.0",
    "headers": "ab" * 32,
    "nvrtc": "13.5",
    "nvrtc_build": "build-id:01",
    "nvjitlink": "13.5",
    "nvjitlink_build": "build-id:02",
    "nvvm": "2.0.2.0.3.2",
    "nvvm_build": "build-id:03",
    "numba_cuda": "0.30.4",
}


@pytest.mark.parametrize("component", sorted(IDENTITY))
def test_key_changes_with_every_toolchain_component(component: str) -> None:
    base = {"source": "int main;", **IDENTITY}
    changed = {**base, component: base[component] + "-other"}
    assert cache_key("provider", base) != cache_key("provider", changed)


def test_compile_key_merges_the_real_toolchain_identity() -> None:
    from scan._toolchain import toolchain_identity

    parts = {"source": "x"}
    merged = {**parts, **{f"toolchain.{k}": v for k, v in toolchain_identity((9, 0)).items()}}
    assert compile_key("provider", parts, (9, 0)) == cache_key("provider", merged)
    assert compile_key("provider", parts, (9, 0)) != compile_key("provider", parts, (8, 0))
    with pytest.raises(ValueError, match="must not contain"):
        compile_key("provider", {"toolchain.arch": "sm_90"}, (9, 0))


def test_key_is_the_same_in_another_process() -> None:
    code = _LOAD_CACHE + "print(cache_key('callback', {'f': 'g'}))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == cache_key("callback", {"f": "g"})


# ------------------------------------------------------------------------ basic behaviour


@posix_only
def test_round_trip_format_and_counters(cache_dir: Path) -> None:
    key = key_of("a")
    first = ArtifactCache(cache_dir)
    build = Builder(art(b"\x00\x01payload", temp_bytes=672, ratio=0.5, ok=True, name="s", no=None))
    got = first.get_or_build("provider", key, build)
    assert first.get_or_build("provider", key, build) is got
    assert build.calls == 1
    assert first.stats() == {
        "memory_hits": 1,
        "disk_hits": 0,
        "builds": 1,
        "builds:provider": 1,
        "stored": 1,
    }
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert disk_files(cache_dir) == [f"{key}.bin", f"{key}.json"]
    assert (cache_dir / f"{key}.bin").read_bytes() == b"\x00\x01payload"
    record = json.loads((cache_dir / f"{key}.json").read_text())
    assert record["key"] == key
    assert record["kind"] == "provider"
    assert record["size"] == len(b"\x00\x01payload")
    assert record["sha256"] == hashlib.sha256(b"\x00\x01payload").hexdigest()

    second = ArtifactCache(cache_dir)  # a new process, in effect
    again = second.get_or_build("provider", key, Builder(art(b"never")))
    assert again == got
    assert dict(again.meta) == {
        "temp_bytes": 672,
        "ratio": 0.5,
        "ok": True,
        "name": "s",
        "no": None,
    }
    assert second.stats()["disk_hits"] == 1
    assert second.stats()["builds"] == 0


def test_build_errors_propagate_and_store_nothing(cache_dir: Path) -> None:
    cache = ArtifactCache(cache_dir)

    def failing() -> Artifact:
        raise RuntimeError("NVRTC said no")

    with pytest.raises(RuntimeError, match="NVRTC said no"):
        cache.get_or_build("provider", key_of("f"), failing)
    assert cache.stats()["builds:provider"] == 1
    assert cache.entries() == []
    with pytest.raises(TypeError, match="must return an Artifact; got bytes"):
        cache.get_or_build("provider", key_of("g"), lambda: b"raw")  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="64 lowercase hex digits"):
        cache.get("../../etc/passwd")


def test_threads_build_one_key_once(cache_dir: Path) -> None:
    cache = ArtifactCache(cache_dir)
    build = Builder(art())

    def slow() -> Artifact:
        time.sleep(0.05)
        return build()

    threads = [
        threading.Thread(target=cache.get_or_build, args=("provider", key_of("t"), slow))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert build.calls == 1
    assert cache.stats()["memory_hits"] == 7


# ------------------------------------------------------------------------ corruption


def _truncate(d: Path, key: str) -> None:
    p = d / f"{key}.bin"
    p.write_bytes(p.read_bytes()[:-3])


def _flip(d: Path, key: str) -> None:
    p = d / f"{key}.bin"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))


def _garbage_json(d: Path, key: str) -> None:
    (d / f"{key}.json").write_bytes(b"{not json")


def _other_key(d: Path, key: str) -> None:
    other = key_of("other")
    record = json.loads((d / f"{key}.json").read_text())
    record["key"] = other
    (d / f"{key}.json").write_text(json.dumps(record))


def _missing_payload(d: Path, key: str) -> None:
    (d / f"{key}.bin").unlink()


def _bad_meta(d: Path, key: str) -> None:
    record = json.loads((d / f"{key}.json").read_text())
    record["meta"] = {"nested": {"a": 1}}
    (d / f"{key}.json").write_text(json.dumps(record))


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (_truncate, "payload has"),
        (_flip, "sha256 does not match"),
        (_garbage_json, "not valid JSON"),
        (_other_key, "belongs to key"),
        (_missing_payload, "payload file is missing"),
        (_bad_meta, "non-scalar"),
    ],
)
def test_corrupt_entry_is_logged_once_and_rebuilt(
    cache_dir: Path, damage: object, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    key = key_of("c")
    good = art(b"x" * 1000)
    ArtifactCache(cache_dir).put(key, good, kind="provider")
    damage(cache_dir, key)  # type: ignore[operator]

    cache = ArtifactCache(cache_dir)
    build = Builder(good)
    caplog.set_level(logging.INFO, logger="scan.cache")
    with only_cache_warnings("") as caught:  # replaced: nothing to act on, so no warning
        assert cache.get_or_build("provider", key, build) == good
    assert caught == []
    logged = [r for r in caplog.records if "is corrupt" in r.getMessage()]
    assert len(logged) == 1
    assert (logged[0].name, logged[0].levelno) == ("scan.cache", logging.INFO)
    assert problem in logged[0].getMessage()
    assert build.calls == 1
    assert cache.stats()["discarded"] == 1

    fresh = ArtifactCache(cache_dir)  # valid again: a silent disk hit
    assert fresh.get_or_build("provider", key, Builder(art(b"never"))) == good
    assert fresh.stats()["disk_hits"] == 1


def test_kind_mismatch_is_treated_as_corrupt(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = key_of("k")
    ArtifactCache(cache_dir).put(key, art(), kind="callback")
    caplog.set_level(logging.INFO, logger="scan.cache")
    ArtifactCache(cache_dir).get_or_build("provider", key, Builder(art()))
    assert "record kind 'callback', expected 'provider'" in caplog.text


def test_corrupt_entry_that_cannot_be_deleted_warns(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = key_of("stuck")
    ArtifactCache(cache_dir).put(key, art(b"x" * 10), kind="provider")
    _truncate(cache_dir, key)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.warns(CacheWarning) as caught:
        ArtifactCache(cache_dir).get_or_build("provider", key, Builder(art(b"x" * 10)))
    assert len(caught) == 1
    assert str(caught[0].message) == (
        f"statefn-scan compile cache entry {key} in {cache_dir} is corrupt (payload has 7 "
        "bytes, record says 10) and cannot be deleted ([Errno 13] Permission denied: "
        f"'{cache_dir / (key + '.json')}'); compiling it in every process. Rebuild or clear "
        "that cache (`python -m scan cache clear`)."
    )


# ------------------------------------------------------------------------ permissions


@posix_only
@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_group_or_world_writable_directory_is_refused(cache_dir: Path, mode: int) -> None:
    cache_dir.mkdir()
    cache_dir.chmod(mode)
    cache = ArtifactCache(cache_dir)
    with only_cache_warnings("writable by group or others") as caught:
        cache.get_or_build("provider", key_of("w"), Builder(art()))
        cache.get_or_build("provider", key_of("w2"), Builder(art()))
    assert len(caught) == 1
    assert disk_files(cache_dir) == []
    assert cache.info()["state"] == "refused"


@posix_only
def test_directory_of_another_user_is_refused(cache_dir: Path) -> None:
    if not IS_ROOT:
        pytest.skip("making a directory owned by another user needs root")
    cache_dir.mkdir(mode=0o700)
    os.chown(cache_dir, 65534, 65534)
    with pytest.warns(CacheWarning, match="owned by uid 65534"):
        ArtifactCache(cache_dir).get_or_build("provider", key_of("o"), Builder(art()))
    assert disk_files(cache_dir) == []


@posix_only
def test_world_writable_ancestor_needs_the_sticky_bit(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.warns(CacheWarning, match="world-writable without the sticky bit"):
        ArtifactCache(shared / "c").get_or_build("provider", key_of("a"), Builder(art()))
    shared.chmod(0o777 | stat.S_ISVTX)  # like /tmp: accepted
    cache = ArtifactCache(shared / "c2")
    cache.get_or_build("provider", key_of("a"), Builder(art()))
    assert cache.info()["state"] == "ok"


def test_unusable_directory_falls_back_to_memory_with_one_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = ArtifactCache(blocker / "cache")
    build = Builder(art())
    with only_cache_warnings("is not used: cannot create or inspect it") as caught:
        cache.get_or_build("provider", key_of("m"), build)
        cache.get_or_build("provider", key_of("m"), build)
        cache.get_or_build("provider", key_of("n"), Builder(art()))
    assert len(caught) == 1
    assert build.calls == 1
    assert cache.info()["enabled"] is False
    assert cache.entries() == []
    assert cache.clear() == 0


_READ_ONLY_CHILD = """
import json, sys, warnings
from pathlib import Path
d = Path({d!r})
cache = ArtifactCache(d)
calls = []
def build():
    calls.append(1)
    return Artifact(payload=b"new", meta={{}})
import logging
logs = []
class Keep(logging.Handler):
    def emit(self, record):
        logs.append((record.levelname, record.getMessage()))
logging.getLogger("scan.cache").addHandler(Keep())
logging.getLogger("scan.cache").setLevel(logging.INFO)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    hit = cache.get_or_build("provider", cache_key("provider", {{"name": "a"}}), build)
    cache.get_or_build("provider", cache_key("provider", {{"name": "b"}}), build)
    cache.get_or_build("provider", cache_key("provider", {{"name": "c"}}), build)
print(json.dumps({{"hit": hit.payload.decode(), "calls": len(calls), "stats": cache.stats(),
    "warnings": [str(w.message) for w in caught], "logs": logs, "state": cache.info()["state"]}}))
"""


def _check_read_only_result(result: dict[str, object], cache_dir: Path, before: list[str]) -> None:
    assert result["hit"] == "shipped"
    assert result["calls"] == 2
    assert result["stats"]["disk_hits"] == 1  # type: ignore[index]
    # read-only by design (a shipped or shared cache): logged once, not warned
    assert result["warnings"] == []
    logs = result["logs"]
    assert isinstance(logs, list)
    assert len(logs) == 1
    assert logs[0][0] == "INFO"
    assert "serves hits but stores nothing new" in logs[0][1]
    assert result["state"] == "read-only"
    assert disk_files(cache_dir) == before


@posix_only
def test_read_only_directory_serves_hits_and_builds_misses_in_memory(cache_dir: Path) -> None:
    ArtifactCache(cache_dir).put(key_of("a"), Artifact(payload=b"shipped"), kind="provider")
    before = disk_files(cache_dir)
    script = _LOAD_CACHE + _READ_ONLY_CHILD.format(d=str(cache_dir))
    if not IS_ROOT:
        cache_dir.chmod(0o555)
        try:
            out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        finally:
            cache_dir.chmod(0o700)
    else:
        # Permission bits do not stop root; a read-only bind mount in a private
        # mount namespace does (EROFS), and vanishes with the child.
        if shutil.which("unshare") is None:
            pytest.skip("root without unshare(1): cannot make a read-only directory")
        d = str(cache_dir)
        shell = f'mount --bind "{d}" "{d}" && mount -o remount,bind,ro "{d}" && exec "$0" -c "$1"'
        argv = ["unshare", "-m", "sh", "-c", shell, sys.executable, script]
        out = subprocess.run(argv, capture_output=True, text=True)
        if out.returncode != 0 and "mount" in out.stderr:
            pytest.skip(f"cannot create a read-only bind mount here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    _check_read_only_result(json.loads(out.stdout), cache_dir, before)


# ------------------------------------------------------------------------ concurrency

_WRITER = """
import hashlib, json, os, sys, time
from pathlib import Path
go = Path({go!r})
while not go.exists():
    time.sleep(0.001)
cache = ArtifactCache(Path({d!r}))
n = int(sys.argv[1])
def build():
    seed = b"same" if {same} else b"proc%d" % n
    return Artifact(payload=hashlib.sha256(seed).digest() * 65536, meta={{"n": n}})
a = cache.get_or_build("provider", {key!r}, build)
print(json.dumps({{"sha": hashlib.sha256(a.payload).hexdigest(), "stats": cache.stats()}}))
"""


@pytest.mark.parametrize("same_bytes", [True, False], ids=["deterministic", "nondeterministic"])
def test_eight_processes_build_one_key(cache_dir: Path, tmp_path: Path, same_bytes: bool) -> None:
    key = key_of("race")
    go = tmp_path / "go"
    script = _LOAD_CACHE + _WRITER.format(go=str(go), d=str(cache_dir), key=key, same=same_bytes)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    time.sleep(0.3)  # let the interpreters start, then release them together
    go.touch()
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=60)
        assert p.returncode == 0, stderr
        if same_bytes:
            assert "CacheWarning" not in stderr
        results.append(json.loads(stdout))
    assert not [n for n in disk_files(cache_dir) if n.endswith(".tmp")]
    fresh = ArtifactCache(cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the final entry is valid (or, at worst, absent)
        entry = fresh.get(key)
    if same_bytes:
        assert disk_files(cache_dir) == [f"{key}.bin", f"{key}.json"]
        assert len({r["sha"] for r in results}) == 1
        assert entry is not None
        assert hashlib.sha256(entry.payload).hexdigest() == results[0]["sha"]
    elif entry is not None:
        assert hashlib.sha256(entry.payload).hexdigest() in {r["sha"] for r in results}


# ------------------------------------------------------------------------ eviction


def _age(d: Path, key: str, seconds_ago: float) -> None:
    t = time.time() - seconds_ago
    for suffix in (".bin", ".json"):
        os.utime(d / f"{key}{suffix}", (t, t))


def test_least_recently_used_entries_are_evicted(cache_dir: Path) -> None:
    keys = [key_of(f"e{i}") for i in range(4)]
    writer = ArtifactCache(cache_dir)
    for i, k in enumerate(keys[:3]):
        writer.put(k, art(b"p" * 1000), kind="provider")
        _age(cache_dir, k, 300 - 100 * i)  # e0 oldest, e2 newest
    one_entry = writer.size_bytes() // 3
    cache = ArtifactCache(cache_dir, max_bytes=3 * one_entry + 10)
    assert cache.get(keys[0]) is not None  # e0 becomes the most recently used
    (cache_dir / f".{keys[0]}.bin.crashed.tmp").write_bytes(b"t")  # a crashed writer's leftover
    os.utime(cache_dir / f".{keys[0]}.bin.crashed.tmp", (0, 0))
    cache.put(keys[3], art(b"p" * 1000), kind="provider")
    remaining = {e.key for e in cache.entries()}
    assert remaining == {keys[0], keys[2], keys[3]}
    assert cache.stats()["evicted"] == 1
    assert cache.size_bytes() <= cache.max_bytes
    assert not [n for n in disk_files(cache_dir) if n.endswith(".tmp")]


def test_stale_temp_files_are_removed_by_a_write(cache_dir: Path) -> None:
    cache = ArtifactCache(cache_dir)
    cache.put(key_of("a"), art(), kind="provider")
    stale = cache_dir / f".{key_of('a')}.json.x1y2z3.tmp"
    fresh = cache_dir / f".{key_of('b')}.bin.a1b2c3.tmp"  # perhaps a writer at work
    for p in (stale, fresh):
        p.write_bytes(b"partial")
    os.utime(stale, (0, 0))
    cache.put(key_of("c"), art(), kind="provider")
    assert not stale.exists()
    assert fresh.exists()
    assert cache.clear() == 5  # two entries and the temp file


def test_entry_larger_than_the_bound_is_kept_alone(cache_dir: Path) -> None:
    cache = ArtifactCache(cache_dir, max_bytes=100)
    cache.put(key_of("small"), art(b"s"), kind="provider")
    cache.put(key_of("big"), art(b"b" * 5000), kind="provider")
    assert [e.key for e in cache.entries()] == [key_of("big")]


def test_clear_removes_only_cache_files(cache_dir: Path) -> None:
    cache = ArtifactCache(cache_dir)
    cache.put(key_of("a"), art(), kind="provider")
    cache.put(key_of("b"), art(), kind="callback")
    (cache_dir / "README").write_text("keep me")
    assert {e.kind for e in cache.entries()} == {"provider", "callback"}
    assert cache.clear() == 4
    assert disk_files(cache_dir) == ["README"]
    assert cache.get(key_of("a")) is None


# ------------------------------------------------------------------------ environment


def test_default_cache_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(tmp_path / "env-dir"))
    monkeypatch.setenv(_cache.ENV_CACHE_MAX_BYTES, "512M")
    cache = default_cache()
    assert cache is default_cache()
    assert cache.directory == tmp_path / "env-dir"
    assert cache.max_bytes == 512 << 20
    build = Builder(art())
    get_or_build("callback", key_of("x"), build)
    get_or_build("callback", key_of("x"), build)
    assert _cache.stats()["builds:callback"] == 1
    assert (tmp_path / "env-dir" / f"{key_of('x')}.bin").exists()


def test_default_directory_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(_cache.ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "statefn-scan"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert default_directory() == Path.home() / ".cache" / "statefn-scan"


@pytest.mark.parametrize("value", ["0", "off", "OFF", "false", "no"])
def test_disabled_cache_is_memory_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str
) -> None:
    monkeypatch.setenv(_cache.ENV_CACHE, value)
    cache = default_cache()
    build = Builder(art())
    get_or_build("provider", key_of("d"), build)
    get_or_build("provider", key_of("d"), build)
    assert build.calls == 1
    assert cache.directory is None
    assert cache.info()["enabled"] is False
    assert "disabled by $STATEFN_SCAN_CACHE" in cache.info()["reason"]
    assert not (tmp_path / "default-cache").exists()


def test_bad_size_bound_warns_and_uses_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_cache.ENV_CACHE_MAX_BYTES, "lots")
    with pytest.warns(CacheWarning, match=r"STATEFN_SCAN_CACHE_MAX_BYTES='lots' is not a size"):
        assert default_cache().max_bytes == 1 << 30


# ------------------------------------------------------------------------ warnings and logging


def test_a_full_disk_still_warns(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(directory: Path, name: str, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_cache, "_atomic_write", full)
    with pytest.warns(CacheWarning, match="serves hits but stores nothing new: writing failed"):
        ArtifactCache(cache_dir).put(key_of("full"), art())


@posix_only
def test_warning_names_the_callers_line(cache_dir: Path) -> None:
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(0o777)
    cache = ArtifactCache(cache_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        cache.get_or_build("provider", key_of("w"), Builder(art()))
    assert [(w.category, w.filename, w.lineno) for w in caught] == [(CacheWarning, __file__, line)]


@posix_only
def test_error_filter_logs_instead_of_raising(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(0o777)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under python -W error
        built = ArtifactCache(cache_dir).get_or_build("provider", key_of("e"), Builder(art()))
    assert built == art()
    [record] = [r for r in caplog.records if r.name == "scan.cache"]
    assert record.levelno == logging.WARNING
    assert "is not used: it is writable by group or others" in record.getMessage()


def test_logger_prints_nothing_by_default() -> None:
    logger = logging.getLogger("scan.cache")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)


def test_missing_home_is_not_created(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "nonexistent"
    for name in (_cache.ENV_CACHE_DIR, _cache.ENV_CACHE, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    caplog.set_level(logging.INFO, logger="scan.cache")
    _cache._reset_default_cache()
    try:
        cache = default_cache()
        assert cache.get_or_build("provider", key_of("h"), Builder(art())) == art()
        info = cache.info()
    finally:
        _cache._reset_default_cache()
    assert not home.exists()
    assert info["enabled"] is False
    assert info["reason"] == (
        f"the home folder {home} does not exist and is not created; set "
        "$STATEFN_SCAN_CACHE_DIR or $XDG_CACHE_HOME to use a disk cache"
    )
    assert "memory-only" in caplog.text


def test_explicit_folder_is_created_even_without_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(tmp_path / "a" / "b"))
    monkeypatch.delenv(_cache.ENV_CACHE, raising=False)
    _cache._reset_default_cache()
    try:
        assert default_cache().enabled
    finally:
        _cache._reset_default_cache()
    assert (tmp_path / "a" / "b").is_dir()
