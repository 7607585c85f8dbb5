# SPDX-License-Identifier: Apache-2.0
"""The differential fuzzer's case space, settings, and its record of what it ran.

:func:`cases` draws a :class:`~cases.block_cases.ScanCase` over every
dimension the library offers: entry point (or tile I/O alone), value dtype
int8..float64, state dtype, scalar or array payload, items per thread, 1-D,
2-D and 3-D block shapes (sizes that are not multiples of 32 too), scan
algorithm, temp-storage mode, ``auto_sync``, ``reverse``, tile I/O algorithm,
partial tiles (short rows, ``valid_items``, ``oob_default``), built-in or user
operator, and stateful, stateless or no callback. Value dtypes include
float16, complex64 and complex128 (sums and products; no order or bitwise
operators for complex values), and about one float32 or float64 case in three
that moves its tiles with ``block.load``/``block.store`` keeps its arrays in
float16 or bfloat16 (the loads widen, the stores round). About one draw in four is a
warp scan (``scan.warp``, ``lanes`` 1 to 32) between the same block-wide tile
loads and stores; it draws every dimension above that applies to a warp scan
(not the algorithm, temp storage, ``auto_sync`` or ``reverse``). About one
draw in six carries a fault the library must refuse
(:func:`cases.block_cases.expected_refusals`).

Settings come from the environment, so one test serves CI and the GPU suite:

``SCAN_FUZZ_SEED``
    Base seed (default 17, so CI is reproducible). Shard ``i`` draws with
    hypothesis seed ``SEED * 1000 + i``; the pytest header prints both.
``SCAN_FUZZ_SHARD``
    This process's shard index (default 0): tools/gpu_suite.sh starts several.
``SCAN_FUZZ_EXAMPLES``
    Cases the run test draws (default 12; tools/gpu_suite.sh sets it per shard).
``SCAN_FUZZ_COMPILE_EXAMPLES``
    Cases the compile-path test draws (default 5).
``SCAN_FUZZ_RECORD``
    A folder: every case run appends one JSON line (case, inputs, outcome,
    digest of the outputs) to ``shard-<i>.jsonl`` there, and every failing case
    to ``failures.txt`` (shrinking appends each smaller failure: the last line
    is the smallest).
``SCAN_FUZZ_REPLAY``, ``SCAN_FUZZ_REPLAY_LIMIT``, ``SCAN_FUZZ_REPLAY_SHARD``
    For the replay test: a folder a GPU run recorded into, how many of its
    cases to replay in the simulator (default 40), and ``i/n`` to take every
    n-th of them from the i-th on (default ``0/1``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

import statefn
from cases import block_cases as bc
from cases.block_cases import ScanCase

__all__ = [
    "COMPILE_EXAMPLES",
    "EXAMPLES",
    "HYPOTHESIS_SEED",
    "SEED",
    "assert_matches",
    "case_from_json",
    "case_to_json",
    "cases",
    "compared",
    "describe",
    "digest",
    "exact",
    "record",
    "record_failure",
    "recorded",
]

SEED = int(os.environ.get("SCAN_FUZZ_SEED", "17"))
SHARD = int(os.environ.get("SCAN_FUZZ_SHARD", "0"))
HYPOTHESIS_SEED = SEED * 1000 + SHARD
EXAMPLES = int(os.environ.get("SCAN_FUZZ_EXAMPLES", "12"))
COMPILE_EXAMPLES = int(os.environ.get("SCAN_FUZZ_COMPILE_EXAMPLES", "5"))
RECORD = os.environ.get("SCAN_FUZZ_RECORD") or None
REPLAY = os.environ.get("SCAN_FUZZ_REPLAY") or None
REPLAY_LIMIT = int(os.environ.get("SCAN_FUZZ_REPLAY_LIMIT", "40"))
REPLAY_SHARD = os.environ.get("SCAN_FUZZ_REPLAY_SHARD", "0/1")

# int8 .. uint64, float16, float32, float64, complex64, complex128
DTYPES = tuple(d.name for d in statefn.STATE_DTYPES)
#: the half-precision array dtypes of float32 and float64 items (tile I/O converts);
#: bfloat16 arrays where ml_dtypes (the bf16 extra) is installed
HALF_ARRAYS = ("float16", "bfloat16") if importlib.util.find_spec("ml_dtypes") else ("float16",)
BLOCKS = (
    (1, 1, 1),
    (7, 1, 1),
    (32, 1, 1),
    (33, 1, 1),
    (64, 1, 1),
    (96, 1, 1),
    (128, 1, 1),
    (256, 1, 1),
    (4, 8, 1),
    (5, 3, 1),
    (16, 2, 2),
    (2, 4, 4),
    (3, 3, 3),
)
ENTRIES = {
    "inclusive_sum": "inclusive",
    "exclusive_sum": "exclusive",
    "inclusive_scan": "inclusive",
    "exclusive_scan": "exclusive",
}
TILE_IO = (None, "default", *bc.TILE_ALGORITHMS)
# faults a draw may carry (about one draw in six carries one); "warp_scans"
# (the block algorithm on a block of partial warps) makes a block scan, "lanes"
# (a block that is not a whole number of logical warps) a warp scan
FAULTS = (
    "warp_scans",
    "lanes",
    "warp_io",
    "bitwise_float",
    "no_seed",
    "prefix_with_initial_value",
    "prefix_with_aggregate",
    "flip_state",
    "state_array",
)


def describe() -> str:
    """One line for the pytest header: the seed and how many cases each test draws."""
    return (
        f"scan fuzz: SCAN_FUZZ_SEED={SEED}, shard {SHARD} (hypothesis seed {HYPOTHESIS_SEED}); "
        f"{EXAMPLES} run and {COMPILE_EXAMPLES} compile examples"
    )


def _size(block: tuple[int, int, int]) -> int:
    return block[0] * block[1] * block[2]


def _wide(dtype: str) -> str:
    kind = np.dtype(dtype).kind
    return {"i": "int64", "u": "uint64", "f": "float64", "c": "complex128"}[kind]


@st.composite
def cases(draw: st.DrawFn, compile_only: bool = False) -> ScanCase:
    """A random case; *compile_only* passes ``threads=`` (compiling has no launch)."""
    fault = draw(st.sampled_from(FAULTS)) if draw(st.integers(0, 99)) >= 84 else None
    # about one draw in four scans within logical warps
    is_warp = fault == "lanes" or (fault != "warp_scans" and draw(st.integers(0, 3)) == 3)
    # a fault steers the draws it needs, so that every kind is refused often enough
    odd_blocks = [b for b in BLOCKS if _size(b) % 32]
    floats = [d for d in DTYPES if np.dtype(d).kind == "f"]
    dtype = draw(st.sampled_from(floats if fault == "bitwise_float" else DTYPES))
    is_float = np.dtype(dtype).kind == "f"
    is_complex = np.dtype(dtype).kind == "c"
    shapes = odd_blocks if fault in ("warp_scans", "warp_io") else list(BLOCKS)
    lanes = None
    if is_warp:
        # the lanes first, so that each is drawn as often as the others, then a
        # block of whole logical warps (of partial ones for the "lanes" fault)
        partial = fault == "lanes"
        choices = [n for n in bc.LANES if any(bool(_size(b) % n) == partial for b in shapes)]
        lanes = draw(st.sampled_from(choices))
        shapes = [b for b in shapes if bool(_size(b) % lanes) == partial]
    shape = draw(st.sampled_from(shapes))
    threads = _size(shape)
    # the operator first, so that each is drawn as often as the others
    ops = [o for o in (*bc.OPERATORS, "user_add") if not (is_float and o in bc.BITWISE)]
    if is_complex:  # no order, no bits
        ops = ["+", "*", "user_add"]
    if fault == "bitwise_float":
        ops = list(bc.BITWISE)
    elif fault == "no_seed":
        ops.remove("+")
    op = draw(st.sampled_from(ops))
    entries = ["inclusive_scan", "exclusive_scan", "scan"]
    if op == "+":
        entries += ["inclusive_sum", "exclusive_sum"] + ([] if is_warp else ["none"])
    if fault == "no_seed":
        entries = ["exclusive_scan"]
    elif fault in ("prefix_with_aggregate", "flip_state", "state_array"):
        entries = [e for e in entries if e != "none"]
    elif fault == "prefix_with_initial_value":
        entries = [e for e in entries if not e.endswith("_sum") and e != "none"]
    entry = draw(st.sampled_from(entries))
    mode = ENTRIES.get(entry) or draw(st.sampled_from(["inclusive", "exclusive"]))
    algorithm = "raking"  # a warp scan has none
    if not is_warp:
        algorithms = ["raking", "raking_memoize"]
        if threads % 32 == 0 or fault == "warp_scans":
            algorithms.append("warp_scans")
        algorithm = draw(st.sampled_from(algorithms))
    prefixes = ["none", "running", "count", "stateless"]
    if fault == "no_seed":
        prefixes = ["none"]
    elif fault == "state_array":
        prefixes = ["running", "count"]
    elif fault in ("prefix_with_initial_value", "prefix_with_aggregate"):
        prefixes = prefixes[1:]
    prefix = "none" if entry == "none" else draw(st.sampled_from(prefixes))
    state_dtype = "int64"
    if prefix in ("running", "count"):
        state_dtype = draw(st.sampled_from([dtype, _wide(dtype)]))
    summing = entry == "exclusive_sum" or (entry == "scan" and op == "+")
    initial_value = None
    if not entry.endswith("_sum") and entry != "none" and fault != "no_seed":
        needs = mode == "exclusive" and not summing and prefix == "none"
        if needs or (prefix == "none" and draw(st.booleans())):
            initial_value = draw(st.integers(0, 9))
    if fault == "prefix_with_initial_value" and prefix != "none" and not entry.endswith("_sum"):
        initial_value = 1
    aggregate = entry != "none" and prefix == "none" and draw(st.booleans())
    if fault == "prefix_with_aggregate" and prefix != "none":
        aggregate = True
    state_array = None
    if fault == "state_array" and prefix in ("running", "count"):
        # the initial states are cast to it (one that cannot hold them would warn)
        narrow = ("int8", "uint8", "float16", "complex64", "complex128")
        choices = [d for d in DTYPES if d != state_dtype and d not in narrow]
        if np.dtype(state_dtype).kind == "c":
            choices = [d for d in ("complex64", "complex128") if d != state_dtype]
        state_array = draw(st.sampled_from(choices))
    ipt = draw(st.integers(0, 4))
    io_choices = [a for a in TILE_IO if threads % 32 == 0 or a not in bc.WARP_IO]
    if fault == "warp_io":
        io_choices = list(bc.WARP_IO)
    io = draw(st.sampled_from(io_choices))
    if entry == "none" and io is None:
        io = "default"
    tiles = draw(st.integers(1, 3))
    tile_items = threads * max(ipt, 1)
    short = valid_items = oob_default = None
    if io is not None:
        # most rows end in a full tile; three in ten are short, or pass valid_items
        if draw(st.integers(0, 9)) >= 7:
            short = draw(st.sampled_from([1, tile_items // 2, tile_items - 1, tile_items + 1]))
        if draw(st.integers(0, 9)) >= 7:
            valid_items = draw(
                st.sampled_from([-3, 0, 1, tile_items // 3, tile_items, tile_items + 5])
            )
        if draw(st.booleans()):
            oob_default = 1 if is_float and op == "*" else draw(st.integers(0, 9))
    if dtype == "float16" and op in ("+", "user_add") and tiles * tile_items > 2000:
        # float16 holds the integers up to 2048: a longer sum is a float32 case
        dtype, state_dtype = "float32", state_dtype.replace("float16", "float32")
    array = None
    if io is not None and dtype in ("float32", "float64") and draw(st.integers(0, 2)) == 0:
        array = draw(st.sampled_from(HALF_ARRAYS))
    # options of the block scans only: a warp case keeps their defaults
    temp_storage, auto_sync, reverse = "implicit", True, False
    if not is_warp:
        temp_storage = draw(st.sampled_from(["implicit", "caller", "dynamic"]))
    out_of_place = ipt > 0 and draw(st.booleans())
    explicit_threads = compile_only or draw(st.booleans())
    if not is_warp:
        auto_sync = draw(st.booleans())
        reverse = draw(st.integers(0, 3)) == 0
    return ScanCase(
        entry=entry,
        mode=mode,
        op=op,
        dtype=dtype,
        block=shape,
        items_per_thread=ipt,
        tiles=tiles,
        algorithm=algorithm,
        prefix=prefix,
        state_dtype=state_dtype,
        initial_value=initial_value,
        aggregate=aggregate,
        out_of_place=out_of_place,
        explicit_threads=explicit_threads,
        auto_sync=auto_sync,
        io=io,
        short=short or 0,
        valid_items=valid_items,
        oob_default=oob_default,
        temp_storage=temp_storage,
        state_array=state_array,
        flip_state=fault == "flip_state",
        reverse=reverse,
        lanes=lanes,
        array=array,
    )


def exact(case: ScanCase) -> bool:
    """Whether the outputs must match bit for bit.

    Integers always; floats too, since the values are small integers (sums,
    minima, maxima are exact in any order) except products, which can overflow
    in one order of evaluation and not in another (float16 products are of
    +-1 only: exact), and complex products, whose zero parts may take
    either sign.
    """
    dtype = np.dtype(case.dtype)
    return dtype == np.float16 or dtype.kind not in "fc" or case.op != "*"


def compared(case: ScanCase) -> list[str]:
    """The outputs *case* defines."""
    keys = ["dst"]
    if case.stateful:
        keys.append("states")
    if case.aggregate:
        keys.append("aggs")
    return keys


def assert_matches(case: ScanCase, got: dict[str, Any], want: dict[str, Any]) -> None:
    """Outputs equal, bit for bit where :func:`exact`, else to float32 rounding.

    Past an overflow a product is not compared, only that it overflowed too:
    what follows an infinity depends on how a complex multiply treats it
    (CUDA's ``cuda::std::complex`` keeps ``inf + 0j`` where NumPy's formula
    gives ``nan + nanj``).
    """
    for key in compared(case):
        if exact(case):
            np.testing.assert_array_equal(got[key], want[key], err_msg=key, strict=True)
        else:
            g, w = np.asarray(got[key]), np.asarray(want[key])
            overflowed = ~np.isfinite(w)
            np.testing.assert_array_equal(~np.isfinite(g), overflowed, err_msg=key + " overflowed")
            np.testing.assert_allclose(
                np.where(overflowed, 0, g),
                np.where(overflowed, 0, w),
                rtol=1e-5,
                atol=0,
                err_msg=key,
            )


def digest(case: ScanCase, got: dict[str, Any]) -> str:
    """A short hash of the outputs *case* defines (byte-exact)."""
    h = hashlib.sha256()
    for key in compared(case):
        h.update(key.encode())
        h.update(np.ascontiguousarray(got[key]).tobytes())
    return h.hexdigest()[:20]


def case_to_json(case: ScanCase) -> dict[str, Any]:
    """The case's fields as JSON values."""
    return dataclasses.asdict(case)


def case_from_json(fields: dict[str, Any]) -> ScanCase:
    """The inverse of :func:`case_to_json`."""
    return ScanCase(**{**fields, "block": tuple(fields["block"])})


def record(entry: dict[str, Any]) -> None:
    """Append one JSON line to this shard's record (with ``SCAN_FUZZ_RECORD`` only)."""
    if RECORD is None:
        return
    folder = Path(RECORD)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"shard-{SHARD}.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


def record_failure(text: str) -> None:
    """Append a failing case to ``failures.txt`` (with ``SCAN_FUZZ_RECORD`` only)."""
    if RECORD is None:
        return
    folder = Path(RECORD)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "failures.txt").open("a", encoding="utf-8") as f:
        f.write(text.rstrip("\n") + "\n")


def recorded() -> list[dict[str, Any]]:
    """The cases a GPU run recorded in ``SCAN_FUZZ_REPLAY`` that ran, this replay shard's share."""
    if REPLAY is None:
        return []
    entries = []
    for path in sorted(Path(REPLAY).glob("shard-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            # cross-block cases (kind "lookback") are counted, not replayed
            if entry["outcome"] == "ran" and entry.get("kind") is None:
                entries.append(entry)
    index, count = (int(x) for x in REPLAY_SHARD.split("/"))
    return entries[index::count][: max(REPLAY_LIMIT, 0)]
