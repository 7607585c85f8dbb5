# SPDX-License-Identifier: Apache-2.0
"""Cache keys: one versioned digest scheme for every artifact the library builds.

Every key is the SHA-256 of a canonical JSON document holding a schema
version, the artifact's kind and its inputs as ``str -> str`` parts. What the
parts are is decided by the builder of each kind, from the same values it
builds with:

===============  ==============================================================
kind             parts
===============  ==============================================================
``provider``     symbol, generated source, generator version, the NVRTC options
                 (:data:`scan._compile.NVRTC_OPTIONS`, the ones passed to NVRTC)
``callback``     descriptor key, value and state dtypes, front end and version
``kernel``       the link's inputs by content (:mod:`scan._numba_cuda._linkcache`)
every kind       ``toolchain.*``: :func:`scan._toolchain.toolchain_identity`
                 (architecture, CCCL version and header digest, NVRTC,
                 nvJitLink and NVVM versions and builds) via :func:`compile_key`
===============  ==============================================================

No paths, times, host names, ``hash()``, ``id()`` or ``repr()`` of arbitrary
objects go into a key, so keys agree across processes and machines.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from ._toolchain import toolchain_identity

__all__ = ["cache_key", "check_kind", "compile_key"]

# Bump when the key encoding changes: old entries then simply stop matching
# and age out through eviction.
_KEY_SCHEMA_VERSION = 1
_KIND_RE = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")


def check_kind(kind: str) -> str:
    """Return `kind` if it is a valid artifact kind (``provider``, ``callback``, ...)."""
    if not isinstance(kind, str) or not _KIND_RE.match(kind):
        raise ValueError(
            f"cache kind must match {_KIND_RE.pattern} (e.g. 'provider'); got {kind!r}."
        )
    return kind


def cache_key(kind: str, parts: Mapping[str, str]) -> str:
    """Return the cache key for `parts`: sha256 of a canonical, versioned JSON encoding.

    Parameters
    ----------
    kind : str
        What is being built (``"provider"``, ``"callback"``); part of the key.
    parts : Mapping[str, str]
        Every input of the build (source text or its digest, options, the
        toolchain identity, ...). Values must be ``str`` so nothing depends on
        ``repr`` of arbitrary objects.

    Returns
    -------
    str
        64 lowercase hex digits.

    Raises
    ------
    TypeError
        If a key or value of `parts` is not a ``str``.
    """
    check_kind(kind)
    for k, v in parts.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(
                f"cache key parts must map str to str; got {k!r}: {v!r} "
                f"({type(v).__name__}). Convert values explicitly (e.g. str(), a hex digest)."
            )
    doc = {"schema": _KEY_SCHEMA_VERSION, "kind": kind, "parts": dict(parts)}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def compile_key(kind: str, parts: Mapping[str, str], cc: tuple[int, int]) -> str:
    """Return :func:`cache_key` of `parts` plus ``toolchain_identity(cc)``.

    The identity's entries are added as ``toolchain.<name>``.

    Raises
    ------
    ValueError
        If `parts` already has a ``toolchain.``-prefixed entry.
    """
    clash = sorted(k for k in parts if k.startswith("toolchain."))
    if clash:
        raise ValueError(
            f"compile_key adds the toolchain identity itself; parts must not contain {clash}."
        )
    merged = dict(parts)
    merged.update({f"toolchain.{k}": v for k, v in toolchain_identity(cc).items()})
    return cache_key(kind, merged)
