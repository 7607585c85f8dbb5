# SPDX-License-Identifier: Apache-2.0
"""Would NVRTC's precompiled headers cut the compile of a new provider unit? Without a GPU.

Compiles the unit a row-scan kernel needs (tile load, scan with a stateful
prefix callback, tile store: one NVRTC unit of three providers, as the build
layer makes it) for sm_90:

* plain, as the library compiles it (twice: the second run has the files in
  the OS cache);
* with a prelude header that includes CUB's four block headers first, plain;
* creating a precompiled header of that prelude (``--create-pch``);
* using it in the same process (``--use-pch``), for this unit and for the
  unit of another configuration;
* using it from a new process, with NVRTC's log.

    python bench/nvrtc_pch.py [--repeats 3]

Prints one line per measurement (seconds, median of the repeats) and the
log NVRTC writes when a process uses a precompiled header another process
made.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PRELUDE = """#pragma once
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
"""


def unit(items: int) -> str:
    """The unit of load + stateful inclusive_sum + store of int32, 128 threads x `items`."""
    import numpy as np
    from helpers.plans import scan_plan, tile_plan

    import statefn
    from scan._codegen import CallbackDecl, render_group
    from scan._plan import ArrayFact
    from scan._primitives.block_scan import render_scan
    from scan._primitives.tile_io import render_tile_io

    @statefn.stateful(np.int64)
    def total(state: Any, aggregate: Any) -> Any:
        prefix = state[0]
        state[0] = prefix + aggregate
        return prefix

    plan = scan_plan(
        values=ArrayFact(np.int32, 1, items),
        prefix_op=total,
        prefix_state=ArrayFact(np.int64, 1, 1, memory="local"),
    )
    symbol, c_decl = statefn.pointer_abi(plan.prefix_op, plan.value_dtype)
    callback = CallbackDecl(symbol=symbol, c_decl=c_decl)
    load, store = (tile_plan(d, np.int32, 128, items, None) for d in ("load", "store"))
    units = [
        ("load", render_tile_io(load, symbol="load"), False),
        ("scan", render_scan(plan, prefix_callback=callback, symbol="scan"), False),
        ("store", render_tile_io(store, symbol="store"), False),
    ]
    return render_group("bench_group", units)


def compile_seconds(source: str, include: list[str], **pch: Any) -> tuple[float, str]:
    """Seconds NVRTC takes for `source` (LTO-IR for sm_90), and its log."""
    from cuda.core import Program, ProgramOptions

    from scan._compile import nvrtc_options

    table = nvrtc_options((9, 0))
    table["include_path"] = [*include, *table["include_path"]]
    log = io.StringIO()
    start = time.perf_counter()
    program = Program(source, "c++", options=ProgramOptions(name="bench", **table, **pch))
    program.compile("ltoir", logs=log)
    return time.perf_counter() - start, log.getvalue().strip("\x00\n")


def median(fn: Any, repeats: int) -> float:
    return statistics.median(fn() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # a new process using the precompiled header
        folder, pch = args.child
        source = f"#include <statefn_prelude.cuh>\n{unit(4)}"
        seconds, log = compile_seconds(source, [folder], use_pch=pch)
        print(f"{seconds:.3f}")
        print(log)
        return
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "statefn_prelude.cuh").write_text(PRELUDE)
        plain, other = unit(4), unit(8)
        prelude, prelude_other = (f"#include <statefn_prelude.cuh>\n{u}" for u in (plain, other))
        pch = str(Path(folder, "prelude.pch"))
        rows = [
            ("plain (as the library compiles)", median(lambda: compile_seconds(plain, [])[0], 1)),
            ("plain, again", median(lambda: compile_seconds(plain, [])[0], args.repeats)),
            (
                "prelude first, no pch",
                median(lambda: compile_seconds(prelude, [folder])[0], args.repeats),
            ),
            (
                "create the pch (this unit)",
                compile_seconds(prelude, [folder], create_pch=pch)[0],
            ),
            (
                "use the pch, same process",
                median(lambda: compile_seconds(prelude, [folder], use_pch=pch)[0], args.repeats),
            ),
            (
                "use the pch, same process, another configuration (8 items)",
                median(
                    lambda: compile_seconds(prelude_other, [folder], use_pch=pch)[0], args.repeats
                ),
            ),
        ]
        child = subprocess.run(
            [sys.executable, __file__, "--child", folder, pch],
            capture_output=True,
            text=True,
            check=True,
        )
        seconds, _, log = child.stdout.partition("\n")
        rows.append(("use the pch from a new process", float(seconds)))
        for what, value in rows:
            print(f"{value:7.3f} s  {what}")
        print(f"pch file: {Path(pch).stat().st_size / 2**20:.0f} MiB")
        print("NVRTC's log in the new process:")
        print("  " + log.strip().replace("\n", "\n  "))


if __name__ == "__main__":
    main()
