# SPDX-License-Identifier: Apache-2.0
"""The planted-bug audit: single bugs in the generated GPU code, and the host tests that catch them.

Each :data:`MUTATIONS` entry changes one spot of the generator (an exact text
replacement in one file of ``scan/``), so that the generated C++ has one
realistic bug. :func:`main` copies the project into a temporary folder once
per mutation, applies it, runs the CPU host-execution tests there
(``pytest tests/hostexec -m "not sim"``: tests that compare results with
NumPy or that the runtime's race, bounds and contract checks fail; no test
there reads the generated text), and writes the table of which tests failed
to ``tests/hostexec/AUDIT.md``. An unmutated run must pass first.

Run it from the repository root::

    .venv/bin/python tests/hostexec/audit.py [--only NAME ...]

With ``--only`` the named rows of the table are replaced (or added) and the
others kept.

``HOSTEXEC_CACHE`` (default: a folder under the system's temp folder) keeps
the harness builds between mutations; unchanged units build once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = Path(__file__).with_name("AUDIT.md")


@dataclass(frozen=True)
class Mutation:
    """One planted bug: `old` becomes `new` in `path` (exactly one occurrence)."""

    name: str
    bug: str
    path: str
    old: str
    new: str


MUTATIONS = [
    Mutation(
        "reverse-prefix-to-rank",
        "reverse scan: each thread's prefix is sent back to `rank` instead of `mirror`",
        "scan/_primitives/block_scan/_unit.py",
        '"  reverse_slots[1][mirror] = thread_prefix;",',
        '"  reverse_slots[1][rank] = thread_prefix;",',
    ),
    Mutation(
        "reverse-first-barrier",
        "reverse scan: the barrier between writing the mirrored totals and scanning them dropped",
        "scan/_primitives/block_scan/_unit.py",
        '        "  __syncthreads();",\n        "  value_t thread_prefix;",',
        '        "  value_t thread_prefix;",',
    ),
    Mutation(
        "reduce-valid-max",
        "block reduce with valid=: a thread's valid items combined by max instead of +",
        "scan/_primitives/block_reduce/__init__.py",
        'combine = "partial + input[i]" if',
        'combine = "(partial < input[i] ? input[i] : partial)" if',
    ),
    Mutation(
        "reduce-valid-threads",
        "block reduce with valid=: the threads holding valid items counted as count / n",
        "scan/_primitives/block_reduce/__init__.py",
        "f'(count + {n - 1}) / {n}'",
        "f'count / {n}'",
    ),
    Mutation(
        "reduce-broadcast-barrier",
        "block reduce broadcast: the barrier before every thread reads thread 0's result dropped",
        "scan/_primitives/block_reduce/__init__.py",
        '            "__syncthreads();",\n            "result = broadcast_slot;",',
        '            "result = broadcast_slot;",',
    ),
    Mutation(
        "reduce-dtype-unconverted",
        "block reduce with dtype=: the items read as accumulators, not converted one by one",
        "scan/_primitives/block_reduce/__init__.py",
        "    if plan.items_dtype is not None and not plan.scalar:",
        "    if False:",
    ),
    Mutation(
        "status-init-dropped",
        "tile status: the init kernel's InitializeStatus dropped (fresh memory is not reset)",
        "scan/_tile_status.py",
        '            "  tile_state.InitializeStatus(num_tiles);",\n',
        "",
    ),
    Mutation(
        "lookback-publish-unseeded",
        "look-back: tile 0 publishes its aggregate without the initial value",
        "scan/_primitives/block_scan/_unit.py",
        '        published = "scan_op_t{}(*static_cast<const value_t*>(initial_value), '
        'tile_aggregate)"',
        '        published = "tile_aggregate"',
    ),
    Mutation(
        "lookback-tile-ignored",
        "look-back: the tile= index ignored (the block's linear index always)",
        "scan/_primitives/block_scan/_unit.py",
        "tile < 0 ? static_cast<long long>({linear}) : tile;",
        "static_cast<long long>({linear});",
    ),
    Mutation(
        "zip-store-member",
        "zipped store: a field's array receives the member of its position, not the named field",
        "scan/_primitives/tile_io/_unit.py",
        'member = f"thread_items[i].f{members[name]}"',
        'member = f"thread_items[i].f{j}"',
    ),
    Mutation(
        "zip-padding-field0",
        "zipped load: every field's padding taken from field 0's default",
        "scan/_primitives/tile_io/_unit.py",
        'f"&static_cast<const value_t*>(oob_default)->f{members[name]}"',
        'f"&static_cast<const value_t*>(oob_default)->f0"',
    ),
    Mutation(
        "zip-words-together-field0",
        "zipped load: a full tile's fields, loaded together, all take field 0's words",
        "scan/_primitives/tile_io/_unit.py",
        'f"      memcpy(&field_items, w{j}, sizeof(w{j}));",',
        'f"      memcpy(&field_items, w0, sizeof(w{j}));",',
    ),
    Mutation(
        "zip-handover-warp",
        "zipped I/O: fields handed over with __syncwarp where their exchange is block-wide",
        "scan/_primitives/tile_io/_unit.py",
        '    return "__syncthreads(); // the next field reuses the temp storage"',
        '    return "__syncwarp(); // the next field reuses the temp storage"',
    ),
    Mutation(
        "warp-operand-order",
        "warp scan: a lane's items combined as op(item, prefix) instead of op(prefix, item)",
        "scan/_primitives/warp_scan/__init__.py",
        'f"  if ({apply}) acc = {op}(thread_prefix, acc);"',
        'f"  if ({apply}) acc = {op}(acc, thread_prefix);"',
    ),
    Mutation(
        "warp-temp-index",
        "warp scan: each logical warp's temp storage indexed by rank % lanes",
        "scan/_primitives/warp_scan/__init__.py",
        "warp_scan(temp_storage[rank / {plan.lanes}]);",
        "warp_scan(temp_storage[rank % {plan.lanes}]);",
    ),
    Mutation(
        "warp-store-alignment",
        "warp store: vector stores without the alignment check",
        "scan/_primitives/warp_io/__init__.py",
        'f"if (reinterpret_cast<unsigned long long>(p) % {align} == 0) "',
        'f"if (true) "',
    ),
    Mutation(
        "tile-tail-count",
        "tile I/O: a partial tile's guarded accesses count from the tile's start, not the thread's",
        "scan/_primitives/tile_io/_unit.py",
        'args = f"0, p + first, {buffer}, valid_items - first"',
        'args = f"0, p + first, {buffer}, valid_items"',
    ),
    Mutation(
        "tile-io-barrier",
        "tile I/O: the barrier after an exchange through shared memory dropped",
        "scan/_primitives/tile_io/_unit.py",
        '        "  __syncthreads(); // temp storage may be reused after this barrier"\n'
        "        if plan.auto_sync and plan.uses_shared_memory",
        '        ""\n        if plan.auto_sync and plan.uses_shared_memory',
    ),
    Mutation(
        "exclusive-first-output",
        "scan of integers with a callback: an exclusive scan's first item not given the prefix",
        "scan/_primitives/block_scan/_unit.py",
        '    if start:\n        lines.append("  output[0] = thread_prefix;")',
        "    if start:\n        pass",
    ),
    Mutation(
        "callback-barrier-raking",
        "scans with a callback: the trailing barrier left out for raking too (not only warp_scans)",
        "scan/_primitives/block_scan/_unit.py",
        '        and plan.algorithm == "warp_scans"\n        and plan.temp_storage == "implicit"',
        '        and plan.temp_storage == "implicit"',
    ),
    Mutation(
        "half-store-last-unrounded",
        "converting store (float16/bfloat16 array): a thread's last item not rounded into the "
        "array's type",
        "scan/_primitives/tile_io/_unit.py",
        'f"    for (int i = 0; i < {n}; ++i) memory_items[i] = to_memory(thread_items[i]);\\n"',
        'f"    for (int i = 0; i + 1 < {n}; ++i) memory_items[i] = to_memory(thread_items[i]);\\n"',
    ),
    Mutation(
        "complex-product-sign",
        "complex values: the product's real part takes + a.im * b.im instead of -",
        "scan/_codegen.py",
        '"{ return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }",',
        '"{ return {a.re * b.re + a.im * b.im, a.re * b.im + a.im * b.re}; }",',
    ),
    Mutation(
        "reduce-dtype-complex-parts",
        "block reduce with dtype=: a complex item's parts swapped as it is widened",
        "scan/_primitives/block_reduce/__init__.py",
        'return f"value_t{{static_cast<{part}>({x}.re), static_cast<{part}>({x}.im)}}"',
        'return f"value_t{{static_cast<{part}>({x}.im), static_cast<{part}>({x}.re)}}"',
    ),
    Mutation(
        "reduce-dtype-real-to-complex",
        "block reduce with dtype=: a real item widened to a complex accumulator lands in the "
        "imaginary part",
        "scan/_primitives/block_reduce/__init__.py",
        'return f"value_t{{static_cast<{part}>({x}), {part}(0)}}"',
        'return f"value_t{{{part}(0), static_cast<{part}>({x})}}"',
    ),
    Mutation(
        "half-vectors-offset",
        "converting vectorize tile: each thread's 16-byte vectors taken at rank, not at its first "
        "item (rank x items)",
        "scan/_primitives/tile_io/_unit.py",
        'first = f"cub::RowMajorTid({bx}, {by}, {bz}) * {n}"',
        'first = f"cub::RowMajorTid({bx}, {by}, {bz})"',
    ),
    Mutation(
        "warp-half-words-offset",
        "warp load/store of half-precision rows: a lane's 16-byte words taken at its lane index, "
        "not at its first item (lane x items)",
        "scan/_primitives/warp_io/__init__.py",
        'move = " ".join(word_moves(load, f"p + lane * {n}", "memory_items", nbytes // 16))',
        'move = " ".join(word_moves(load, f"p + lane", "memory_items", nbytes // 16))',
    ),
    Mutation(
        "carry-last-of-thread-zero",
        "differences and heads with carry=: the carried item taken from thread 0's last item, "
        "not the tile's",
        "scan/_primitives/_neighbours.py",
        'f"if (cub::RowMajorTid({bx}, {by}, {bz}) == {threads - 1}) last_item = input[{n - 1}];",',
        'f"if (cub::RowMajorTid({bx}, {by}, {bz}) == 0) last_item = input[{n - 1}];",',
    ),
    Mutation(
        "difference-carry-not-passed",
        "adjacent difference with carry=: CUB not given the item before the tile",
        "scan/_primitives/adjacent_difference/__init__.py",
        'lines += [*before, call + ", carry_item);", *after]',
        'lines += [*before, call + ");", *after]',
    ),
    Mutation(
        "heads-operands-swapped",
        "head flags with op=: the user's operator called as op(item, previous)",
        "scan/_primitives/flag_heads/__init__.py",
        'test = f"value_t r; {flag_callback.symbol}(&r, &a, &b); return r != value_t(0);"',
        'test = f"value_t r; {flag_callback.symbol}(&r, &b, &a); return r != value_t(0);"',
    ),
    Mutation(
        "ordered-lookback-is-cubs",
        "deterministic status: the scan uses CUB's look-back (right results, grouping by timing)",
        "scan/_primitives/block_scan/_unit.py",
        "using lookback_op_t = ordered_lookback_op_t;",
        "using lookback_op_t = cub::TilePrefixCallbackOp<value_t, scan_op_t, tile_state_t>;",
    ),
    Mutation(
        "ordered-lookback-stale-prefix",
        "deterministic status: an anchor met going forward adds its published prefix as if it "
        "were its aggregate",
        "scan/_primitives/block_scan/_unit.py",
        "        prefix = done ? last : scan_op_t{}(scan_op_t{}(prefix, group), last);",
        "        prefix = scan_op_t{}(scan_op_t{}(prefix, group), last);",
    ),
    Mutation(
        "ordered-lookback-one-lane",
        "deterministic status: thread 0 alone looks back (the warp-wide wait hangs on a GPU)",
        "scan/_primitives/block_scan/_unit.py",
        "    if (lane == 0) tile_state.SetPartial(tile_index, block_aggregate);",
        "    if (lane != 0) return block_aggregate;\n"
        "    tile_state.SetPartial(tile_index, block_aggregate);",
    ),
    Mutation(
        "ordered-lookback-tree-swapped",
        "deterministic status: the tree combining consecutive tiles puts the later one on the left",
        "scan/_primitives/block_scan/_unit.py",
        "if ((lane & (2 * d - 1)) == 0 && lane + d < count) v = scan_op_t{}(v, other);",
        "if ((lane & (2 * d - 1)) == 0 && lane + d < count) v = scan_op_t{}(other, v);",
    ),
    Mutation(
        "ordered-lookback-every-tile-inclusive",
        "deterministic status: every tile, not only the anchors, publishes its inclusive prefix",
        "scan/_primitives/block_scan/_unit.py",
        "    if (lane == 0 && tile_index % 32 == 0)",
        "    if (lane == 0)",
    ),
]


def _copy(folder: Path) -> None:
    for name in ("scan", "statefn", "tests", "typing_stubs"):
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")


def _pytest(folder: Path, cache: Path) -> tuple[int, list[tuple[str, str]], int, float]:
    """Run the host tests in `folder`: (status, [(failed test, first line)], tests, seconds)."""
    junit = folder / "junit.xml"
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": str(folder),
            "HOSTEXEC_CACHE": str(cache),
            "NUMBA_ENABLE_CUDASIM": "0",
        }
    )
    t0 = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/hostexec",
            "-m",
            "not sim",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t0
    failed: list[tuple[str, str]] = []
    total = 0
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            total += 1
            problem = case.find("failure")
            if problem is None:
                problem = case.find("error")
            if problem is not None:
                text = problem.get("message") or problem.text or ""
                failed.append((case.get("name", "?"), _first_line(text)))
    return done.returncode, failed, total, seconds


def _first_line(message: str) -> str:
    for line in message.splitlines():
        line = line.strip()
        if "hostexec: error:" in line:
            return "runtime check: " + line.split("hostexec: error:", 1)[1].split(": ", 1)[-1]
        if line.startswith(("Arrays are not equal", "Not equal to tolerance")):
            return "results differ from NumPy"
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    return lines[0] if lines else "?"


def _kind(first: str) -> str:
    return "race/bounds/contract check" if first.startswith("runtime check") else "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="mutation names")
    args = parser.parse_args()
    cache = Path(os.environ.get("HOSTEXEC_CACHE") or Path(tempfile.gettempdir()) / "hostexec-audit")
    cache.mkdir(parents=True, exist_ok=True)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    rows = []
    with tempfile.TemporaryDirectory(prefix="hostexec-audit-") as tmp:
        base = Path(tmp) / "baseline"
        _copy(base)
        status, failed, total, seconds = _pytest(base, cache)
        print(f"baseline: rc={status}, {len(failed)} of {total} failed, {seconds:.0f}s", flush=True)
        if status != 0:
            print("the unmutated project must pass first:", failed)
            return 1
        for mutation in chosen:
            folder = Path(tmp) / mutation.name
            _copy(folder)
            target = folder / mutation.path
            text = target.read_text(encoding="utf-8")
            if text.count(mutation.old) != 1:
                print(f"{mutation.name}: the text to replace occurs {text.count(mutation.old)}x")
                return 1
            target.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
            status, failed, total, seconds = _pytest(folder, cache)
            shutil.rmtree(folder, ignore_errors=True)
            print(f"{mutation.name}: {len(failed)} of {total} failed ({seconds:.0f}s)", flush=True)
            rows.append((mutation, failed, total))
    _write(rows, merge=bool(args.only))
    missed = [m.name for m, failed, _ in rows if not failed]
    if missed:
        print("NOT CAUGHT:", ", ".join(missed))
    return 1 if missed else 0


def _write(rows: list[tuple[Mutation, list[tuple[str, str]], int]], *, merge: bool) -> None:
    """Write the table; with `merge`, replace or add only these rows (in MUTATIONS' order)."""
    cells: dict[str, str] = {}
    if merge and TABLE.exists():
        for line in TABLE.read_text(encoding="utf-8").splitlines():
            for m in MUTATIONS:
                if line.startswith("| ") and f"(`{m.name}`)" in line:
                    cells[m.name] = line.split(" | ", 1)[1]
    for mutation, failed, total in rows:
        tests = sorted({name.split("[")[0] for name, _ in failed})
        first = failed[0][1] if failed else "NOT CAUGHT"
        caught = f"{len(failed)} of {total} tests: " + ", ".join(f"`{t}`" for t in tests)
        what = f"{_kind(first)}: {first}" if failed else first
        cells[mutation.name] = (
            f"{mutation.bug} (`{mutation.name}`) | `{mutation.path}` | {caught} | "
            f"{what.replace('|', '/')} |"
        )
    lines = [
        "<!-- SPDX-License-Identifier: Apache-2.0 -->",
        "# Planted-bug audit of the generated GPU code",
        "",
        "Written by `tests/hostexec/audit.py`: each row plants one bug in the code generator",
        "(one text replacement in `scan/`), runs the CPU host-execution tests",
        '(`pytest tests/hostexec -m "not sim"`) and lists the tests that failed. Every one of',
        "those tests runs the generated code on the host and compares its results with NumPy,",
        "or fails on a check of the host runtime (race, bounds, temp-storage reuse, contract);",
        "none reads the generated text. `./run tests` runs them.",
        "",
        "| # | planted bug | file | caught by | first failure |",
        "| --- | --- | --- | --- | --- |",
    ]
    named = [m.name for m in MUTATIONS if m.name in cells]
    for i, name in enumerate(named, 1):
        lines.append(f"| {i} | {cells[name]}")
    TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
