# SPDX-License-Identifier: Apache-2.0
"""Precompiled CUB headers (scan._pch): made after a process's first unit, used by later ones.

A header set's PCH is made in the background a while after its first unit
(``DELAY_S``), or by its second unit when that comes first.

Each test runs in a fresh process: a process's PCHs live as long as it does
and a PCH made by one process is refused by the next.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from scan._pch import header_lines

CHILD = textwrap.dedent(
    """
    import io, json, os, threading, time
    PCH_THREAD = "statefn-scan-pch"
    PAUSE = os.environ.get("PCH_TEST_PAUSE") == "1"  # a user between configurations
    from cuda.core import Program, ProgramOptions
    from scan import _compile, _pch
    if not PAUSE:  # the second unit comes before the background PCH, however loaded the machine
        _pch.HEADERS._delay = 600.0

    UNIT = '''// a unit
    #include <cub/block/block_reduce.cuh>
    #include <cub/block/block_scan.cuh>

    extern "C" __device__ int statefn_scan_probe_{n}(int x) {{
      using reduce_t = cub::BlockReduce<int, {threads}>;
      __shared__ typename reduce_t::TempStorage storage;
      return reduce_t(storage).Sum(x);
    }}
    '''
    out = {}
    for n, threads in enumerate((128, 256, 64, 96)):
        source = UNIT.format(n=n, threads=threads)
        t = time.perf_counter()
        code = _compile._nvrtc(f"probe{n}", source, (9, 0))
        out[f"s{n}"] = time.perf_counter() - t
        out[f"making{n}"] = [t.name for t in threading.enumerate() if t.name == PCH_THREAD]
        if PAUSE:
            _pch.HEADERS.settle()
        out[f"ready{n}"] = _pch.HEADERS.ready
        options = ProgramOptions(name=f"probe{n}", **_compile.nvrtc_options((9, 0)))
        plain = bytes(Program(source, "c++", options=options).compile("ltoir").code)
        out[f"same{n}"] = code == plain
        out[f"used{n}"] = _pch.HEADERS.used
    if _pch.HEADERS.folder:  # NVRTC itself says it starts from the PCH
        log = io.StringIO()
        options = ProgramOptions(name="probe", pch=True, pch_dir=_pch.HEADERS.folder,
                                 pch_messages=True, **_compile.nvrtc_options((9, 0)))
        Program(UNIT.format(n=9, threads=32), "c++", options=options).compile("ltoir", logs=log)
        out["log"] = log.getvalue()
    print(json.dumps(out))
    """
)


def _child(**env: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_header_lines_are_the_directives_a_unit_starts_with():
    source = "// generated\n\n#include <a.cuh>\n  #include <b.cuh>\n// note\nnamespace x {}\n"
    source += "#include <c>\n"
    assert header_lines(source) == "#include <a.cuh>\n#include <b.cuh>\n"
    assert header_lines("int x;\n") == ""


def test_a_second_unit_right_after_the_first_makes_the_pch():
    got = _child()
    # the first unit compiles from its headers and schedules their PCH
    assert got["making0"] == ["statefn-scan-pch"]
    # the second, before the PCH was started, makes it while it compiles
    assert (got["ready0"], got["ready1"], got["ready2"], got["ready3"]) == (0, 1, 1, 1)
    assert got["making1"] == got["making2"] == got["making3"] == []
    # later units with the same include lines use it
    assert (got["used1"], got["used2"], got["used3"]) == (0, 1, 2)
    assert "using precompiled header file" in got["log"]
    # and the PCH changes nothing the units compile to
    assert [got[f"same{n}"] for n in range(4)] == [True] * 4


def test_a_pause_after_the_first_unit_has_the_pch_made_in_the_background():
    got = _child(PCH_TEST_PAUSE="1")
    assert got["used0"] == 0
    assert got["ready0"] == 1  # made in the background
    # every later unit with the same include lines uses it
    assert (got["used1"], got["used2"], got["used3"]) == (1, 2, 3)
    assert [got[f"same{n}"] for n in range(4)] == [True] * 4


def test_the_switch_turns_precompiled_headers_off():
    got = _child(STATEFN_SCAN_PCH="0")
    assert got["ready3"] == got["used3"] == 0
    assert got["making0"] == []
    assert got["same3"]


@pytest.mark.parametrize("var", ["1", ""])
def test_precompiled_headers_are_on_by_default(var: str):
    assert _child(STATEFN_SCAN_PCH=var)["used3"] == 2


def test_the_folders_of_killed_processes_are_swept(tmp_path):
    from scan._pch import _sweep

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {
        "gone": f"statefn-scan-pch-{int(gone.stdout)}-abc",
        "parent": f"statefn-scan-pch-{os.getppid()}-abc",
        "own": f"statefn-scan-pch-{os.getpid()}-abc",
        "other": "statefn-scan-other-1",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.pch").write_bytes(b"pch")
    _sweep(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        names[k] for k in ("parent", "own", "other")
    )


def test_a_process_makes_pchs_for_its_first_header_sets_only():
    from scan._pch import MAX_SETS, Headers

    made: list[str] = []

    class Recording(Headers):
        def _make(self, key, options, folder):  # what would be made, not NVRTC's work
            with self._lock:
                if self._scheduled.pop(key, None) is None:
                    return
            made.append(key[0])

    headers = Recording(lambda: True, delay=0.0)
    for n in range(MAX_SETS + 2):
        with headers.compiling(f"// unit\n#include <h{n}.cuh>\nint x;\n", {"arch": "sm_90"}) as pch:
            assert pch == {}  # none became ready: nothing was made
    headers.settle()
    assert made == [f"#include <h{n}.cuh>\n" for n in range(MAX_SETS)]


def test_exit_cancels_a_pch_not_started():
    from scan._pch import Headers

    headers = Headers(lambda: True, delay=60.0)
    with headers.compiling("#include <h.cuh>\nint x;\n", {"arch": "sm_90"}):
        pass
    assert headers.folder is not None
    assert os.path.isdir(headers.folder)
    t = time.perf_counter()
    headers._close(headers.folder)  # what exit runs
    assert time.perf_counter() - t < 5
    assert not os.path.exists(headers.folder)
    headers.settle()  # nothing left to wait for
