# SPDX-License-Identifier: Apache-2.0
"""Linked kernels in the persistent cache: no nvJitLink run on a warm start.

A kernel that calls :mod:`scan.block` is linked by nvJitLink with the CUB
providers' and callbacks' LTO-IR, with link-time optimisation: a few hundred
kilobytes of IR optimised and assembled again in every process (0.1-0.2 s on
an H200 host). A plain Numba kernel links in milliseconds. So the code library
of every kernel that calls the library asks this cache first.

The key is the link's complete input, by content: the kernel's own LTO-IR
(NVVM's output for this kernel, which Numba computes anyway), the digest of
every linked file, the link options (architecture, LTO, register limit) and
the toolchain identity (nvJitLink's and NVVM's versions and builds, the driver
version). A link whose inputs or tools differ misses; a hit is the cubin
those exact inputs produced. A library that links anything this module cannot
read by content (a device runtime library, an unknown object) links as usual.

This module is the one place that reaches into numba-cuda's
``CUDACodeLibrary`` (numba-cuda offers no supported way to hand a library a
linked cubin): it wraps ``get_cubin`` and reads the private attributes listed
in :data:`NEEDED`. A library without them is left alone, and a test fails
loudly when numba-cuda stops offering them.

Only the code library of the kernel that lowers a call is wired up: a kernel
that reaches the library through a separately compiled device function links
as usual in each process (the provider and callback caches still apply).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._cache import Artifact, get_or_build
from .._errors import CompileError, too_much_shared_memory
from .._keys import compile_key
from .._target import arch
from .._toolchain import dist_version, nvjitlink_version

__all__ = ["KIND", "NEEDED", "attach", "link_key", "link_objects", "shared_memory_error"]

#: Cache kind of linked kernels (``python -m scan cache list`` shows it).
KIND = "kernel"

_MARK = "_statefn_scan_link_cache"
#: What the library must offer for the cache to take part (numba-cuda's CUDACodeLibrary).
NEEDED = (
    "get_cubin",
    "get_ltoir",
    "_ensure_cc",
    "_linking_files",
    "_cubin_cache",
    "_linkerinfo_cache",
    "_lto",
    "_max_registers",
    "needs_cudadevrt",
)
_KEY_VERSION = "1"


def attach(library: Any) -> None:
    """Make `library` (a kernel's code library) look up and store its linked cubin.

    Idempotent; does nothing for an object that does not look like numba-cuda's
    ``CUDACodeLibrary``.
    """
    if getattr(library, _MARK, False) or not all(hasattr(library, n) for n in NEEDED):
        return
    original = library.get_cubin

    def get_cubin(cc: Any = None) -> Any:
        return _get_cubin(library, original, cc)

    library.get_cubin = get_cubin
    setattr(library, _MARK, True)


def _digest(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else bytes(data)
    return hashlib.sha256(raw).hexdigest()


def _input_digest(item: Any) -> str | None:
    """``kind:sha256`` of one linked file, or None if it cannot be read by content."""
    if isinstance(item, str):
        path = Path(item)
        if not path.suffix or not path.is_file():
            return None
        return f"{path.suffix.lstrip('.')}:{_digest(path.read_bytes())}"
    data = getattr(item, "data", None)
    if not hasattr(item, "kind") or not isinstance(data, bytes | str):
        return None
    return f"{type(item).__name__}:{_digest(data)}"


@functools.cache
def _driver_version() -> str:
    try:
        from cuda.bindings import driver

        err, version = driver.cuDriverGetVersion()
        return str(version) if int(err) == 0 else "unavailable"
    except Exception:
        return "unavailable"


def link_key(library: Any, cc: tuple[Any, ...]) -> str | None:
    """The cache key of linking `library` for `cc` (as numba-cuda's ``_ensure_cc`` gives).

    None when the link cannot be keyed by content: the library is not compiled
    for LTO, needs the device runtime, or links a file this module cannot read.
    """
    if not library._lto or library.needs_cudadevrt:
        return None
    inputs = []
    for item in library._linking_files:
        digest = _input_digest(item)
        if digest is None:
            return None
        inputs.append(digest)
    kernel = library.get_ltoir(cc=cc)
    return _key(kernel, inputs, cc, library._max_registers or 0)


def _key(kernel_ltoir: bytes, inputs: list[str], cc: tuple[Any, ...], max_registers: int) -> str:
    parts = {
        "version": _KEY_VERSION,
        "kernel_ltoir": _digest(kernel_ltoir),
        "inputs": ",".join(sorted(inputs)),
        "arch": arch(cc, str(cc[2]) if len(cc) > 2 else ""),
        "max_registers": str(max_registers),
        "driver": _driver_version(),
        "cuda_core": dist_version("cuda-core"),
    }
    return compile_key(KIND, parts, (int(cc[0]), int(cc[1])))


_TOO_MUCH_SHARED = re.compile(
    r"uses too much shared data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max\)"
)


def shared_memory_error(exc: BaseException, name: str) -> CompileError | None:
    """A readable error for a link that ptxas refused for its static shared memory.

    The library-owned temp storage of ``scan.block`` calls is static shared
    memory, so large tiles with exchanging algorithms can exceed what a kernel
    may declare (48 KiB); ptxas then reports it under a mangled kernel name.
    """
    found = _TOO_MUCH_SHARED.search(str(exc))
    if found is None:
        return None
    need, limit = int(found[1], 16), int(found[2], 16)
    return too_much_shared_memory(name, need, limit, log=str(exc))


def link_objects(objects: Sequence[bytes], cc: tuple[int, int], name: str = "") -> bytes:
    """Link LTO-IR objects (the kernel's first) into a cubin for `cc`, through the cache."""
    from cuda.core import Linker, LinkerOptions, ObjectCode

    key = _key(objects[0], [f"ltoir:{_digest(o)}" for o in objects[1:]], cc, 0)

    def build() -> Artifact:
        nvjitlink_version()  # a missing nvJitLink is a ToolchainError
        options = LinkerOptions(arch=arch(cc), link_time_optimization=True)
        linker = Linker(*(ObjectCode.from_ltoir(o) for o in objects), options=options)
        try:
            cubin = linker.link("cubin")
        except Exception as exc:
            readable = shared_memory_error(exc, name or "(unnamed)")
            if readable is not None:
                raise readable from None
            raise
        return Artifact(payload=bytes(cubin.code), meta={})

    return get_or_build(KIND, key, build, what=f"{name or '(unnamed)'} for {arch(cc)}").payload


def _get_cubin(library: Any, original: Any, cc: Any) -> Any:
    cc = library._ensure_cc(cc)
    cached = library._cubin_cache.get(cc)
    if cached:
        return cached
    key = link_key(library, cc)
    if key is None:
        return original(cc)

    name = str(getattr(library, "_entry_name", None) or "kernel")

    def build() -> Artifact:
        try:
            obj = original(cc)
        except Exception as exc:
            readable = shared_memory_error(exc, name)
            if readable is not None:
                raise readable from None
            raise
        log = library._linkerinfo_cache.get(cc, "")
        return Artifact(payload=bytes(obj.code), meta={"info_log": str(log or "")})

    art = get_or_build(KIND, key, build, what=f"{name} for {arch(cc)}")
    if cc not in library._cubin_cache:  # served from the cache: no link ran here
        from cuda.core import ObjectCode

        library._cubin_cache[cc] = ObjectCode.from_cubin(art.payload, name=name)
        library._linkerinfo_cache[cc] = str(art.meta.get("info_log") or "")
    return library._cubin_cache[cc]
