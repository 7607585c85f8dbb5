# SPDX-License-Identifier: Apache-2.0
"""Precompiled CUB headers (scan._pch): made by a process's second unit, used by later ones.

Each test runs in a fresh process: a process's PCHs live as long as it does
and a PCH made by one process is refused by the next.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from scan._pch import header_lines

CHILD = textwrap.dedent(
    """
    import io, json, time
    from cuda.core import Program, ProgramOptions
    from scan import _compile, _pch

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


def test_later_units_compile_from_the_headers_the_second_one_left():
    got = _child()
    # the first unit compiles from its headers, the second makes their PCH
    assert (got["ready0"], got["ready1"], got["ready2"], got["ready3"]) == (0, 1, 1, 1)
    # later units with the same include lines use it
    assert (got["used1"], got["used2"], got["used3"]) == (0, 1, 2)
    assert "using precompiled header file" in got["log"]
    # and the PCH changes nothing the units compile to
    assert [got[f"same{n}"] for n in range(4)] == [True] * 4


def test_the_switch_turns_precompiled_headers_off():
    got = _child(STATEFN_SCAN_PCH="0")
    assert got["ready3"] == got["used3"] == 0
    assert got["same3"]


@pytest.mark.parametrize("var", ["1", ""])
def test_precompiled_headers_are_on_by_default(var: str):
    assert _child(STATEFN_SCAN_PCH=var)["used3"] == 2
