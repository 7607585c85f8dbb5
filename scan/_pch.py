# SPDX-License-Identifier: Apache-2.0
"""Precompiled CUB headers for the units one process compiles (NVRTC 12.8+).

Parsing CUB's headers is most of what NVRTC spends on a unit, the same for
every configuration a user tries (docs/performance.md: 0.65 of 0.79 s on
the H200 host). NVRTC can keep that parse as a precompiled header (PCH) and
start later compiles from it, but a PCH lives in a heap of the NVRTC
library instance that made it: a file written by one process is refused by
the next (docs/results/cpu2_2026-12-04_nvrtc_pch.txt). So PCHs are made per
process, when a process shows it compiles more than one unit with the same
``#include`` lines:

- the first unit with a set of include lines compiles from its headers
  (making a PCH while compiling makes a unit slower, which a process that
  compiles one kernel would pay for nothing);
- the second compiles with NVRTC's automatic PCH processing, which makes
  the PCH while compiling it, in a folder of the process's own;
- every later one compiles from that PCH.

It all happens in the compiling thread: nothing runs in the background or
is left running at exit. The PCH changes no output: a unit's LTO-IR is byte
for byte the same with and without it. ``STATEFN_SCAN_PCH=0`` turns this
off; a PCH that cannot be made (an older NVRTC or cuda.core, a full PCH
heap) leaves compiles as they were. A header set's PCH holds about as much
memory as its file, 126 MiB in the measurement above, while the process
lives; the folder is removed at exit.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ENV_PCH", "HEADERS", "Headers", "header_lines"]

#: Set to 0 to compile every unit from its headers.
ENV_PCH = "STATEFN_SCAN_PCH"

#: NVRTC's first release with precompiled headers.
_FIRST_PCH_NVRTC = (12, 8)


def header_lines(source: str) -> str:
    """The preprocessing directives a unit starts with (blank lines and comments skipped).

    NVRTC matches a PCH against this initial sequence of directives, which
    is what a unit shares with the others of its kind (the CUB headers it
    includes); the rest of the unit is compiled from the PCH on.
    """
    lines = []
    for line in source.splitlines():
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        if not text.startswith("#"):
            break
        lines.append(text)
    return "\n".join(lines) + "\n" if lines else ""


class Headers:
    """The precompiled header sets of this process, by their directives and NVRTC options.

    Parameters
    ----------
    enabled : callable
        Whether PCHs may be made now (read when a unit would make one: the
        environment switch and the toolchain's support).
    """

    def __init__(self, enabled: Callable[[], bool]) -> None:
        self._enabled = enabled
        self._lock = threading.Lock()  # guards the state below
        self._nvrtc = threading.Lock()  # held by compiles that make or use a PCH
        self._seen: set[tuple[str, str]] = set()  # compiled from their headers once
        self._ready: set[tuple[str, str]] = set()  # have a PCH
        self._tried: set[tuple[str, str]] = set()  # a PCH was asked for
        self._folder: str | None = None
        self._used = 0

    @contextmanager
    def compiling(self, source: str, options: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Compile one unit: yields the PCH options to add (empty: compile from the headers).

        `options` are the unit's :class:`cuda.core.ProgramOptions` fields.
        """
        lines = header_lines(source)
        key = (lines, repr(sorted(options.items())))
        with self._lock:
            ready = key in self._ready
            make = False
            if not ready and lines and key in self._seen and key not in self._tried:
                make = self._enabled()
                if make:
                    self._tried.add(key)
                    if self._folder is None:
                        self._folder = tempfile.mkdtemp(prefix="statefn-scan-pch-")
                        atexit.register(shutil.rmtree, self._folder, ignore_errors=True)
            self._seen.add(key)
            folder = self._folder
        if not (ready or make) or folder is None:
            yield {}
            return
        with self._nvrtc:
            before = set(os.listdir(folder)) if make else set()
            yield {"pch": True, "pch_dir": folder}
            if make and set(os.listdir(folder)) - before:
                with self._lock:
                    self._ready.add(key)
            elif ready:
                self._used += 1

    @property
    def folder(self) -> str | None:
        """Where this process's PCHs are written (None until the first is made)."""
        return self._folder

    @property
    def used(self) -> int:
        """How many units compiled from a PCH made earlier."""
        return self._used

    @property
    def ready(self) -> int:
        """How many header sets have a PCH."""
        with self._lock:
            return len(self._ready)


def _enabled() -> bool:
    if os.environ.get(ENV_PCH, "1").strip() == "0":
        return False
    try:
        from cuda.core import ProgramOptions

        from ._toolchain import nvrtc_version

        return hasattr(ProgramOptions, "pch_dir") and nvrtc_version() >= _FIRST_PCH_NVRTC
    except Exception:
        return False


#: The process's precompiled headers.
HEADERS = Headers(_enabled)
