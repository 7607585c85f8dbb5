# SPDX-License-Identifier: Apache-2.0
"""What a callback's key costs when the program holds large data.

Two measurements, each in fresh processes with an empty compile cache:

``compile``
    ``scan.compile`` of the records recurrence (``h = a * h + b`` over
    ``(a, b)`` float32 pairs, a stateful callback reading ``state[0].a`` and
    ``agg.b``) in a script that also holds N MB of unrelated float32 arrays
    in module globals named ``a`` and ``b``, the names of the record's fields.
    Rows of the same process with N = 0 are the baseline; contenders alternate.
``table``
    A callback that loads a global table of N MB: the time of one ``key``
    read against one ``hashlib.sha256`` pass over the table's bytes.

Usage::

    python bench/key_cost.py --mb 800 --table-mb 400 --repeat 3 --out docs/results/key_cost.json

Prints one line per measurement and writes every timing as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

_COMPILE = textwrap.dedent(
    """
    import sys, time
    t0 = time.perf_counter()
    import numpy as np
    from numba import cuda
    import scan, statefn
    from scan import block

    MB = int(sys.argv[1])
    # the script's data: two arrays named like the record's fields
    a = np.ones(MB * 2**20 // 8, np.float32)
    b = np.ones(MB * 2**20 // 8, np.float32)

    pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)

    def affine(x, y):
        return (x.a * y.a, y.a * x.b + y.b)

    @statefn.stateful(pair)
    def carry(state, agg):
        prefix = (state[0].a, state[0].b)
        state[0].a = prefix[0] * agg.a
        state[0].b = agg.a * prefix[1] + agg.b
        return prefix

    @cuda.jit
    def recurrence(src, dst):
        row = cuda.blockIdx.x
        state = cuda.local.array(1, pair)
        state[0].a = 1.0
        state[0].b = 0.0
        items = cuda.local.array(4, pair)
        for base in range(0, src.shape[1], 128 * 4):
            block.load(src[row], base, items, oob_default=(1.0, 0.0))
            block.inclusive_scan(items, items, scan_op=affine, prefix_op=carry, prefix_state=state)
            block.store(dst[row], base, items)

    t1 = time.perf_counter()
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype

    rows = types.Array(from_dtype(pair), 2, "C")
    cubin = scan.compile(recurrence, (rows, rows), cc=(9, 0), block=128)
    t2 = time.perf_counter()
    print(f"{t1 - t0:.4f} {t2 - t1:.4f} {len(cubin)}")
    """
)

_TABLE = textwrap.dedent(
    """
    import hashlib, sys, time
    import numpy as np
    import statefn

    MB = int(sys.argv[1])
    TABLE = np.arange(MB * 2**20 // 4, dtype=np.float32)

    @statefn.stateful(np.float32)
    def lookup(state, agg):
        prefix = state[0]
        state[0] = prefix + TABLE[int(agg) % TABLE.shape[0]]
        return prefix

    t0 = time.perf_counter()
    lookup.key
    t1 = time.perf_counter()
    hashlib.sha256(TABLE.data).digest()
    t2 = time.perf_counter()
    print(f"{t1 - t0:.4f} {t2 - t1:.4f}")
    """
)


def _run(script: str, *args: str) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="key-cost-") as cache:
        env = {**os.environ, "STATEFN_SCAN_CACHE_DIR": cache, "NUMBA_ENABLE_CUDASIM": "0"}
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-4000:])
    return [float(x) for x in done.stdout.split()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=800, help="MB of unrelated arrays (a and b)")
    parser.add_argument("--table-mb", type=int, default=400, help="MB of a table a callback reads")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    rows: list[dict[str, object]] = []
    for i in range(args.repeat):
        for mb in (0, args.mb) if i % 2 == 0 else (args.mb, 0):
            prep, compile_s, _size = _run(_COMPILE, str(mb))
            rows.append({"what": "compile", "mb": mb, "setup_s": prep, "compile_s": compile_s})
            print(f"compile  {mb:5d} MB in globals a, b: scan.compile {compile_s:.3f} s")
    for _ in range(args.repeat):
        key_s, sha_s = _run(_TABLE, str(args.table_mb))
        rows.append({"what": "table", "mb": args.table_mb, "key_s": key_s, "sha256_s": sha_s})
        print(f"table    {args.table_mb:5d} MB: key {key_s:.3f} s, one sha256 pass {sha_s:.3f} s")

    def median(what: str, field: str, mb: int) -> float:
        return statistics.median(
            float(r[field])  # type: ignore[arg-type]
            for r in rows
            if r["what"] == what and r["mb"] == mb
        )

    base = median("compile", "compile_s", 0)
    big = median("compile", "compile_s", args.mb)
    keys = median("table", "key_s", args.table_mb)
    shas = median("table", "sha256_s", args.table_mb)
    print(
        f"summary: scan.compile median {base:.3f} s without, {big:.3f} s with {args.mb} MB "
        f"({big / base:.2f}x); key of a callback reading {args.table_mb} MB {keys:.3f} s "
        f"= {keys / shas:.2f} sha256 passes"
    )
    if args.out is not None:
        doc = {
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "when": time.strftime("%Y-%m-%d"),
            "rows": rows,
        }
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
