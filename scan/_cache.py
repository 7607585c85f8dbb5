# SPDX-License-Identifier: Apache-2.0
"""Persistent compile cache: key -> bytes plus a small JSON record.

This module owns the :class:`ArtifactCache` (an in-memory layer over an optional directory) and the
process-wide :func:`default_cache` used by :func:`get_or_build`.

Decisions, each with its reason:

- **No pickle, nothing executable.** An entry is ``<key>.bin`` (the raw
  payload, e.g. LTO-IR, so ordinary tools can read it) and ``<key>.json``
  (schema, key, kind, meta, payload size and sha256). Loading never runs code.
- **Atomic writes; builds locked per key across processes.** Each file is
  written to a temp file in the same directory and moved into place with
  :func:`os.replace`; the payload first, the record last (the record is the
  commit point). Readers verify the record's key and the payload's size and
  sha256, so a half-written or mismatched pair is never returned. After
  committing, a writer re-reads the payload and repairs the pair if a
  concurrent writer with *different* bytes interleaved; with identical bytes
  (the normal, deterministic case) every interleaving is already valid. A
  process about to build holds ``.<key>.lock`` (``flock``) and looks again
  once it has it, so processes started together (a test suite's workers, a job
  array) compile each artifact once; the system drops the lock with its
  holder, so a crash leaves no stale lock behind, and the holder removes the
  file when done.
- **Corruption is a miss.** An entry that fails verification is deleted and
  rebuilt; that needs no action, so it is logged (``scan.cache``, INFO). Only
  an entry that cannot be deleted gives a :class:`CacheWarning`.
- **Warnings are for what needs action, the logger for the rest.** Events
  that need nothing from the user (a replaced entry, a deliberately read-only
  directory, a missing home folder, evictions) go to
  ``logging.getLogger("scan.cache")``, which has a ``NullHandler``: nothing is
  printed unless the application configures logging. A :class:`CacheWarning`
  names the caller's line, not the library's (the library's and Numba's frames
  are skipped), and never stops the program: under ``-W error`` it is logged
  at WARNING instead of raised.
- **Least recently used eviction.** A hit sets the record's and payload's
  modification time explicitly (access times are unreliable under
  ``noatime``/``relatime``); after a put the oldest entries go until the
  directory is under ``max_bytes``. The entry just written is never evicted.
- **Safety like ssh and pip.** The directory is created with mode ``0o700``;
  a directory owned by another user (other than root) or writable by group or
  others, or one under a world-writable ancestor without the sticky bit, is
  refused with one warning and the cache runs in memory. A directory that
  cannot be written (read-only mount, shipped cache) still serves hits; the
  first failed write is logged (or warns, if the cause is not a permission,
  e.g. a full disk) and later writes are skipped. A missing home folder is
  never created. No file system error reaches the caller.
- **Stable keys.** Keys hash only what the caller passes (plus a schema
  version): no paths, times or host names, so one read-only cache can be
  shared across machines.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import math
import os
import re
import stat
import sys
import tempfile
import threading
import time
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import attrs

try:
    import fcntl
except ImportError:  # not on Windows: processes build side by side
    fcntl = None  # type: ignore[assignment]

from ._errors import CacheWarning
from ._keys import check_kind

__all__ = [
    "ENV_CACHE",
    "ENV_CACHE_DIR",
    "ENV_CACHE_MAX_BYTES",
    "Artifact",
    "ArtifactCache",
    "CacheEntry",
    "MetaValue",
    "default_cache",
    "default_directory",
    "get_or_build",
    "stats",
]

#: Folder of the cache; overrides the XDG default.
ENV_CACHE_DIR = "STATEFN_SCAN_CACHE_DIR"
#: ``0``/``off``/``false``/``no`` keeps the cache in memory only.
ENV_CACHE = "STATEFN_SCAN_CACHE"
#: Size bound of the directory in bytes (suffixes K, M, G allowed); default 1 GiB.
ENV_CACHE_MAX_BYTES = "STATEFN_SCAN_CACHE_MAX_BYTES"

# Bump when the record layout changes: old entries then simply stop matching
# and age out through eviction.
_RECORD_SCHEMA_VERSION = 1
_DEFAULT_MAX_BYTES = 1 << 30
_KEY_RE = re.compile(r"^[0-9a-f]{64}$")
_ENTRY_RE = re.compile(r"^([0-9a-f]{64})\.(bin|json)$")
_TEMP_RE = re.compile(r"^\.[0-9a-f]{64}\.(bin|json)\.[A-Za-z0-9_]+\.tmp$")
_LOCK_RE = re.compile(r"^\.[0-9a-f]{64}\.lock$")
_STALE_TEMP_SECONDS = 3600.0
_OFF = {"0", "off", "false", "no"}
# A write failing with these means the folder is read-only by design (a shipped
# or shared cache): nothing to act on. Anything else (a full disk) is warned.
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}

_log = logging.getLogger("scan.cache")
_log.addHandler(logging.NullHandler())
# Every cold build (NVRTC, a callback, a link) at INFO; hits at DEBUG.
_build_log = logging.getLogger("scan.build")
_build_log.addHandler(logging.NullHandler())
# Frames that are not the user's: a CacheWarning names the first frame outside them.
_LIBRARY_PACKAGES = ("scan", "statefn", "numba", "numba_cuda", "llvmlite", "importlib")

MetaValue: TypeAlias = str | int | float | bool | None


# ---------------------------------------------------------------------------- values


def _freeze_meta(meta: Mapping[str, MetaValue]) -> Mapping[str, MetaValue]:
    items = dict(meta)
    for k, v in items.items():
        if not isinstance(k, str):
            raise TypeError(f"Artifact meta keys must be str; got {k!r} ({type(k).__name__}).")
        if v is not None and not isinstance(v, str | int | float | bool):
            raise TypeError(
                f"Artifact meta[{k!r}] must be str, int, float, bool or None (JSON scalars); "
                f"got {v!r} ({type(v).__name__})."
            )
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"Artifact meta[{k!r}] must be a finite float; got {v!r}.")
    return MappingProxyType(items)


def _to_bytes(payload: bytes | bytearray | memoryview) -> bytes:
    return bytes(payload)


@attrs.frozen
class Artifact:
    """A cached build product: opaque bytes plus JSON-scalar metadata.

    Attributes
    ----------
    payload : bytes
        The product itself (e.g. LTO-IR), stored verbatim in ``<key>.bin``.
    meta : Mapping[str, str | int | float | bool | None]
        Small facts about it (e.g. temp-storage size and alignment); read-only.
    """

    payload: bytes = attrs.field(converter=_to_bytes)
    meta: Mapping[str, MetaValue] = attrs.field(factory=dict, converter=_freeze_meta)


@attrs.frozen
class CacheEntry:
    """One entry on disk, as listed by :meth:`ArtifactCache.entries`.

    Attributes
    ----------
    key : str
        The 64-hex-digit key.
    kind : str
        What produced it (``"provider"``, ``"callback"``, ...).
    size : int
        Payload size in bytes.
    last_used : float
        POSIX time of the last hit or write.
    meta : Mapping[str, str | int | float | bool | None]
        The artifact's metadata.
    """

    key: str
    kind: str
    size: int
    last_used: float
    meta: Mapping[str, MetaValue] = attrs.field(converter=_freeze_meta)


# ---------------------------------------------------------------------------- keys


# ---------------------------------------------------------------------------- warnings


def _library_dirs() -> tuple[str, ...]:
    dirs = []
    for name in _LIBRARY_PACKAGES:
        module = sys.modules.get(name)
        for entry in getattr(module, "__path__", None) or ():
            dirs.append(os.path.join(os.path.abspath(entry), ""))
    return tuple(dirs)


def _user_stacklevel() -> int:
    """The ``stacklevel`` that makes :func:`warnings.warn`, called by :func:`_warn`, name
    the first frame outside this library, Numba and the import machinery."""
    skip = _library_dirs()
    frame: types.FrameType | None = sys._getframe(2)  # the caller of _warn
    level = 2
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<frozen") or os.path.abspath(name).startswith(skip)):
            return level
        frame = frame.f_back
        level += 1
    return 2


def _warn(message: str) -> None:
    """Issue a :class:`CacheWarning` pointing at the user's code; never raise it.

    Under ``-W error`` (or an ``error`` filter for CacheWarning) the warning is
    logged at WARNING instead: the cache is never a reason for the program to stop.
    """
    try:
        warnings.warn(message, CacheWarning, stacklevel=_user_stacklevel())
    except CacheWarning:
        _log.warning("%s", message)


# ---------------------------------------------------------------------------- the cache


def default_directory() -> Path:
    """Return ``$STATEFN_SCAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/statefn-scan``, else
    ``~/.cache/statefn-scan``."""
    explicit = os.environ.get(ENV_CACHE_DIR, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "statefn-scan"


def _unsafe_reason(directory: Path) -> str | None:
    """Why `directory` must not be trusted, or None. POSIX only (Windows: None)."""
    if sys.platform == "win32":
        return None
    uid = os.geteuid()
    st = os.stat(directory)
    if st.st_uid not in (uid, 0):
        return f"it is owned by uid {st.st_uid}, not by you (uid {uid}) or root"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    # An ancestor anyone may write to without the sticky bit lets others swap the folder.
    for parent in directory.resolve().parents:
        pst = os.stat(parent)
        if pst.st_mode & stat.S_IWOTH and not pst.st_mode & stat.S_ISVTX:
            return f"its ancestor {parent} is world-writable without the sticky bit"
    return None


class ArtifactCache:
    """An in-memory layer over an optional on-disk cache directory.

    Parameters
    ----------
    directory : Path or None
        Folder of the disk layer; None keeps everything in memory. Nothing is
        touched on disk until first use.
    max_bytes : int
        Size bound of the folder; least recently used entries are evicted after a put.
    """

    def __init__(self, directory: Path | None, max_bytes: int = _DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0; got {max_bytes}.")
        self.directory = None if directory is None else Path(directory)
        self.max_bytes = int(max_bytes)
        self._memory: dict[str, Artifact] = {}
        self._counts: Counter[str] = Counter()
        self._lock = threading.RLock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._stuck: set[str] = set()  # corrupt entries that could not be deleted
        self._state = "memory" if directory is None else "unchecked"
        self._reason = "no directory configured" if directory is None else ""
        self._read_warned = False

    # ------------------------------------------------------------ status

    def _disk(self) -> Path | None:
        """The directory if the disk layer is usable for reading, checking it once."""
        with self._lock:
            if self._state == "unchecked":
                self._open_directory()
            if self._state in ("ok", "read-only"):
                return self.directory
            return None

    def _open_directory(self) -> None:
        assert self.directory is not None
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            reason = _unsafe_reason(self.directory)
        except OSError as exc:
            self._disable("unavailable", f"cannot create or inspect it ({exc})")
            return
        if reason is not None:
            self._disable("refused", reason)
            return
        self._state = "ok"

    def _disable(self, state: str, reason: str, *, actionable: bool = True) -> None:
        self._state, self._reason = state, reason
        what = "serves hits but stores nothing new" if state == "read-only" else "is not used"
        if not actionable:
            _log.info(
                "statefn-scan compile cache directory %s %s: %s. New entries are kept in memory.",
                self.directory,
                what,
                reason,
            )
            return
        _warn(
            f"statefn-scan compile cache directory {self.directory} {what}: {reason}. "
            f"Compiled code is kept in memory for this process only. Set ${ENV_CACHE_DIR} to a "
            f"private folder you own (mode 0700), or ${ENV_CACHE}=0 to silence this."
        )

    @property
    def enabled(self) -> bool:
        """Whether the disk layer serves hits (checks the directory on first call)."""
        return self._disk() is not None

    # ------------------------------------------------------------ public API

    def get(self, key: str) -> Artifact | None:
        """Return the artifact for `key` from memory or disk, or None; never raises on I/O."""
        _check_key(key)
        return self._lookup(key, kind=None)

    def put(self, key: str, artifact: Artifact, *, kind: str = "artifact") -> None:
        """Store `artifact` under `key` in memory and, if possible, on disk."""
        _check_key(key)
        check_kind(kind)
        if not isinstance(artifact, Artifact):
            raise TypeError(f"put expects an Artifact; got {type(artifact).__name__}.")
        with self._lock:
            self._memory[key] = artifact
        self._store(key, kind, artifact)

    def get_or_build(
        self, kind: str, key: str, build: Callable[[], Artifact], *, what: str = ""
    ) -> Artifact:
        """Return the artifact for `key`: memory, then disk, else ``build()`` and store it.

        Counters (:meth:`stats`): ``memory_hits``, ``disk_hits``, ``builds``
        and ``builds:<kind>`` (every call of `build`, successful or not).
        Concurrent threads asking for one key build it once. `what` names the
        artifact in the log: builds at INFO with their time, hits at DEBUG,
        on the ``scan.build`` logger.
        """
        check_kind(kind)
        _check_key(key)
        label = f"{kind} {what or key[:16]}"
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            found = self._lookup(key, kind=kind)
            if found is None:
                with self._process_lock(key):
                    # another process may have built it while this one waited
                    found = self._lookup(key, kind=kind)
                    if found is None:
                        return self._build(kind, key, build, label)
            _build_log.debug("cache hit: %s", label)
            return found

    def _build(self, kind: str, key: str, build: Callable[[], Artifact], label: str) -> Artifact:
        with self._lock:
            self._counts["builds"] += 1
            self._counts[f"builds:{kind}"] += 1
        started = time.perf_counter()
        artifact = build()
        _build_log.info("built %s in %.2f s", label, time.perf_counter() - started)
        if not isinstance(artifact, Artifact):
            raise TypeError(
                f"the build callable for a {kind!r} cache entry must return an Artifact; "
                f"got {type(artifact).__name__}."
            )
        with self._lock:
            self._memory[key] = artifact
        self._store(key, kind, artifact)
        return artifact

    @contextlib.contextmanager
    def _process_lock(self, key: str) -> Iterator[None]:
        """Hold ``.<key>.lock`` in the directory, so processes build one key once.

        ``flock`` locks belong to the open file: the system releases them when
        the holder exits or crashes, so a lock is never stale. The holder
        removes the file when done; a process that was waiting on it then
        finds the entry on disk. Without a writable directory (or on a system
        without ``fcntl``) processes simply build side by side, as before.
        """
        directory = self._disk()
        if fcntl is None or directory is None or self._state != "ok":
            yield
            return
        path = os.path.join(directory, f".{key}.lock")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield
            return
        try:
            with contextlib.suppress(OSError):  # a file system without locks: build unguarded
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(fd)

    def stats(self) -> dict[str, int]:
        """Return a copy of the counters (hits, builds, builds per kind, writes, discards)."""
        with self._lock:
            out = {"memory_hits": 0, "disk_hits": 0, "builds": 0}
            out.update(self._counts)
            return out

    def entries(self) -> list[CacheEntry]:
        """List valid-looking disk entries, most recently used first (records only, no hashing)."""
        directory = self._disk()
        if directory is None:
            return []
        out: list[CacheEntry] = []
        for key in self._keys(directory):
            rec_path = directory / f"{key}.json"
            try:
                record = json.loads(rec_path.read_bytes())
                mtime = rec_path.stat().st_mtime
                out.append(
                    CacheEntry(
                        key=key,
                        kind=str(record["kind"]),
                        size=int(record["size"]),
                        last_used=mtime,
                        meta=record.get("meta", {}),
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        out.sort(key=lambda e: e.last_used, reverse=True)
        return out

    def size_bytes(self) -> int:
        """Total size of the files this cache wrote in its directory."""
        directory = self._disk()
        if directory is None:
            return 0
        return sum(size for _, size, _ in self._files(directory))

    def clear(self) -> int:
        """Forget the memory layer and delete this cache's files; return the number deleted.

        Only ``<key>.bin``, ``<key>.json`` and this cache's temp files are
        removed; anything else in the directory is left alone. Files that
        cannot be deleted are skipped; :meth:`clear_files` reports them.
        """
        return self.clear_files()[0]

    def clear_files(self) -> tuple[int, list[tuple[Path, OSError]]]:
        """Like :meth:`clear`, and also return each file that could not be deleted with its error.

        Returns
        -------
        tuple of (int, list of (Path, OSError))
            The number of files deleted, and the failures in the order tried.
        """
        with self._lock:
            self._memory.clear()
        directory = self._disk()
        if directory is None:
            return 0, []
        removed = 0
        failed: list[tuple[Path, OSError]] = []
        # Records first: an entry without its record is simply absent.
        files = sorted(self._files(directory), key=lambda f: not f[0].name.endswith(".json"))
        for path, _, _ in files:
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue  # removed concurrently
            except OSError as exc:
                failed.append((path, exc))
        if removed:
            _log.info("cleared %d files from the compile cache %s", removed, directory)
        return removed, failed

    def info(self) -> dict[str, Any]:
        """Describe the cache: directory, state, reason, entry count, size, bound, counters."""
        directory = self._disk()
        return {
            "directory": None if self.directory is None else str(self.directory),
            "enabled": directory is not None,
            "state": self._state,
            "reason": self._reason,
            "writable": self._state == "ok" and os.access(str(self.directory), os.W_OK),
            "entries": len(self._keys(directory)) if directory is not None else 0,
            "size_bytes": self.size_bytes(),
            "max_bytes": self.max_bytes,
            "memory_entries": len(self._memory),
            "stats": self.stats(),
        }

    # ------------------------------------------------------------ reading

    def _lookup(self, key: str, kind: str | None) -> Artifact | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._counts["memory_hits"] += 1
                return hit
        directory = self._disk()
        if directory is None:
            return None
        artifact = self._read(directory, key, kind)
        if artifact is None:
            return None
        with self._lock:
            self._memory[key] = artifact
            self._counts["disk_hits"] += 1
        now = time.time()
        for suffix in (".json", ".bin"):  # LRU stamp; a read-only directory just keeps its times
            with contextlib.suppress(OSError):
                os.utime(directory / f"{key}{suffix}", (now, now))
        return artifact

    def _read(self, directory: Path, key: str, kind: str | None) -> Artifact | None:
        rec_path, bin_path = directory / f"{key}.json", directory / f"{key}.bin"
        problem = ""
        raw = b""
        for attempt in range(3):
            if attempt:
                time.sleep(0.05)  # let a concurrent writer commit its record
            try:
                raw = rec_path.read_bytes()
            except FileNotFoundError:
                return None
            except OSError as exc:
                self._warn_read(exc)
                return None
            record, problem = _parse_record(raw, key, kind)
            if record is None:  # records are replaced atomically: this is real damage
                break
            try:
                payload = bin_path.read_bytes()
            except FileNotFoundError:
                if not rec_path.exists():  # evicted or cleared concurrently: a plain miss
                    return None
                problem = "its payload file is missing"
                continue
            except OSError as exc:
                self._warn_read(exc)
                return None
            if len(payload) != record["size"]:
                problem = f"payload has {len(payload)} bytes, record says {record['size']}"
                continue
            if hashlib.sha256(payload).hexdigest() != record["sha256"]:
                problem = "payload sha256 does not match the record"
                continue
            return Artifact(payload=payload, meta=record["meta"])
        self._discard(directory, key, raw, problem)
        return None

    def _warn_read(self, exc: OSError) -> None:
        with self._lock:
            if self._read_warned:
                return
            self._read_warned = True
        _warn(
            f"statefn-scan compile cache {self.directory} cannot be read ({exc}); "
            "compiling instead. Check the folder's permissions or clear it with "
            "`python -m scan cache clear`."
        )

    def _discard(self, directory: Path, key: str, raw: bytes, problem: str) -> None:
        with self._lock:
            self._counts["discarded"] += 1
        rec_path = directory / f"{key}.json"
        deleted = False
        try:
            if rec_path.read_bytes() == raw:  # do not delete a record a writer just replaced
                rec_path.unlink()
                (directory / f"{key}.bin").unlink(missing_ok=True)
            deleted = True
        except FileNotFoundError:
            deleted = True
        except OSError as exc:
            with self._lock:
                warned = key in self._stuck
                self._stuck.add(key)
            if not warned:  # once per entry: a build looks it up twice
                _warn(
                    f"statefn-scan compile cache entry {key} in {directory} is corrupt "
                    f"({problem}) and cannot be deleted ({exc}); compiling it in every process. "
                    "Rebuild or clear that cache (`python -m scan cache clear`)."
                )
        if deleted:
            _log.info(
                "statefn-scan compile cache entry %s in %s is corrupt (%s); "
                "discarding it and compiling again.",
                key,
                directory,
                problem,
            )

    # ------------------------------------------------------------ writing

    def _store(self, key: str, kind: str, artifact: Artifact) -> None:
        directory = self._disk()
        if directory is None or self._state != "ok":
            return
        digest = hashlib.sha256(artifact.payload).hexdigest()
        record = {
            "schema": _RECORD_SCHEMA_VERSION,
            "key": key,
            "kind": kind,
            "size": len(artifact.payload),
            "sha256": digest,
            "meta": dict(artifact.meta),
            "created": time.time(),
        }
        rec_bytes = json.dumps(record, sort_keys=True, indent=1).encode("utf-8") + b"\n"
        try:
            for _ in range(3):
                _atomic_write(directory, f"{key}.bin", artifact.payload)
                _atomic_write(directory, f"{key}.json", rec_bytes)
                # A concurrent writer with different bytes may have replaced the
                # payload between our two writes; repair until the pair agrees.
                if _pair_consistent(directory, key):
                    break
        except OSError as exc:
            with self._lock:
                if self._state == "ok":
                    by_design = exc.errno in _READ_ONLY_ERRNOS
                    self._disable("read-only", f"writing failed ({exc})", actionable=not by_design)
            return
        with self._lock:
            self._counts["stored"] += 1
        self._evict(directory, keep=key)

    def _evict(self, directory: Path, keep: str) -> None:
        by_key: dict[str, list[tuple[Path, int, float]]] = {}
        total = 0
        now = time.time()
        for path, size, mtime in self._files(directory):
            m = _ENTRY_RE.match(path.name)
            if m is None:  # a temp file: only a crashed writer's stale one is removed
                if now - mtime > _STALE_TEMP_SECONDS:
                    with contextlib.suppress(OSError):
                        path.unlink()
                        continue
                total += size
                continue
            total += size
            by_key.setdefault(m.group(1), []).append((path, size, mtime))
        if total <= self.max_bytes:
            return

        def last_use(k: str) -> float:
            return max(mt for _, _, mt in by_key[k])

        for k in sorted(by_key, key=last_use):
            if total <= self.max_bytes:
                break
            if k == keep:
                continue
            # Record first so readers see a clean miss, then the payload.
            for path, size, _ in sorted(by_key[k], key=lambda f: f[0].suffix != ".json"):
                with contextlib.suppress(OSError):
                    path.unlink()
                    total -= size
            with self._lock:
                self._counts["evicted"] += 1
            _log.debug("evicted compile cache entry %s (size bound %d bytes)", k, self.max_bytes)

    # ------------------------------------------------------------ listing

    @staticmethod
    def _files(directory: Path) -> list[tuple[Path, int, float]]:
        out: list[tuple[Path, int, float]] = []
        try:
            with os.scandir(directory) as it:
                for de in it:
                    if not (
                        _ENTRY_RE.match(de.name)
                        or _TEMP_RE.match(de.name)
                        or _LOCK_RE.match(de.name)
                    ):
                        continue
                    with contextlib.suppress(OSError):
                        st = de.stat(follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode):
                            out.append((Path(de.path), st.st_size, st.st_mtime))
        except OSError:
            return []
        return out

    @classmethod
    def _keys(cls, directory: Path) -> list[str]:
        return sorted(p.name[:-5] for p, _, _ in cls._files(directory) if p.name.endswith(".json"))


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise ValueError(f"cache keys are 64 lowercase hex digits (see cache_key); got {key!r}.")


def _parse_record(raw: bytes, key: str, kind: str | None) -> tuple[dict[str, Any] | None, str]:
    try:
        record = json.loads(raw)
    except ValueError:
        return None, "its record is not valid JSON"
    if not isinstance(record, dict):
        return None, "its record is not a JSON object"
    if record.get("schema") != _RECORD_SCHEMA_VERSION:
        return None, f"record schema {record.get('schema')!r}, expected {_RECORD_SCHEMA_VERSION}"
    if record.get("key") != key:
        return None, f"its record belongs to key {record.get('key')!r}"
    if kind is not None and record.get("kind") != kind:
        return None, f"record kind {record.get('kind')!r}, expected {kind!r}"
    size, sha, meta = record.get("size"), record.get("sha256"), record.get("meta")
    if not isinstance(size, int) or not isinstance(sha, str) or not isinstance(meta, dict):
        return None, "its record lacks size, sha256 or meta"
    try:
        _freeze_meta(meta)
    except (TypeError, ValueError):
        return None, "its record's meta holds non-scalar values"
    return record, ""


def _pair_consistent(directory: Path, key: str) -> bool:
    try:
        payload = (directory / f"{key}.bin").read_bytes()
        record = json.loads((directory / f"{key}.json").read_bytes())
    except FileNotFoundError:
        return True  # cleared or evicted meanwhile: nothing to repair
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("sha256") == hashlib.sha256(payload).hexdigest()


def _atomic_write(directory: Path, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, directory / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------- process-wide cache

_default: ArtifactCache | None = None
_default_lock = threading.Lock()


def _parse_bytes(text: str) -> int:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    number = t[:-1] if scale != 1 else t
    value = int(float(number) * scale)
    if value < 0:
        raise ValueError(text)
    return value


def _from_environment() -> ArtifactCache:
    max_bytes = _DEFAULT_MAX_BYTES
    raw = os.environ.get(ENV_CACHE_MAX_BYTES, "").strip()
    if raw:
        try:
            max_bytes = _parse_bytes(raw)
        except ValueError:
            _warn(
                f"${ENV_CACHE_MAX_BYTES}={raw!r} is not a size; expected bytes such as "
                f"1073741824 or 512M. Using the default of {_DEFAULT_MAX_BYTES} bytes."
            )
    if os.environ.get(ENV_CACHE, "").strip().lower() in _OFF:
        cache = ArtifactCache(None, max_bytes)
        cache._reason = f"disabled by ${ENV_CACHE}"
        return cache
    missing_home = _missing_home()
    if missing_home is not None:
        cache = ArtifactCache(None, max_bytes)
        cache._reason = missing_home
        _log.info("statefn-scan compile cache is memory-only: %s", missing_home)
        return cache
    return ArtifactCache(default_directory(), max_bytes)


def _missing_home() -> str | None:
    """Why the default folder cannot be used because it lies in a missing home folder.

    Only the home-based default depends on it; an explicit
    ``$STATEFN_SCAN_CACHE_DIR`` or an absolute ``$XDG_CACHE_HOME`` is created
    as needed. A home folder is never created (service accounts often have
    ``HOME=/nonexistent`` on purpose).
    """
    if os.environ.get(ENV_CACHE_DIR, "").strip():
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return None
    try:
        home = Path.home()
    except RuntimeError as exc:  # no $HOME and no password entry
        return f"no home folder ({exc}); set ${ENV_CACHE_DIR} to use a disk cache"
    if not home.is_dir():
        return (
            f"the home folder {home} does not exist and is not created; set "
            f"${ENV_CACHE_DIR} or $XDG_CACHE_HOME to use a disk cache"
        )
    return None


def default_cache() -> ArtifactCache:
    """Return the process-wide cache, configured from the environment on first use.

    ``$STATEFN_SCAN_CACHE_DIR`` (folder), ``$STATEFN_SCAN_CACHE`` (``0``/``off``
    keeps it in memory) and ``$STATEFN_SCAN_CACHE_MAX_BYTES`` (bound, default 1 GiB).
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = _from_environment()
        return _default


def _reset_default_cache() -> None:
    """Forget the process-wide cache so the next use rereads the environment (test seam)."""
    global _default
    with _default_lock:
        _default = None


def get_or_build(kind: str, key: str, build: Callable[[], Artifact], *, what: str = "") -> Artifact:
    """:meth:`ArtifactCache.get_or_build` on :func:`default_cache`."""
    return default_cache().get_or_build(kind, key, build, what=what)


def stats() -> dict[str, int]:
    """:meth:`ArtifactCache.stats` of :func:`default_cache`."""
    return default_cache().stats()
