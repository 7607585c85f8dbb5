# SPDX-License-Identifier: Apache-2.0
"""Command line: ``python -m scan cache info|clear|list|path``.

This module owns the command-line interface to the compile cache. It reads
the same environment variables as the library (see :mod:`scan._cache`), so
``STATEFN_SCAN_CACHE_DIR=... python -m scan cache info`` inspects that folder.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from scan._cache import ArtifactCache, default_cache, default_directory
from scan._errors import ToolchainError

__all__ = ["main"]

_DEFAULT_CC = (9, 0)


def _device_cc() -> tuple[int, int] | None:
    """Compute capability of device 0 through the driver API, or None without a GPU."""
    try:
        from cuda.bindings import driver

        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return None
        err, dev = driver.cuDeviceGet(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return None
        attr = driver.CUdevice_attribute
        err, major = driver.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev
        )
        err2, minor = driver.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev
        )
        if err != driver.CUresult.CUDA_SUCCESS or err2 != driver.CUresult.CUDA_SUCCESS:
            return None
        return int(major), int(minor)
    except Exception:  # no driver, no device, or an old binding: all mean "no GPU"
        return None


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
    cc = _device_cc()
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
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    cache_p = commands.add_parser("cache", help="inspect or clear the compile cache")
    verbs = cache_p.add_subparsers(dest="verb", required=True, metavar="VERB")
    info_p = verbs.add_parser("info", help="location, state, size, bound and toolchain identity")
    info_p.add_argument("--json", action="store_true", help="print JSON")
    verbs.add_parser("clear", help="delete every entry this cache wrote")
    list_p = verbs.add_parser("list", help="key, kind, size and last use of every entry")
    list_p.add_argument("--json", action="store_true", help="print JSON")
    verbs.add_parser("path", help="print the cache directory")
    args = parser.parse_args(argv)

    out = sys.stdout
    cache = default_cache()
    if args.verb == "info":
        return _info(cache, args.json, out)
    if args.verb == "list":
        return _list(cache, args.json, out)
    if args.verb == "path":
        out.write(f"{cache.directory or default_directory()}\n")
        return 0
    # clear
    if cache.directory is None:
        out.write(f"the cache is memory-only ({cache.info()['reason']}); nothing to clear\n")
        return 0
    removed = cache.clear()
    out.write(f"removed {removed} files from {cache.directory}\n")
    return 0
