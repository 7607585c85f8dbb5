# SPDX-License-Identifier: Apache-2.0
"""Block scans on a real GPU, checked against NumPy.

Every case walks rows of at least four tiles of random data, one block per
row, and checks every output and the final state of thread 0. The cases cover
every value of each dimension (entry point, payload, prefix kind, algorithm,
block shape, temp-storage mode, block shape from the launch or from
``threads=``) and every pair of (entry point, payload, prefix kind, algorithm).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import statefn
from scan import block

pytestmark = pytest.mark.gpu

ROWS = 3
TILES = 5


# ---------------------------------------------------------------- callbacks


@statefn.stateful(np.int64)
def total_i64(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.float64)
def total_f64(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.int64)
def max_i64(state, block_aggregate):
    prefix = state[0]
    if block_aggregate > prefix:
        state[0] = block_aggregate
    return prefix


@statefn.stateful(np.float64)
def max_f64(state, block_aggregate):
    prefix = state[0]
    if block_aggregate > prefix:
        state[0] = block_aggregate
    return prefix


@statefn.stateless
def seed_five(block_aggregate):
    return block_aggregate * 0 + 5


SPELLINGS = ("scan", "inclusive_sum", "exclusive_sum", "inclusive_scan", "exclusive_scan")
PAYLOADS = ("scalar", "array4")
PREFIXES = ("stateless", "stateful_i64", "stateful_f64")
ALGORITHMS = ("raking", "raking_memoize", "warp_scans")
BLOCKS = (32, 128, (8, 16), (4, 4, 8))
TEMPS = ("implicit", "caller", "dynamic")


def _pairwise_cases() -> list[tuple[str, str, str, str]]:
    """A small set of rows covering every pair of values of the four factors."""
    factors = (SPELLINGS, PAYLOADS, PREFIXES, ALGORITHMS)
    uncovered = {
        (i, a, j, b)
        for i, j in itertools.combinations(range(4), 2)
        for a in factors[i]
        for b in factors[j]
    }
    rows: list[tuple[str, ...]] = []
    candidates = list(itertools.product(*factors))
    while uncovered:
        best = max(
            candidates,
            key=lambda row: sum(
                (i, row[i], j, row[j]) in uncovered for i, j in itertools.combinations(range(4), 2)
            ),
        )
        rows.append(best)
        for i, j in itertools.combinations(range(4), 2):
            uncovered.discard((i, best[i], j, best[j]))
    return [tuple(r) for r in rows]  # type: ignore[misc]


def _cases() -> list[dict[str, object]]:
    out = []
    for n, (spelling, payload, prefix, algorithm) in enumerate(_pairwise_cases()):
        out.append(
            {
                "spelling": spelling,
                "payload": payload,
                "prefix": prefix,
                "algorithm": algorithm,
                "block": BLOCKS[n % len(BLOCKS)],
                "temp": TEMPS[n % len(TEMPS)],
                "explicit_threads": n % 2 == 1,
            }
        )
    return out


CASES = _cases()


def _case_id(case: dict[str, object]) -> str:
    blk = case["block"]
    shape = "x".join(map(str, blk)) if isinstance(blk, tuple) else str(blk)
    return "-".join(
        [str(case[k]) for k in ("spelling", "payload", "prefix", "algorithm")]
        + [shape, str(case["temp"]), "threads" if case["explicit_threads"] else "launch"]
    )


# ---------------------------------------------------------------- reference


def _op(spelling: str):
    return np.maximum if spelling.endswith("_scan") else np.add


def _reference(case, src, state0):
    spelling = case["spelling"]
    op = _op(spelling)
    exclusive = spelling.startswith("exclusive") or spelling == "scan_exclusive"
    tile = src.shape[1] // TILES
    out = np.empty_like(src)
    final = np.empty(src.shape[0], dtype=np.float64)
    for r in range(src.shape[0]):
        state = state0
        for t in range(TILES):
            x = src[r, t * tile : (t + 1) * tile]
            agg = op.reduce(x)
            if case["prefix"] == "stateless":
                prefix = 5
            else:
                prefix = state
                state = op(state, agg)
            inc = op.accumulate(x)
            res = np.concatenate([[prefix], op(prefix, inc[:-1])]) if exclusive else op(prefix, inc)
            out[r, t * tile : (t + 1) * tile] = res.astype(src.dtype)
        final[r] = state
    return out, final


# ---------------------------------------------------------------- kernels


def _callback(case):
    maxop = case["spelling"].endswith("_scan")
    return {
        "stateless": seed_five,
        "stateful_i64": max_i64 if maxop else total_i64,
        "stateful_f64": max_f64 if maxop else total_f64,
    }[case["prefix"]]


def _make_kernel(case, value_dtype, layout):
    """A row-scan kernel specialised by closure constants (numba freezes them)."""
    spelling = case["spelling"]
    blk = case["block"]
    dims = blk if isinstance(blk, tuple) else (blk,)
    bx = dims[0]
    by = dims[1] if len(dims) > 1 else 1
    threads_total = int(np.prod(dims))
    ipt = 4 if case["payload"] == "array4" else 1
    tile = threads_total * ipt
    cb = _callback(case)
    stateful = case["prefix"] != "stateless"
    state_dtype = np.float64 if case["prefix"] == "stateful_f64" else np.int64
    temp_mode = case["temp"]
    algorithm = case["algorithm"]
    explicit = case["explicit_threads"]
    temp_bytes, temp_align = layout
    state_init = -1_000_000 if spelling.endswith("_scan") else 0
    threads = blk if explicit else None

    # Kernels are written out per spelling: keyword sets differ between them.
    src = _KERNEL_SOURCE.format(
        scan_call=_scan_call(spelling, ipt == 1, stateful),
        temp_decl={
            "implicit": "temp = None",
            "caller": "temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=TEMP_ALIGN)",
            "dynamic": "temp = cuda.shared.array(0, np.uint8)",
        }[temp_mode],
        state_decl=(
            "state = cuda.local.array(1, STATE_DTYPE)\n    state[0] = STATE_INIT"
            if stateful
            else "state = None"
        ),
        final_store="final[row] = state[0]" if stateful else "final[row] = 0",
    )
    namespace = {
        "cuda": cuda,
        "np": np,
        "block": block,
        "CB": cb,
        "ALGORITHM": algorithm,
        "THREADS": threads,
        "IPT": ipt,
        "TILE": tile,
        "VALUE_DTYPE": value_dtype,
        "STATE_DTYPE": state_dtype,
        "STATE_INIT": state_init,
        "TEMP_BYTES": temp_bytes,
        "TEMP_ALIGN": temp_align,
        "BX": bx,
        "BY": by,
    }
    exec(compile(src, f"<row scan kernel {_case_id(case)}>", "exec"), namespace)
    return cuda.jit(namespace["kernel"]), tile


def _scan_call(spelling: str, scalar: bool, stateful: bool) -> str:
    payload = "x" if scalar else "items, items"
    state = ", prefix_state=state" if stateful else ""
    common = f"prefix_op=CB{state}, algorithm=ALGORITHM, temp_storage=temp, threads=THREADS"
    extra = {
        "scan": 'mode="inclusive", scan_op="+", ',
        "inclusive_sum": "",
        "exclusive_sum": "",
        "inclusive_scan": 'scan_op="max", ',
        "exclusive_scan": "scan_op=np.maximum, ",
    }[spelling]
    call = f"block.{spelling}({payload}, {extra}{common})"
    return f"x = {call}" if scalar else call


_KERNEL_SOURCE = """
def kernel(src, dst, final):
    row = cuda.blockIdx.x
    rank = cuda.threadIdx.x + cuda.threadIdx.y * BX + cuda.threadIdx.z * BX * BY
    {temp_decl}
    {state_decl}
    items = cuda.local.array(IPT, VALUE_DTYPE)
    for base in range(0, src.shape[1], TILE):
        for j in range(IPT):
            items[j] = src[row, base + rank * IPT + j]
        x = items[0]
        {scan_call}
        if IPT == 1:
            items[0] = x
        for j in range(IPT):
            dst[row, base + rank * IPT + j] = items[j]
    if rank == 0:
        {final_store}
"""


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_row_scan_matrix(case):
    value_dtype = np.float32 if case["prefix"] == "stateful_f64" else np.int32
    blk = case["block"]
    cc = cuda.get_current_device().compute_capability
    layout = block.temp_storage("scan", value_dtype, blk, algorithm=case["algorithm"], cc=cc)
    if case["temp"] == "implicit":
        layout = block.TempStorageLayout(1, 1)
    kernel, tile = _make_kernel(case, value_dtype, tuple(layout))
    rng = np.random.default_rng(zlib.crc32(_case_id(case).encode()))
    src = rng.integers(-3, 4, size=(ROWS, tile * TILES)).astype(value_dtype)
    d_src = cuda.to_device(src)
    d_dst = cuda.device_array_like(src)
    d_final = cuda.to_device(np.zeros(ROWS, dtype=np.float64))
    dyn = layout.size if case["temp"] == "dynamic" else 0
    kernel[ROWS, blk, 0, dyn](d_src, d_dst, d_final)
    cuda.synchronize()
    state0 = -1_000_000 if case["spelling"].endswith("_scan") else 0
    want, want_final = _reference(case, src.astype(np.float64), state0)
    np.testing.assert_array_equal(d_dst.copy_to_host(), want.astype(value_dtype))
    if case["prefix"] != "stateless":
        np.testing.assert_array_equal(d_final.copy_to_host(), want_final)
    else:  # the kernel leaves 0 for a stateless callback
        np.testing.assert_array_equal(d_final.copy_to_host(), np.zeros(ROWS))


def test_pairwise_cover_is_complete():
    rows = _pairwise_cases()
    for i, j in itertools.combinations(range(4), 2):
        seen = {(r[i], r[j]) for r in rows}
        factors = (SPELLINGS, PAYLOADS, PREFIXES, ALGORITHMS)
        assert seen == set(itertools.product(factors[i], factors[j]))
    assert {c["block"] for c in CASES} == set(BLOCKS)
    assert {c["temp"] for c in CASES} == set(TEMPS)


# ---------------------------------------------------------------- several callbacks


def test_two_stateful_callbacks_and_one_used_twice():
    @cuda.jit
    def kernel(a, b, c, finals):
        s1 = cuda.local.array(1, np.int64)
        s1[0] = 0
        s2 = cuda.local.array(1, np.float64)
        s2[0] = -1e9
        i = cuda.threadIdx.x
        for base in range(0, a.shape[0], 64):
            a[base + i] = block.inclusive_sum(a[base + i], prefix_op=total_i64, prefix_state=s1)
            b[base + i] = block.inclusive_scan(
                b[base + i], scan_op="max", prefix_op=max_f64, prefix_state=s2
            )
            c[base + i] = block.exclusive_sum(c[base + i], prefix_op=total_i64, prefix_state=s1)
        if i == 0:
            finals[0] = s1[0]
            finals[1] = s2[0]

    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, 64 * 6).astype(np.int32)
    b = rng.integers(-50, 50, 64 * 6).astype(np.float32)
    c = rng.integers(-3, 4, 64 * 6).astype(np.int32)
    d = [cuda.to_device(x) for x in (a, b, c)]
    finals = cuda.to_device(np.zeros(2))
    kernel[1, 64](*d, finals)
    # a and c share one running total: tile t of c starts after tile t of a
    total = 0
    want_a = np.empty_like(a)
    want_c = np.empty_like(c)
    for t in range(6):
        sl = slice(64 * t, 64 * (t + 1))
        want_a[sl] = total + np.cumsum(a[sl])
        total += a[sl].sum()
        want_c[sl] = total + np.concatenate([[0], np.cumsum(c[sl])[:-1]])
        total += c[sl].sum()
    np.testing.assert_array_equal(d[0].copy_to_host(), want_a)
    np.testing.assert_array_equal(d[2].copy_to_host(), want_c)
    np.testing.assert_array_equal(d[1].copy_to_host(), np.maximum.accumulate(np.maximum(b, -1e9)))
    np.testing.assert_array_equal(finals.copy_to_host(), [total, b.max()])


# ---------------------------------------------------------------- tile I/O


IO_ALGORITHMS = (
    "direct",
    "striped",
    "vectorize",
    "transpose",
    "warp_transpose",
    "warp_transpose_timesliced",
)


@pytest.mark.parametrize("algorithm", IO_ALGORITHMS)
@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_load_store_full_and_partial_tiles(algorithm, dtype):
    threads, ipt = 64, 4
    tile = threads * ipt

    @cuda.jit
    def copy_tiles(src, dst, valid_cap):
        items = cuda.local.array(ipt, dtype)
        for base in range(0, src.shape[0], tile):
            block.load(src, base, items, algorithm=algorithm, oob_default=7)
            for j in range(ipt):
                items[j] += 1
            block.store(dst, base, items, algorithm=algorithm, valid_items=valid_cap)

    n = tile * 3 + 37  # three full tiles and a partial one
    src = (np.arange(n) % 100).astype(dtype)
    dst = np.full(n + 5, 99, dtype=dtype)
    d_dst = cuda.to_device(dst)
    copy_tiles[1, threads](cuda.to_device(src), d_dst[:n], 1 << 30)
    got = d_dst.copy_to_host()
    np.testing.assert_array_equal(got[:n], src + 1)
    np.testing.assert_array_equal(got[n:], 99)  # nothing written past the end

    # oob_default reaches the items past the end; valid_items caps the store
    @cuda.jit
    def probe(src, out):
        items = cuda.local.array(ipt, dtype)
        block.load(src, 0, items, algorithm=algorithm, oob_default=7, valid_items=5)
        rank = cuda.threadIdx.x
        for j in range(ipt):
            out[rank * ipt + j] = items[j]

    out = cuda.to_device(np.zeros(tile, dtype=dtype))
    probe[1, threads](cuda.to_device(src), out)
    got = out.copy_to_host().reshape(threads, ipt)
    # tile position of item j of thread t: blocked, or striped for "striped"
    t, j = np.indices((threads, ipt))
    position = j * threads + t if algorithm == "striped" else t * ipt + j
    want = np.where(position < 5, src[np.minimum(position, 4)], 7).astype(dtype)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- SASS


def test_stateful_scan_has_no_local_memory_traffic(tmp_path):
    from helpers.kernels import link_cubin

    def row_cumsum(src, dst):
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(8, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 256 * 8):
            block.load(src[row], base, items, threads=256)
            block.inclusive_sum(items, items, prefix_op=total_i64, prefix_state=state, threads=256)
            block.store(dst[row], base, items, threads=256)

    cc = cuda.get_current_device().compute_capability
    arr = types.Array(from_dtype(np.dtype(np.int32)), 2, "C")
    codes, _ = cuda.compile_all(
        row_cumsum, (arr, arr), device=False, abi="numba", output="ltoir", cc=cc
    )
    path = tmp_path / "row_cumsum.cubin"
    path.write_bytes(link_cubin(codes, cc=cc))
    sass = subprocess.run(
        ["cuobjdump", "-sass", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "BAR" in sass
    assert "LDL" not in sass, "local memory loads in the SASS"
    assert "STL" not in sass, "local memory stores in the SASS"
    out = os.environ.get("OUT")
    if out:  # keep the listing with the GPU run's results
        (Path(out) / "row_cumsum.sass").write_text(sass)


# ---------------------------------------------------------------- launch configuration


def test_block_shape_follows_the_launch():
    @cuda.jit
    def scan_rows(a):
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i])

    for threads in (64, 128, 64):
        a = np.arange(threads, dtype=np.int32)
        d = cuda.to_device(a)
        scan_rows[1, threads](d)
        np.testing.assert_array_equal(d.copy_to_host(), np.cumsum(a))


def test_launch_that_disagrees_with_threads_is_refused():
    from scan import PlanError

    @cuda.jit
    def fixed(a):
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], threads=64)

    d = cuda.to_device(np.ones(128, dtype=np.int32))
    with pytest.raises(PlanError, match=r"launched with block shape \(128, 1, 1\)"):
        fixed[1, 128](d)
    fixed[1, 64](d)
    np.testing.assert_array_equal(d.copy_to_host()[:64], np.arange(1, 65))


# ---------------------------------------------------------------- the demo


def test_demo_runs_and_checks_itself(capsys):
    from scan import demo

    assert demo.main(["--rows", "64", "--cols", "5000"]) == 0
    out = capsys.readouterr().out
    assert "matches numpy.cumsum and row totals: True" in out


# ---------------------------------------------------------------- warm start

_LAUNCH_CHILD = """
import json
import numpy as np
from numba import cuda
import statefn
from scan import _cache, block

@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix

@cuda.jit
def row_scan(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    row = cuda.blockIdx.x
    for base in range(0, src.shape[1], 512):
        block.load(src[row], base, items)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[row], base, items)

src = np.random.default_rng(1).integers(-100, 100, size=(4, 3000)).astype(np.int32)
dst = np.zeros_like(src)
row_scan[4, 128](src, dst)
ok = bool(np.array_equal(dst, np.cumsum(src, axis=1, dtype=np.int64).astype(np.int32)))
print(json.dumps({"ok": ok, "stats": _cache.stats()}))
"""


def test_second_process_launches_without_compiling_or_linking(tmp_path):
    import json
    import sys

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, STATEFN_SCAN_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    env.pop("STATEFN_SCAN_CACHE", None)
    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", _LAUNCH_CHILD],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["ok"]
    assert warm["ok"]
    assert cold["stats"]["builds:kernel"] == 1
    assert warm["stats"]["builds"] == 0, warm["stats"]
    # the unit with the three providers, the callback, the linked kernel
    assert warm["stats"]["disk_hits"] == 3


# ---------------------------------------------------------------- one unit per kernel


@pytest.mark.sanitize
def test_a_kernels_calls_overlay_their_storage():
    """Load, scan and store compiled in one NVRTC unit overlay one buffer (512 x
    16 int32 items with warp_transpose needs 64 KiB without the overlay), over
    several tiles and a partial one."""

    @cuda.jit
    def row_cumsum(src, dst):
        row = cuda.blockIdx.x
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(16, np.int32)
        for base in range(0, src.shape[1], 512 * 16):
            block.load(src[row], base, items, algorithm="warp_transpose", oob_default=0)
            block.inclusive_sum(
                items, items, prefix_op=total_i64, prefix_state=state, algorithm="raking"
            )
            block.store(dst[row], base, items, algorithm="warp_transpose")

    rng = np.random.default_rng(7)
    host = rng.integers(-3, 4, size=(3, 3 * 8192 + 77), dtype=np.int32)
    d_dst = cuda.device_array_like(host)
    row_cumsum[host.shape[0], 512](cuda.to_device(host), d_dst)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.cumsum(host, axis=1, dtype=np.int32))


@statefn.stateful(np.float32)
def total_f32(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@pytest.mark.sanitize
@pytest.mark.parametrize(
    ("threads", "items"),
    [(128, 4), (256, 4), (512, 4), (512, 8), (256, 8), (128, 16), (256, 16), (512, 16)],
)
@pytest.mark.parametrize("rows", ["long", "short"])
def test_default_algorithms_row_scan(threads, items, rows):
    """The README kernel with every default (the measured table), full and partial
    tiles; a short row is one partial tile."""
    tile = threads * items

    @cuda.jit
    def row_cumsum(src, dst):
        row = cuda.blockIdx.x
        state = cuda.local.array(1, np.float32)
        state[0] = 0
        values = cuda.local.array(items, np.float32)
        for base in block.tiles(src.shape[1], values):
            block.load(src[row], base, values, oob_default=0)
            block.inclusive_sum(values, values, prefix_op=total_f32, prefix_state=state)
            block.store(dst[row], base, values)

    rng = np.random.default_rng(threads + items)
    cols = 2 * tile + 5 if rows == "long" else tile // 2 + 3
    host = rng.integers(-3, 4, size=(4, cols), dtype=np.int32).astype(np.float32)
    d_dst = cuda.device_array_like(host)
    row_cumsum[host.shape[0], threads](cuda.to_device(host), d_dst)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.cumsum(host, axis=1))


# ---------------------------------------------------------------- partial tiles, launch bounds

_PAIR = np.dtype([("a", np.int32), ("b", np.float32)])


@pytest.mark.sanitize
@pytest.mark.parametrize("algorithm", ["direct", "vectorize", "warp_transpose"])
@pytest.mark.parametrize(
    ("dtype", "ipt"),
    [
        (np.int16, 8),
        (np.int32, 4),
        (np.float64, 4),
        (np.int32, 3),
        (_PAIR, 2),
        (np.int32, 16),
        (np.float64, 8),
        (_PAIR, 8),
    ],
)
@pytest.mark.parametrize("start", [0, 1, 6])
def test_partial_tile_moves_whole_vectors_where_it_can(algorithm, dtype, ipt, start):
    """A partial tile: threads whose items are all valid and 16-byte aligned move
    them as vectors, the others item by item (a misaligned `start` sends every
    thread there), up to 64 bytes a thread. Items past the valid range keep
    their values; stores stop at the end."""
    threads = 64
    tile = threads * ipt
    dtype = np.dtype(dtype)
    record = dtype.names is not None

    @cuda.jit
    def probe(src, dst, kept, valid):
        items = cuda.local.array(ipt, dtype)
        rank = cuda.threadIdx.x
        for j in range(ipt):
            if record:
                items[j]["a"] = kept[rank * ipt + j]["a"]
                items[j]["b"] = kept[rank * ipt + j]["b"]
            else:
                items[j] = kept[rank * ipt + j]
        block.load(src, start, items, algorithm=algorithm, valid_items=valid[0])
        for j in range(ipt):
            if record:
                kept[rank * ipt + j]["a"] = items[j]["a"]
                kept[rank * ipt + j]["b"] = items[j]["b"]
            else:
                kept[rank * ipt + j] = items[j]
        block.store(dst, start, items, algorithm=algorithm, valid_items=valid[0])

    n = start + tile
    raw = np.arange(1, n * 2 + 1, dtype=np.int64)
    for valid in (0, 5, tile // 2 + 3, tile - 1):
        if record:
            src = np.zeros(n, dtype)
            src["a"] = raw[:n]
            src["b"] = raw[:n] * 0.5
            kept = np.zeros(tile, dtype)
            kept["a"] = -raw[:tile]
            kept["b"] = -1.0
            dst = np.zeros(n, dtype)
            dst["a"] = 99
        else:
            src = raw[:n].astype(dtype)
            kept = (-raw[:tile]).astype(dtype)
            dst = np.full(n, 99, dtype=dtype)
        d_kept, d_dst = cuda.to_device(kept), cuda.to_device(dst)
        probe[1, threads](
            cuda.to_device(src), d_dst, d_kept, cuda.to_device(np.array([valid], np.int64))
        )
        want_kept = kept.copy()
        want_kept[:valid] = src[start : start + valid]
        want_dst = dst.copy()
        want_dst[start : start + valid] = src[start : start + valid]
        np.testing.assert_array_equal(d_kept.copy_to_host(), want_kept)
        np.testing.assert_array_equal(d_dst.copy_to_host(), want_dst)


def _max_threads(kernel):
    """maxThreadsPerBlock of every compiled specialisation of `kernel` (per launch shape)."""
    found = []
    for k in [kernel, *getattr(kernel, "_launch_config_specializations", {}).values()]:
        per_signature = k.get_max_threads_per_block()
        found += (
            list(per_signature.values()) if isinstance(per_signature, dict) else [per_signature]
        )
    return found


def test_launch_bounds_are_the_launch_block_size():
    """A kernel that calls the library declares its launch's thread count (as
    __launch_bounds__), unless it declares launch_bounds= itself."""

    def body(src, dst):
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items, algorithm="vectorize")
        block.inclusive_sum(items, items, algorithm="raking")
        block.store(dst, 0, items, algorithm="vectorize")

    host = np.arange(2048, dtype=np.int32) % 7
    for launch_bounds, want in ((None, 512), (1024, 1024)):
        options = {} if launch_bounds is None else {"launch_bounds": launch_bounds}
        kernel = cuda.jit(**options)(body)
        d_dst = cuda.device_array_like(host)
        kernel[1, 512](cuda.to_device(host), d_dst)
        np.testing.assert_array_equal(d_dst.copy_to_host(), np.cumsum(host, dtype=np.int32))
        assert want in _max_threads(kernel), (launch_bounds, _max_threads(kernel))
        assert all(m == want for m in _max_threads(kernel)), _max_threads(kernel)
