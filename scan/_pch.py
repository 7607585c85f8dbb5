# SPDX-License-Identifier: Apache-2.0
"""Precompiled CUB headers for the units one process compiles (NVRTC 12.8+).

Parsing CUB's headers is most of what NVRTC spends on a unit, the same for
every configuration a user tries (docs/performance.md: 0.65 of 0.79 s on
the H200 host). NVRTC can keep that parse as a precompiled header (PCH) and
start later compiles from it, but a PCH lives in a heap of the NVRTC
library instance that made it: a file written by one process is refused by
the next (docs/results/cpu2_2026-12-04_nvrtc_pch.txt). So PCHs are made per
process, for each set of ``#include`` lines (and NVRTC options) that the
process compiles a unit with:

- the first unit with a set of include lines compiles from its headers, as
  before (making a PCH while compiling makes a unit slower, and the first
  launch waits for that unit);
- :data:`DELAY_S` seconds later a thread of the library makes the set's PCH
  from a unit of those include lines alone, with NVRTC's automatic PCH
  processing, in a folder of the process's own, while the process goes on
  (a user looking at the first kernel's results; NVRTC runs one compile at
  a time, so a unit compiled meanwhile waits for it);
- a second unit that comes before the thread started makes the PCH while it
  compiles instead;
- every later unit with those include lines compiles from that PCH.

A process whose units are all in the disk cache compiles nothing and makes
no PCH; one that exits within :data:`DELAY_S` of its first unit makes none
either. At exit a PCH not started is not made, one being made is waited
for (the rest of one header parse), and the folder is removed; the folders
of processes that were killed are removed by the next process that makes a
PCH. The PCH changes no output: a unit's LTO-IR is byte for byte the same
with and without it. ``STATEFN_SCAN_PCH=0`` turns this off; a PCH that
cannot be made (an older NVRTC or cuda.core, a full PCH heap) leaves
compiles as they were, and so do header sets past the first
:data:`MAX_SETS` of a process. A header set's PCH holds about as much
memory as its file, 126 MiB in the measurement above, while the process
lives.
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

__all__ = ["DELAY_S", "ENV_PCH", "HEADERS", "MAX_SETS", "Headers", "header_lines"]

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


#: The most header sets a process makes PCHs for (each holds 75-126 MiB while it
#: lives): a process that tries configurations of a few kernels has a few sets
#: (one a kernel's mix of families); the later ones compile from their headers.
MAX_SETS = 4

#: The start of a PCH folder's name; the process id follows.
_PREFIX = "statefn-scan-pch-"


def _sweep(root: str) -> None:
    """Remove the PCH folders under `root` of processes that are gone.

    A process removes its folder at exit; one that was killed cannot, and
    its PCHs (75-126 MiB each) would stay in the temporary folder.
    """
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(_PREFIX) :].split("-", 1)[0]
        if not entry.name.startswith(_PREFIX) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:  # alive (another user's: not ours to remove)
            pass


#: The body of the unit a PCH is made from: the include lines come first.
_STUB = 'extern "C" __device__ void statefn_scan_pch_stub() {}\n'

#: Seconds after a header set's first unit before its PCH is made in the background.
DELAY_S = 1.0

_Key = tuple[str, str]


class Headers:
    """The precompiled header sets of this process, by their directives and NVRTC options.

    Parameters
    ----------
    enabled : callable
        Whether PCHs may be made now (read when a unit would make one: the
        environment switch and the toolchain's support).
    delay : float
        Seconds between a header set's first unit and the start of its PCH
        in the background (:data:`DELAY_S`).
    """

    def __init__(self, enabled: Callable[[], bool], delay: float = DELAY_S) -> None:
        self._enabled = enabled
        self._delay = delay
        self._lock = threading.Lock()  # guards the state below
        self._nvrtc = threading.Lock()  # held by compiles that make or use a PCH
        self._ready: set[_Key] = set()  # have a PCH
        self._tried: set[_Key] = set()  # a PCH was asked for
        self._scheduled: dict[_Key, threading.Timer] = {}  # to be made in the background
        self._making: dict[_Key, threading.Thread] = {}  # being made in the background
        self._folder: str | None = None
        self._used = 0
        self._closing = False

    @contextmanager
    def compiling(self, source: str, options: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Compile one unit: yields the PCH options to add (empty: compile from the headers).

        `options` are the unit's :class:`cuda.core.ProgramOptions` fields.
        """
        lines = header_lines(source)
        key = (lines, repr(sorted(options.items())))
        with self._lock:
            timer = self._scheduled.pop(key, None)
            pending = self._making.get(key)
        if timer is not None:
            timer.cancel()  # a second unit came first: it makes the PCH itself
        elif pending is not None:
            pending.join()  # the rest of one header parse: less than a whole one
        with self._lock:
            ready = key in self._ready
            folder = self._folder
        if ready and folder is not None:
            with self._nvrtc:
                yield {"pch": True, "pch_dir": folder}
                self._used += 1
        elif timer is not None and folder is not None:
            with self._nvrtc:
                before = set(os.listdir(folder))
                yield {"pch": True, "pch_dir": folder}
                self._made(key, bool(set(os.listdir(folder)) - before))
        else:
            yield {}
            if lines:
                self._schedule(key, options)

    def _schedule(self, key: _Key, options: dict[str, Any]) -> None:
        """Have `key`'s PCH made after :attr:`delay` s, unless it was tried or PCHs are off."""
        with self._lock:
            if key in self._tried or len(self._tried) >= MAX_SETS or self._closing:
                return
            self._tried.add(key)
            if not self._enabled():
                return
            if self._folder is None:
                _sweep(tempfile.gettempdir())
                self._folder = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
                atexit.register(self._close, self._folder)
            timer = threading.Timer(self._delay, self._make, args=(key, options, self._folder))
            timer.name = "statefn-scan-pch"
            timer.daemon = True  # exit cancels it (_close) instead of waiting for it
            self._scheduled[key] = timer
        timer.start()

    def _make(self, key: _Key, options: dict[str, Any], folder: str) -> None:
        """Make `key`'s PCH from a unit of its include lines alone (in the timer's thread)."""
        with self._lock:
            if self._scheduled.pop(key, None) is None:  # a unit took it over, or exit
                return
            self._making[key] = threading.current_thread()
        made = False
        try:
            from cuda.core import Program, ProgramOptions

            with self._nvrtc:
                before = set(os.listdir(folder))
                opts = ProgramOptions(name="statefn_scan_pch", pch=True, pch_dir=folder, **options)
                Program(key[0] + _STUB, "c++", options=opts).compile("ltoir")
                made = bool(set(os.listdir(folder)) - before)
        except Exception:  # no PCH: later units compile from their headers
            made = False
        finally:
            self._made(key, made)

    def _made(self, key: _Key, made: bool) -> None:
        with self._lock:
            if made:
                self._ready.add(key)
            self._making.pop(key, None)

    def settle(self) -> None:
        """Wait for the PCHs scheduled or being made."""
        while True:
            with self._lock:
                pending = [*self._scheduled.values(), *self._making.values()]
            if not pending:
                return
            for thread in pending:
                thread.join()

    def _close(self, folder: str) -> None:
        """At exit: PCHs not started are not made; one being made is waited for."""
        with self._lock:
            self._closing = True
            timers = list(self._scheduled.values())
            self._scheduled.clear()
            making = list(self._making.values())
        for timer in timers:
            timer.cancel()
        for thread in making:
            thread.join()
        shutil.rmtree(folder, ignore_errors=True)

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
