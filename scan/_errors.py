# SPDX-License-Identifier: Apache-2.0
"""Exceptions raised by :mod:`scan`.

Each subclasses the nearest builtin so callers can catch either. Messages say
what was wrong, what was expected, what was got, and what to do.
"""

from __future__ import annotations

__all__ = [
    "CacheWarning",
    "CompileError",
    "PlanError",
    "ScanError",
    "ScanTypeError",
    "StateContractError",
    "ToolchainError",
    "too_much_shared_memory",
]


class ScanError(Exception):
    """Base class of every error raised by :mod:`scan`."""


class PlanError(ScanError, ValueError):
    """A scan, load or store call whose options cannot be honoured.

    Raised while the kernel is typed, before any C++ is generated.
    """


class ScanTypeError(ScanError, TypeError):
    """An operand of the wrong type or dtype was passed to a block primitive."""


class CompileError(ScanError, RuntimeError):
    """NVRTC or nvJitLink rejected generated code.

    Attributes
    ----------
    log : str
        The compiler's log.
    source_path : str or None
        Where the translation unit was written (only when ``STATEFN_SCAN_DUMP_DIR``
        names a folder).
    source : str
        The translation unit's text.
    """

    def __init__(
        self, message: str, *, log: str = "", source_path: str | None = None, source: str = ""
    ) -> None:
        super().__init__(message)
        self.log = log
        self.source_path = source_path
        self.source = source


class ToolchainError(ScanError, RuntimeError):
    """A part of the CUDA toolchain (headers or a compiler library) could not be found or used."""


class CacheWarning(UserWarning):
    """The compile cache could not be used as configured; work continues without it."""


class StateContractError(ScanError, RuntimeError):
    """A kernel broke the prefix callback's state contract (found by the simulator).

    Raised while a kernel runs under ``NUMBA_ENABLE_CUDASIM=1``: state that no
    thread wrote, state initialised differently in the calling lanes, or a scan
    whose callback takes in items that no load filled. The message names the
    kernel's file and line, the rule broken and the fix.
    """


def too_much_shared_memory(
    name: str,
    need: int,
    limit: int,
    *,
    log: str = "",
    arrays_only: bool = False,
    library: str = "",
) -> CompileError:
    """The refusal of a kernel that declares more static shared memory than a kernel may.

    Raised by the link (ptxas reports the total) and, with the same first
    sentence, by the simulator (`arrays_only`: `need` counts the kernel's own
    ``cuda.shared.array`` allocations, before any temp storage; `library`:
    `need` counts them and the least a call's library-owned temp storage
    takes, which `library` describes).
    """
    if library:
        return CompileError(
            f"kernel {name} needs at least {need} bytes of static shared memory, more than the "
            f"{limit} ({limit // 1024} KiB) a kernel may declare, as its compiled form would: "
            f"{library}; use tile I/O that needs none (algorithm='vectorize' or 'direct'), "
            "fewer threads or items per thread, or one caller-owned buffer passed as "
            "temp_storage= to the calls (block.temp_storage sizes it; see the temp storage docs)"
        )
    if arrays_only:
        why = (
            f"its cuda.shared.array allocations alone take {need} bytes, before the temp "
            "storage of its scan.block calls: make them smaller (a tile per block, not a "
            "row), or keep the tile in local arrays (block.load/block.store move it without "
            "a shared copy)"
        )
    else:
        why = (
            "most of it is the temp storage of its scan.block calls: use tile I/O that needs "
            "none (algorithm='vectorize' or 'direct'), fewer threads or items per thread, or "
            "one caller-owned buffer passed as temp_storage= to the calls (block.temp_storage "
            "sizes it; see the temp storage docs)"
        )
    return CompileError(
        f"kernel {name} needs {need} bytes of static shared memory, more than the {limit} "
        f"({limit // 1024} KiB) a kernel may declare; {why}",
        log=log,
    )
