# SPDX-License-Identifier: Apache-2.0
"""Command line: ``python -m scan --version | doctor | cache info|clear|list|path``.

This module owns the command-line interface: the version, ``doctor`` (is
everything this library needs installed, and where is it?) and the compile
cache commands. It reads the same environment variables as the library (see
:mod:`scan._cache`), so ``STATEFN_SCAN_CACHE_DIR=... python -m scan cache
info`` inspects that folder.

Exit statuses: 0 success; 1 a command failed (``doctor`` found a required
component missing, ``cache clear`` could not delete files); 2 usage errors;
141 (128 + SIGPIPE) when the reader of the output went away, e.g.
``python -m scan cache list | head -1``, which ends quietly.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from scan._cache import ENV_CACHE_DIR, ArtifactCache, default_cache, default_directory
from scan._errors import ToolchainError
from scan._target import device_cc

__all__ = ["main"]

_DEFAULT_CC = (9, 0)
_DIST = "statefn-scan"
_SIGPIPE_STATUS = 141  # 128 + SIGPIPE, as a shell reports a writer killed by it


def _version() -> str:
    try:
        return importlib.metadata.version(_DIST)
    except importlib.metadata.PackageNotFoundError:  # a source tree that is not installed
        import statefn

        return statefn.__version__


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _when(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def _state_line(info: dict[str, Any]) -> str:
    state = info["state"]
    if state == "ok":
        return "enabled (read-write)" if info["writable"] else "enabled (read-only)"
    if state == "read-only":
        return f"enabled, read-only ({info['reason']})"
    return f"disabled, memory only ({info['reason']})"


def _info(cache: ArtifactCache, as_json: bool, out: TextIO) -> int:
    from scan import _toolchain

    info = cache.info()
    kinds = collections.Counter(e.kind for e in cache.entries())
    info["entries_by_kind"] = dict(sorted(kinds.items()))
    cc = device_cc()
    cc_note = "current device" if cc is not None else "no GPU found; showing the default"
    target = cc or _DEFAULT_CC
    identity = _toolchain.toolchain_identity(target)
    try:
        headers: list[str] | str = list(_toolchain.cccl_include_dirs())
        origin = _toolchain.cccl_include_origin()
    except ToolchainError as exc:
        headers, origin = str(exc), "not found"
    if as_json:
        doc = {
            **info,
            "cc": list(target),
            "cc_source": cc_note,
            "toolchain": identity,
            "cccl_include_dirs": headers,
            "cccl_origin": origin,
        }
        json.dump(doc, out, indent=2, sort_keys=True)
        out.write("\n")
        return 0
    where = info["directory"] or f"{default_directory()} (not used)"
    lines = [
        f"location:  {where}",
        f"state:     {_state_line(info)}",
        f"entries:   {info['entries']}"
        + (f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})" if kinds else ""),
        f"size:      {_size(info['size_bytes'])} (bound {_size(info['max_bytes'])})",
        f"toolchain: cc {target[0]}.{target[1]} ({cc_note})",
        *(f"  {k:<16} {v}" for k, v in identity.items()),
        f"CCCL headers ({origin}):",
        *(f"  {h}" for h in (headers if isinstance(headers, list) else [headers])),
    ]
    out.write("\n".join(lines) + "\n")
    return 0


def _list(cache: ArtifactCache, as_json: bool, out: TextIO) -> int:
    entries = cache.entries()
    if as_json:
        doc = [
            {"key": e.key, "kind": e.kind, "size": e.size, "last_used": e.last_used}
            for e in entries
        ]
        json.dump(doc, out, indent=2)
        out.write("\n")
        return 0
    if not entries:
        out.write("no entries\n")
        return 0
    out.write(f"{'key':<64}  {'kind':<10} {'size':>10}  last used\n")
    for e in entries:
        out.write(f"{e.key}  {e.kind:<10} {_size(e.size):>10}  {_when(e.last_used)}\n")
    return 0


def _clear(cache: ArtifactCache, out: TextIO, err: TextIO) -> int:
    if cache.directory is None:
        out.write(f"the cache is memory-only ({cache.info()['reason']}); nothing to clear\n")
        return 0
    removed, failed = cache.clear_files()
    if not failed:
        out.write(f"removed {removed} files from {cache.directory}\n")
        return 0
    path, exc = failed[0]
    why = exc.strerror or type(exc).__name__
    if removed:
        out.write(f"removed {removed} files from {cache.directory}\n")
    err.write(
        f"error: cannot clear {cache.directory}: {len(failed)} of {removed + len(failed)} files "
        f"not deleted ({why}: {path.name}). Clear it where it is writable (as its owner, on a "
        f"read-write mount), or set ${ENV_CACHE_DIR} to a folder of your own.\n"
    )
    return 1


# ---------------------------------------------------------------------------- doctor


class _Check(NamedTuple):
    name: str
    ok: bool  # False: the library cannot compile or link without it
    value: str  # version, or "missing"
    detail: str  # path, origin, or what to do


def _library_check(name: str, libname: str, probe: Any) -> _Check:
    try:
        version = probe()
    except ToolchainError as exc:
        return _Check(name, False, "missing", str(exc))
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        where = str(load_nvidia_dynamic_lib(libname).abs_path)
    except Exception as exc:  # the version answered; a path is only informative
        where = f"path unknown ({type(exc).__name__})"
    text = ".".join(str(v) for v in version[:2])
    if len(version) == 6:  # NVVM: (major, minor, IR major, IR minor, debug major, debug minor)
        text += f" (IR {version[2]}.{version[3]})"
    return _Check(name, True, text, where)


def _cccl_check() -> _Check:
    from scan import _toolchain

    try:
        dirs = _toolchain.cccl_include_dirs()
        origin = _toolchain.cccl_include_origin()
        version = _toolchain.cccl_version()
    except ToolchainError as exc:
        return _Check("CCCL headers", False, "missing", str(exc))
    return _Check("CCCL headers", True, version, f"{os.pathsep.join(dirs)} (via {origin})")


def _numba_cuda_check() -> _Check:
    try:
        version = importlib.metadata.version("numba-cuda")
    except importlib.metadata.PackageNotFoundError:
        return _Check("numba-cuda", False, "missing", "pip install 'numba-cuda[cu13]'")
    spec = importlib.util.find_spec("numba_cuda")
    where = str(Path(spec.origin).parent) if spec is not None and spec.origin else ""
    return _Check("numba-cuda", True, version, where)


def _driver_checks() -> list[_Check]:
    """The driver and device 0: reported, never failed (the simulator needs neither)."""
    try:
        from cuda.bindings import driver

        (status,) = driver.cuInit(0)
        if status != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(getattr(status, "name", str(status)))
        _, version = driver.cuDriverGetVersion()
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [
            _Check("CUDA driver", True, "none", f"not loaded ({reason})"),
            _Check(
                "GPU",
                True,
                "none",
                "kernels run in the CUDA simulator (NUMBA_ENABLE_CUDASIM=1); "
                "scan.compile still compiles and links for any cc",
            ),
        ]
    checks = [_Check("CUDA driver", True, f"{version // 1000}.{version % 1000 // 10}", "")]
    cc = device_cc()
    if cc is None:
        checks.append(_Check("GPU", True, "none", "the driver sees no device"))
        return checks
    _, dev = driver.cuDeviceGet(0)
    _, raw = driver.cuDeviceGetName(64, dev)
    name = bytes(raw).split(b"\0", 1)[0].decode(errors="replace")
    checks.append(_Check("GPU", True, f"cc {cc[0]}.{cc[1]}", f"device 0: {name}"))
    return checks


def _cache_check() -> _Check:
    info = default_cache().info()
    where = info["directory"] or f"{default_directory()} (not used)"
    state = _state_line(info)
    detail = f"{where}; {info['entries']} entries, {_size(info['size_bytes'])}"
    # A cache that cannot be used costs compile time, never correctness: reported, not failed.
    return _Check("compile cache", True, state, detail)


def _doctor(as_json: bool, out: TextIO) -> int:
    from scan import _toolchain

    checks = [
        _Check("statefn-scan", True, _version(), str(Path(__file__).resolve().parent)),
        _Check("Python", True, platform.python_version(), sys.executable),
        _numba_cuda_check(),
        _library_check("NVRTC", "nvrtc", _toolchain.nvrtc_version),
        _library_check("nvJitLink", "nvJitLink", _toolchain.nvjitlink_version),
        _library_check("NVVM", "nvvm", _toolchain.nvvm_version),
        _cccl_check(),
        *_driver_checks(),
        _cache_check(),
    ]
    missing = [c.name for c in checks if not c.ok]
    if as_json:
        doc = {
            "ok": not missing,
            "checks": [c._asdict() for c in checks],
            "missing": missing,
        }
        json.dump(doc, out, indent=2)
        out.write("\n")
        return 1 if missing else 0
    width = max(len(c.name) for c in checks)
    for c in checks:
        mark = "MISSING" if not c.ok else ("none" if c.value == "none" else "ok")
        first, *rest = (c.detail or "").splitlines() or [""]
        out.write(f"{mark:<7} {c.name:<{width}}  {c.value:<20} {first}".rstrip() + "\n")
        for line in rest:
            out.write(f"{'':<{width + 30}}{line}\n")
    if missing:
        out.write(
            f"missing: {', '.join(missing)}. Kernels that call scan.block cannot be compiled "
            "until they are installed (see the lines above).\n"
        )
        return 1
    out.write("everything scan.block needs is installed\n")
    return 0


# ---------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; None reads ``sys.argv``.
    """
    parser = argparse.ArgumentParser(
        prog="python -m scan", description="Tools for the statefn-scan CUB block-scan backend."
    )
    parser.add_argument("--version", action="version", version=f"statefn-scan {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    doctor_p = commands.add_parser(
        "doctor",
        help="versions and paths of everything the library needs; exit 1 if any is missing",
    )
    doctor_p.add_argument("--json", action="store_true", help="print JSON")
    cache_p = commands.add_parser("cache", help="inspect or clear the compile cache")
    verbs = cache_p.add_subparsers(dest="verb", required=True, metavar="VERB")
    info_p = verbs.add_parser("info", help="location, state, size, bound and toolchain identity")
    info_p.add_argument("--json", action="store_true", help="print JSON")
    verbs.add_parser("clear", help="delete every entry this cache wrote")
    list_p = verbs.add_parser("list", help="key, kind, size and last use of every entry")
    list_p.add_argument("--json", action="store_true", help="print JSON")
    verbs.add_parser("path", help="print the cache directory")
    args = parser.parse_args(argv)
    try:
        status = _run(args, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): end quietly, as cat and grep do. Later
        # writes, including the interpreter's final flush, go to /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return _SIGPIPE_STATUS
    return status


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if args.command == "doctor":
        return _doctor(args.json, out)
    cache = default_cache()
    if args.verb == "info":
        return _info(cache, args.json, out)
    if args.verb == "list":
        return _list(cache, args.json, out)
    if args.verb == "path":
        out.write(f"{cache.directory or default_directory()}\n")
        return 0
    return _clear(cache, out, sys.stderr)
