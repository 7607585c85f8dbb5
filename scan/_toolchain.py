# SPDX-License-Identifier: Apache-2.0
"""Toolchain identity: where the CCCL headers are and which compilers are loaded.

This module owns every question of the form "which toolchain would compile
this?": the CCCL include folders handed to NVRTC, the NVRTC / nvJitLink / NVVM
versions, the CCCL version, a digest of the headers, and
:func:`toolchain_identity`, the dictionary of all of them that goes into every
compile cache key (see :mod:`scan._keys`).

Nothing here imports Numba. ``cuda.pathfinder`` and ``cuda.bindings`` are
imported inside the functions that need them, so importing this module is
cheap. Every probe is memoised for the life of the process; the
``cache_clear`` seams exist for tests that change environment variables.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import re
import shutil
import struct
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ._errors import ToolchainError
from ._target import arch

__all__ = [
    "ENV_CCCL_INCLUDE",
    "ENV_HEADER_DIGEST",
    "cccl_include_dirs",
    "cccl_include_origin",
    "cccl_version",
    "dist_version",
    "header_digest",
    "nvjitlink_version",
    "nvrtc_archs",
    "nvrtc_version",
    "nvvm_version",
    "toolchain_identity",
]

#: os.pathsep-separated CCCL include folders; overrides every other lookup.
ENV_CCCL_INCLUDE = "STATEFN_SCAN_CCCL_INCLUDE"
#: ``full`` hashes every header's content; anything else (default) is the fast digest.
ENV_HEADER_DIGEST = "STATEFN_SCAN_HEADER_DIGEST"

# The file whose presence makes a folder a usable CCCL include folder.
_PROBE = Path("cub", "block", "block_scan.cuh")
# Header trees that make up CCCL. Only these are hashed, never the rest of a toolkit's include/.
# The fast digest reads cub/ alone (plus libcu++'s version.h).
_TREES = ("cub", "cuda", "thrust", "nv")
# Last resort toolkit location (a module constant so tests can point it elsewhere).
_DEFAULT_TOOLKIT = Path("/usr/local/cuda")


# ---------------------------------------------------------------------------- CCCL headers


def _has_probe(folder: Path) -> bool:
    return (folder / _PROBE).is_file()


def _pathfinder_cccl() -> tuple[str | None, str]:
    """Ask ``cuda.pathfinder``; returns (folder or None, how it was found or why not)."""
    try:
        from cuda.pathfinder import find_nvidia_header_directory
    except ImportError as exc:
        return None, f"cuda.pathfinder not importable ({type(exc).__name__})"
    try:
        try:  # newer releases also say how the folder was found
            from cuda.pathfinder import locate_nvidia_header_directory
        except ImportError:
            found = find_nvidia_header_directory("cccl")
        else:
            located = locate_nvidia_header_directory("cccl")
            if located is None:
                return None, "not found"
            return str(located.abs_path), f"cuda.pathfinder ({located.found_via})"
    except Exception as exc:  # a broken install must not hide the other fallbacks
        return None, f"failed with {type(exc).__name__}: {exc}"
    return (None, "not found") if found is None else (str(found), "cuda.pathfinder")


def _toolkit_candidates(root: Path) -> list[Path]:
    return [root / "include" / "cccl", root / "include"]


@functools.cache
def _locate_cccl() -> tuple[tuple[str, ...], str]:
    tried: list[str] = []
    override = os.environ.get(ENV_CCCL_INCLUDE, "")
    if override.strip():
        dirs = tuple(str(Path(p)) for p in override.split(os.pathsep) if p.strip())
        if any(_has_probe(Path(d)) for d in dirs):
            return dirs, f"${ENV_CCCL_INCLUDE}"
        raise ToolchainError(
            f"${ENV_CCCL_INCLUDE} is set to {override!r}, but none of its folders contains "
            f"{_PROBE.as_posix()}. Expected the CCCL include folder (the one holding cub/, "
            f"cuda/std/ and thrust/); fix or unset the variable."
        )
    found, how = _pathfinder_cccl()
    if found is not None and _has_probe(Path(found)):
        return (found,), how
    tried.append(f"cuda.pathfinder.find_nvidia_header_directory('cccl'): {found or how}")

    candidates: list[tuple[Path, str]] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        env_root = os.environ.get(var)
        if env_root:
            candidates += [(c, f"${var}") for c in _toolkit_candidates(Path(env_root))]
        else:
            tried.append(f"${var}: not set")
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        nvcc_root = Path(nvcc).resolve().parent.parent
        candidates += [(c, "nvcc on PATH") for c in _toolkit_candidates(nvcc_root)]
    else:
        tried.append("nvcc on PATH: not found")
    candidates += [(c, "default toolkit") for c in _toolkit_candidates(_DEFAULT_TOOLKIT)]
    for folder, origin in candidates:
        if _has_probe(folder):
            return (str(folder),), origin
        tried.append(f"{origin}: {folder} has no {_PROBE.as_posix()}")
    raise ToolchainError(
        "Cannot find the CCCL headers (cub/, cuda/std/, thrust/) that NVRTC needs to compile "
        "CUB block scans. Tried:\n  - "
        + "\n  - ".join(tried)
        + "\nInstall them with `pip install 'numba-cuda[cu13]'` (it brings nvidia-cuda-cccl), "
        f"set CUDA_HOME to a CUDA toolkit, or set ${ENV_CCCL_INCLUDE} to the folder holding "
        "cub/block/block_scan.cuh."
    )


def cccl_include_dirs() -> tuple[str, ...]:
    """Return the CCCL include folder(s) to pass to NVRTC.

    Lookup order: ``$STATEFN_SCAN_CCCL_INCLUDE`` (``os.pathsep``-separated);
    ``cuda.pathfinder`` (the ``nvidia-cuda-cccl`` wheel, conda, ``CUDA_HOME``);
    ``$CUDA_HOME`` and ``$CUDA_PATH`` (``include/cccl``, then ``include``); the
    toolkit of ``nvcc`` on ``PATH``; ``/usr/local/cuda``. A folder counts only
    if it holds ``cub/block/block_scan.cuh``. The answer is memoised.

    Returns
    -------
    tuple of str
        Absolute include folders, most preferred first.

    Raises
    ------
    ToolchainError
        If no folder holds the CUB headers; the message lists what was tried.
    """
    return _locate_cccl()[0]


def cccl_include_origin() -> str:
    """Return how :func:`cccl_include_dirs` found its folders (for diagnostics)."""
    return _locate_cccl()[1]


_VERSION_RE = re.compile(r"^\s*#\s*define\s+(\w+)\s+\(?\s*(\d+)\s*\)?\s*$", re.MULTILINE)


def _defines(path: Path) -> dict[str, int]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return {m.group(1): int(m.group(2)) for m in _VERSION_RE.finditer(text)}


@functools.cache
def _cccl_version_of(include_dirs: tuple[str, ...]) -> str:
    for d in include_dirs:
        defs = _defines(Path(d, "cuda", "std", "__cccl", "version.h"))
        if "CCCL_VERSION" in defs:  # MMMmmmppp since CCCL 2.x
            v = defs["CCCL_VERSION"]
            return f"{v // 1000000}.{(v // 1000) % 1000}.{v % 1000}"
        if {"CCCL_MAJOR_VERSION", "CCCL_MINOR_VERSION"} <= defs.keys():
            patch = defs.get("CCCL_PATCH_VERSION", 0)
            return f"{defs['CCCL_MAJOR_VERSION']}.{defs['CCCL_MINOR_VERSION']}.{patch}"
        cub = _defines(Path(d, "cub", "version.cuh")).get("CUB_VERSION")
        if cub is not None:  # MMMmmmpp, older layouts without libcu++'s version.h
            return f"{cub // 100000}.{(cub // 100) % 1000}.{cub % 100}"
    return "unknown"


def cccl_version() -> str:
    """Return the CCCL version (``"3.5.0"``) of the headers :func:`cccl_include_dirs` found.

    Read from ``cuda/std/__cccl/version.h`` (``CCCL_VERSION``), else from
    ``cub/version.cuh``; ``"unknown"`` if neither parses.

    Raises
    ------
    ToolchainError
        If no CCCL headers are found.
    """
    return _cccl_version_of(cccl_include_dirs())


# ---------------------------------------------------------------------------- header digest


def _tree_files(root: Path, trees: Iterable[str]) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for tree in trees:
        base = root / tree
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath, name)
                out.append((full.relative_to(root).as_posix(), full))
    return out


def header_digest(include_dirs: Iterable[str], *, full: bool | None = None) -> str:
    """Return a sha256 hex digest identifying the CCCL headers in `include_dirs`.

    The default (fast) digest hashes, per folder, the CCCL version, the content
    of ``cuda/std/__cccl/version.h`` and the relative path and content of every
    file under ``cub/`` (the headers this library instantiates): about 10 ms
    on a warm page cache. ``full=True`` (or ``$STATEFN_SCAN_HEADER_DIGEST=full``)
    hashes the content of every file under ``cub/``, ``cuda/``, ``thrust/`` and
    ``nv/`` instead (~2,300 files, 25 MB: 50-350 ms).

    Only relative paths and contents go in: no absolute paths and no
    modification times, which differ between machines and copies and would
    make keys unstable for shared read-only caches. The trade-off of the fast
    digest: an edit inside libcu++ (``cuda/``) or Thrust that keeps the CCCL
    version is not seen. CCCL ships libcu++ and CUB together under one version,
    so only hand-patched headers are affected; use ``full`` for those.

    Parameters
    ----------
    include_dirs : iterable of str
        Folders as returned by :func:`cccl_include_dirs`; order matters.
    full : bool, optional
        Hash every file's content. None (default) reads the environment variable.

    Returns
    -------
    str
        64 hex digits. Memoised per arguments.
    """
    if full is None:
        full = os.environ.get(ENV_HEADER_DIGEST, "").strip().lower() == "full"
    return _header_digest(tuple(str(d) for d in include_dirs), full)


@functools.cache
def _header_digest(include_dirs: tuple[str, ...], full: bool) -> str:
    h = hashlib.sha256(b"statefn-scan header digest v1\0")
    h.update(b"full\0" if full else b"fast\0")
    for index, folder in enumerate(include_dirs):
        root = Path(folder)
        h.update(f"dir {index} cccl {_cccl_version_of((folder,))}\0".encode())
        files = _tree_files(root, _TREES if full else ("cub",))
        version_h = root / "cuda" / "std" / "__cccl" / "version.h"
        if not full and version_h.is_file():
            files.append(("cuda/std/__cccl/version.h", version_h))
        for rel, path in files:
            try:
                data = path.read_bytes()
                h.update(f"{rel}\0{len(data)}\0".encode())
                h.update(hashlib.sha256(data).digest())
            except OSError as exc:  # a dangling link or unreadable file: stable marker
                h.update(f"{rel}\0error {type(exc).__name__}\0".encode())
    return h.hexdigest()


# ---------------------------------------------------------------------------- compiler versions


@functools.cache
def nvrtc_version() -> tuple[int, int]:
    """Return the (major, minor) version of the NVRTC library ``cuda.bindings`` loads.

    Raises
    ------
    ToolchainError
        If NVRTC cannot be loaded; install ``numba-cuda[cu13]`` (or ``nvidia-cuda-nvrtc``).
    """
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"nvrtcVersion returned {err}")
    except Exception as exc:
        raise ToolchainError(
            f"Cannot query the NVRTC version ({type(exc).__name__}: {exc}); "
            "install NVRTC with `pip install 'numba-cuda[cu13]'`."
        ) from exc
    return int(major), int(minor)


@functools.cache
def nvrtc_archs() -> tuple[int, ...]:
    """The architectures the loaded NVRTC compiles for, as ``major * 10 + minor`` (90 for sm_90).

    Raises
    ------
    ToolchainError
        If NVRTC cannot be loaded.
    """
    nvrtc_version()
    try:
        from cuda.bindings import nvrtc

        err, archs = nvrtc.nvrtcGetSupportedArchs()
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"nvrtcGetSupportedArchs returned {err}")
    except Exception as exc:
        raise ToolchainError(
            f"Cannot ask NVRTC which architectures it supports ({type(exc).__name__}: {exc}); "
            "install NVRTC with `pip install 'numba-cuda[cu13]'`."
        ) from exc
    return tuple(sorted(int(a) for a in archs))


@functools.cache
def nvjitlink_version() -> tuple[int, int]:
    """Return the (major, minor) version of the nvJitLink library ``cuda.bindings`` loads.

    Raises
    ------
    ToolchainError
        If nvJitLink cannot be loaded; install ``numba-cuda[cu13]`` (or ``nvidia-nvjitlink``).
    """
    try:
        from cuda.bindings import nvjitlink

        major, minor = nvjitlink.version()
    except Exception as exc:
        raise ToolchainError(
            f"Cannot query the nvJitLink version ({type(exc).__name__}: {exc}); "
            "install nvJitLink with `pip install 'numba-cuda[cu13]'`."
        ) from exc
    return int(major), int(minor)


@functools.cache
def nvvm_version() -> tuple[int, ...]:
    """Return the NVVM version as (major, minor, IR major, IR minor, debug major, debug minor).

    Read through ``cuda.bindings.nvvm``, the binding numba-cuda itself compiles
    with, so this is the library that compiles callbacks. The NVVM API version
    changes rarely; :func:`toolchain_identity` adds the library's build id.

    Raises
    ------
    ToolchainError
        If libNVVM cannot be loaded; install ``numba-cuda[cu13]`` (or ``nvidia-nvvm``).
    """
    try:
        from cuda.bindings import nvvm

        return tuple(int(v) for v in (*nvvm.version(), *nvvm.ir_version()))
    except Exception as exc:
        raise ToolchainError(
            f"Cannot query the NVVM version ({type(exc).__name__}: {exc}); "
            "install libNVVM with `pip install 'numba-cuda[cu13]'`."
        ) from exc


def _elf_build_id(f: BinaryIO) -> str | None:
    """Return the GNU build id of a 64-bit little-endian ELF file, if it has one."""
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return None
    (phoff,) = struct.unpack_from("<Q", head, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
    f.seek(phoff)
    table = f.read(phentsize * phnum)
    for i in range(min(phnum, len(table) // max(phentsize, 1))):
        p_type, _flags, offset, _va, _pa, filesz = struct.unpack_from(
            "<IIQQQQ", table, i * phentsize
        )
        if p_type != 4 or filesz > 1 << 16:  # PT_NOTE, sanely small
            continue
        f.seek(offset)
        notes = f.read(filesz)
        pos = 0
        while pos + 12 <= len(notes):
            namesz, descsz, ntype = struct.unpack_from("<III", notes, pos)
            name_at = pos + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if ntype == 3 and notes[name_at : name_at + namesz] == b"GNU\0":  # NT_GNU_BUILD_ID
                return notes[desc_at : desc_at + descsz].hex()
            pos = desc_at + ((descsz + 3) & ~3)
    return None


@functools.cache
def _library_build(libname: str) -> str:
    """Identify a loaded shared library by content: ELF build id, else size + edge hashes.

    Hashing the whole library (70-140 MB) would cost 0.3-0.7 s per process;
    the build id is what the linker derived from the content.
    """
    from cuda.pathfinder import load_nvidia_dynamic_lib

    path = Path(load_nvidia_dynamic_lib(libname).abs_path)
    size = path.stat().st_size
    with path.open("rb") as f:
        build_id = _elf_build_id(f)
        if build_id is not None:
            return f"build-id:{build_id}"
        f.seek(0)
        h = hashlib.sha256(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read())
    return f"size:{size}:sha256-edges:{h.hexdigest()[:32]}"


# ---------------------------------------------------------------------------- identity


def _probe(fn: Callable[..., object], *args: object) -> str:
    """Run a probe; a failure becomes a stable marker naming the exception class."""
    try:
        value = fn(*args)
    except Exception as exc:
        root = exc.__cause__ if isinstance(exc, ToolchainError) and exc.__cause__ else exc
        return f"unavailable:{type(root).__name__}"
    if isinstance(value, tuple):
        return ".".join(str(v) for v in value)
    return str(value)


def dist_version(name: str) -> str:
    """The installed version of distribution `name`, or ``not-installed``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not-installed"


def _headers() -> tuple[str, str]:
    dirs = cccl_include_dirs()
    return cccl_version(), header_digest(dirs)


@functools.cache
def _identity(cc: tuple[int, int]) -> tuple[tuple[str, str], ...]:
    try:
        cccl, digest = _headers()
    except ToolchainError:
        cccl = digest = "unavailable:ToolchainError"
    items = {
        "arch": arch(cc),
        "cccl": cccl,
        "headers": digest,
        "nvrtc": _probe(nvrtc_version),
        "nvrtc_build": _probe(_library_build, "nvrtc"),
        "nvjitlink": _probe(nvjitlink_version),
        "nvjitlink_build": _probe(_library_build, "nvJitLink"),
        "nvvm": _probe(nvvm_version),
        "nvvm_build": _probe(_library_build, "nvvm"),
    }
    return tuple(sorted(items.items()))


def toolchain_identity(cc: tuple[int, int]) -> dict[str, str]:
    """Return every toolchain input that must be part of a compile cache key.

    Keys: ``arch`` (``sm_XY``), ``cccl`` (version), ``headers``
    (:func:`header_digest`), ``nvrtc`` / ``nvjitlink`` / ``nvvm`` (versions),
    ``nvrtc_build`` / ``nvjitlink_build`` / ``nvvm_build`` (the loaded
    library's ELF build id, so patch releases differ). The front end that
    compiles callbacks is part of the callbacks' own keys. A probe that fails is
    recorded as ``unavailable:<ExceptionClass>`` so the key stays stable. No
    paths, times or host names: the same toolchain gives the same identity on
    every machine.

    Parameters
    ----------
    cc : tuple of int
        Target compute capability, e.g. ``(9, 0)``.

    Returns
    -------
    dict of str to str
        A fresh dictionary (memoised per `cc` underneath).
    """
    major, minor = (int(v) for v in cc)
    return dict(_identity((major, minor)))


def _clear_caches() -> None:
    """Forget every memoised probe (test seam for environment changes)."""
    for fn in (
        _locate_cccl,
        _cccl_version_of,
        _header_digest,
        _identity,
        _library_build,
        nvrtc_archs,
    ):
        fn.cache_clear()
