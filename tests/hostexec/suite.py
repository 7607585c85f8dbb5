# SPDX-License-Identifier: Apache-2.0
"""The cases the host tests run, in one place (the coverage test checks them without building).

:data:`CASES`: the differential fuzzer's scan cases: :data:`COVERAGE` (every
option of the scans and of tile I/O, each in at least one case) and
:data:`DRAWN`, drawn by the fuzzer's own strategy with a fixed seed
(``HOSTEXEC_FUZZ_SEED``, default 17; ``HOSTEXEC_FUZZ_EXAMPLES`` draws,
default 40, less those the library must refuse, which the fuzzer checks).
:data:`REDUCES`, :data:`ZIPS`, :data:`WARPS`, :data:`LOOKBACKS`: the other
families' kernels.
"""

from __future__ import annotations

import os

from cases import block_cases as bc
from cases import fuzz
from cases.block_cases import ScanCase
from hypothesis import HealthCheck, given, seed, settings

from . import families as fam
from . import lookback as lb

__all__ = ["CASES", "COVERAGE", "DRAWN", "LOOKBACKS", "NEIGHBOURS", "REDUCES", "WARPS", "ZIPS"]

SEED = int(os.environ.get("HOSTEXEC_FUZZ_SEED", "17"))
EXAMPLES = int(os.environ.get("HOSTEXEC_FUZZ_EXAMPLES", "40"))

#: Every option of the scans and of tile I/O, each in at least one case.
COVERAGE = [
    # integer sums with a stateful callback: thread items scanned first
    ScanCase(block=(128, 1, 1), items_per_thread=4, tiles=3, io="warp_transpose", prefix="running"),
    # reverse scans: exchanges through the mirrored rank, one and several items a thread
    ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        reverse=True,
        block=(64, 1, 1),
        items_per_thread=3,
        tiles=2,
        io="transpose",
        short=5,
        prefix="running",
    ),
    ScanCase(
        entry="inclusive_scan",
        op="max",
        reverse=True,
        algorithm="warp_scans",
        block=(64, 1, 1),
        items_per_thread=2,
        tiles=3,
        io="vectorize",
        prefix="count",
    ),
    ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="min",
        initial_value=5,
        reverse=True,
        algorithm="raking_memoize",
        block=(33, 1, 1),
        items_per_thread=0,
        tiles=2,
        io="direct",
        aggregate=True,
    ),
    ScanCase(
        entry="inclusive_scan",
        op="user_add",
        reverse=True,
        dtype="float32",
        block=(32, 2, 1),
        items_per_thread=2,
        prefix="running",
        state_dtype="float64",
        tiles=2,
        io="warp_transpose",
    ),
    ScanCase(entry="inclusive_sum", reverse=True, block=(7, 1, 1), items_per_thread=1, tiles=2),
    # operators, initial values, aggregates, stateless callbacks
    ScanCase(
        entry="scan",
        mode="exclusive",
        op="user_add",
        prefix="stateless",
        block=(4, 8, 1),
        items_per_thread=2,
        io="striped",
        short=3,
        tiles=2,
        temp_storage="caller",
    ),
    ScanCase(
        entry="inclusive_scan",
        op="*",
        dtype="int8",
        block=(96, 1, 1),
        items_per_thread=3,
        initial_value=2,
        aggregate=True,
        tiles=2,
        io="default",
        valid_items=100,
        oob_default=1,
    ),
    ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="^",
        dtype="uint16",
        block=(16, 2, 2),
        items_per_thread=2,
        algorithm="warp_scans",
        prefix="running",
        state_dtype="uint64",
        tiles=3,
        io="warp_transpose_timesliced",
        short=40,
        temp_storage="dynamic",
        auto_sync=False,
    ),
    ScanCase(
        entry="inclusive_sum",
        dtype="float64",
        algorithm="warp_scans",
        block=(256, 1, 1),
        items_per_thread=4,
        prefix="running",
        state_dtype="float64",
        io="vectorize",
        tiles=2,
        short=700,
    ),
    ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        dtype="uint8",
        block=(3, 3, 3),
        items_per_thread=0,
        prefix="count",
        state_dtype="uint64",
        io="direct",
        tiles=3,
        valid_items=-3,
        auto_sync=False,
        temp_storage="caller",
    ),
    ScanCase(entry="inclusive_scan", op="|", dtype="int64", block=(5, 3, 1), out_of_place=True),
    # the default tile I/O at 256 x 4 of 4 bytes: vector accesses, and CUB's warp
    # transpose where a tile is not 16-byte aligned (the second row, 3 items short)
    ScanCase(
        block=(256, 1, 1), items_per_thread=4, tiles=2, io="default", short=3, prefix="running"
    ),
    # 64 bytes a thread: the warps of a partial tile whose items are valid take the full path
    ScanCase(block=(64, 1, 1), items_per_thread=16, tiles=2, io="warp_transpose", short=700),
    ScanCase(entry="none", block=(64, 1, 1), items_per_thread=4, io="transpose", short=70),
    # warp scans: every logical warp size, callbacks, initial values, aggregates
    ScanCase(lanes=1, block=(4, 1, 1), items_per_thread=2, prefix="running", tiles=2),
    ScanCase(
        lanes=2,
        entry="exclusive_scan",
        mode="exclusive",
        op="max",
        initial_value=3,
        block=(6, 1, 1),
        items_per_thread=0,
        aggregate=True,
    ),
    ScanCase(
        lanes=4,
        entry="exclusive_sum",
        mode="exclusive",
        block=(2, 4, 4),
        items_per_thread=3,
        prefix="running",
        tiles=2,
        io="striped",
        short=7,
    ),
    ScanCase(lanes=8, entry="inclusive_scan", op="user_add", block=(64, 1, 1), aggregate=True),
    ScanCase(
        lanes=16,
        entry="exclusive_scan",
        mode="exclusive",
        op="*",
        dtype="int32",
        block=(32, 1, 1),
        items_per_thread=2,
        prefix="running",
        tiles=3,
    ),
    ScanCase(
        lanes=32,
        entry="exclusive_sum",
        mode="exclusive",
        dtype="float32",
        block=(96, 1, 1),
        items_per_thread=2,
        prefix="running",
        state_dtype="float32",
        tiles=2,
        io="warp_transpose",
    ),
    # half-precision and complex items and state; half-precision rows of float32 items
    ScanCase(
        entry="inclusive_sum",
        dtype="float16",
        block=(64, 1, 1),
        items_per_thread=2,
        prefix="running",
        state_dtype="float16",
        tiles=2,
        io="transpose",
        short=3,
    ),
    ScanCase(
        entry="inclusive_scan",
        op="*",
        dtype="complex64",
        block=(32, 2, 1),
        items_per_thread=3,
        prefix="running",
        state_dtype="complex64",
        tiles=2,
        io="striped",
        reverse=True,
        short=5,
    ),
    ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        dtype="complex128",
        algorithm="warp_scans",
        block=(96, 1, 1),
        items_per_thread=1,
        io="direct",
        tiles=2,
        aggregate=True,
    ),
    ScanCase(
        lanes=8,
        entry="inclusive_scan",
        op="+",
        dtype="complex64",
        block=(64, 1, 1),
        items_per_thread=2,
        prefix="running",
        state_dtype="complex64",
        tiles=2,
    ),
    ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="max",
        dtype="float16",
        initial_value=-3,
        block=(128, 1, 1),
        items_per_thread=0,
        io="direct",
        tiles=2,
        short=9,
    ),
    ScanCase(
        entry="inclusive_sum",
        dtype="float32",
        array="float16",
        block=(128, 1, 1),
        items_per_thread=4,
        prefix="running",
        state_dtype="float32",
        tiles=2,
        io="vectorize",
        short=11,
    ),
    # converting vectorize tiles of whole 16-byte vectors (one and two a thread); the
    # second row of each starts misaligned
    ScanCase(
        entry="inclusive_sum",
        dtype="float32",
        array="float16",
        block=(64, 1, 1),
        items_per_thread=8,
        prefix="running",
        state_dtype="float32",
        tiles=3,
        io="vectorize",
        short=13,
    ),
    ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="max",
        dtype="float64",
        array="float16",
        initial_value=-7,
        block=(32, 2, 1),
        items_per_thread=16,
        tiles=2,
        io="vectorize",
    ),
    *(
        [
            ScanCase(
                entry="exclusive_sum",
                mode="exclusive",
                dtype="float64",
                array="bfloat16",
                block=(64, 1, 1),
                items_per_thread=3,
                tiles=2,
                io="warp_transpose",
                short=2,
            )
        ]
        if "bfloat16" in fuzz.HALF_ARRAYS
        else []
    ),
]


def _draw(count: int, base: int) -> list[ScanCase]:
    drawn: list[ScanCase] = []

    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @seed(base)
    @given(case=fuzz.cases())
    def collect(case: ScanCase) -> None:
        drawn.append(case)

    collect()
    return [case for case in drawn if not bc.expected_refusals(case)]


DRAWN = _draw(EXAMPLES, SEED)
CASES = COVERAGE + DRAWN

REDUCES = [
    # dtype=: items converted to a wider accumulator; the default broadcast (every thread)
    fam.ReduceCase(
        dtype="int8", sum=True, accumulate="int64", broadcast=None, short=10, block=(128, 1, 1)
    ),
    fam.ReduceCase(
        dtype="float32", op="max", accumulate="float64", items_per_thread=0, broadcast=None, short=3
    ),
    fam.ReduceCase(dtype="uint8", accumulate="uint32", algorithm="raking", short=200),
    fam.ReduceCase(),
    fam.ReduceCase(sum=True, short=37, broadcast=True),
    fam.ReduceCase(
        dtype="affine", op="compose", short=5, algorithm="raking", temp_storage="caller"
    ),
    fam.ReduceCase(
        dtype="float32", op="max", items_per_thread=0, block=(33, 1, 1), short=4, broadcast=True
    ),
    fam.ReduceCase(
        dtype="int64",
        op="min",
        block=(4, 4, 4),
        items_per_thread=3,
        valid=False,
        algorithm="raking_commutative_only",
    ),
    fam.ReduceCase(dtype="int16", sum=True, items_per_thread=0, block=(128, 1, 1), short=50),
    fam.ReduceCase(dtype="pair", op="compose", items_per_thread=2, short=77, broadcast=True),
    fam.ReduceCase(op="last", algorithm="raking", short=100, block=(96, 1, 1)),
    fam.ReduceCase(dtype="uint32", op="|", block=(256, 1, 1), items_per_thread=2, short=300),
    # half-precision and complex items: as they are, and widened by dtype=
    fam.ReduceCase(dtype="float16", sum=True, accumulate="float32", short=30, broadcast=True),
    fam.ReduceCase(dtype="float16", op="max", block=(96, 1, 1), short=10),
    fam.ReduceCase(dtype="float16", sum=True, accumulate="complex64", items_per_thread=0, short=7),
    fam.ReduceCase(dtype="complex64", sum=True, accumulate="complex128", short=20),
    fam.ReduceCase(dtype="complex128", op="*", items_per_thread=2, algorithm="raking", short=9),
    fam.ReduceCase(dtype="int16", sum=True, accumulate="complex64", items_per_thread=3, short=1),
    *(
        [fam.ReduceCase(dtype="bfloat16", sum=True, accumulate="float64", short=40)]
        if "bfloat16" in fuzz.HALF_ARRAYS
        else []
    ),
]

ZIPS = [
    fam.ZipCase(),
    # half-precision arrays into float32 fields, whole 16-byte words a thread (the default
    # then moves words; the odd lengths start the second row misaligned)
    fam.ZipCase(half=fuzz.HALF_ARRAYS[-1], items_per_thread=8, short=5, tiles=3, store=("a", "b")),
    fam.ZipCase(half="float16", items_per_thread=16, block=(32, 2, 1), short=130, reverse=True),
    fam.ZipCase(half="float16", items_per_thread=8, short=3, algorithm="vectorize"),
    fam.ZipCase(record="affine", short=9, algorithm="transpose", store=("a", "b")),
    fam.ZipCase(
        record="mixed", short=100, store=("b", "a"), valid_items=200, algorithm="warp_transpose"
    ),
    fam.ZipCase(reverse=True, short=7, tiles=3),
    fam.ZipCase(
        record="affine",
        reverse=True,
        algorithm="striped",
        short=70,
        store=("a", "b"),
        block=(32, 2, 1),
    ),
    fam.ZipCase(record="mixed", oob=False, scan=False, algorithm="direct", short=33, store=("a",)),
    fam.ZipCase(
        record="pair",
        algorithm="vectorize",
        short=1,
        block=(128, 1, 1),
        store=("a", "b"),
        items_per_thread=2,
        valid_items=-1,
    ),
    fam.ZipCase(
        record="pair",
        algorithm="warp_transpose_timesliced",
        items_per_thread=3,
        short=50,
        tiles=3,
    ),
    # fields whose exchanges would take more than 24 KiB share one buffer, handed over
    # with barriers
    fam.ZipCase(
        record="affine",
        algorithm="transpose",
        block=(512, 1, 1),
        items_per_thread=4,
        store=("a", "b"),
        short=100,
        scan=False,
    ),
]

WARPS = [
    fam.WarpCase(),
    fam.WarpCase(
        lanes=8,
        load="striped",
        store="striped",
        short=5,
        prefix="running",
        entry="inclusive_scan",
        op="max",
    ),
    fam.WarpCase(
        lanes=4,
        block=(8, 4, 1),
        shift=1,
        load="vectorize",
        store="vectorize",
        entry="exclusive_scan",
        op="min",
        initial_value=3,
        short=3,
        aggregate=True,
    ),
    fam.WarpCase(
        dtype="int16",
        lanes=16,
        short=20,
        valid_items=5,
        store="direct",
        entry="exclusive_sum",
        aggregate=True,
        oob=False,
    ),
    # an operator that does not commute: operand order shows
    fam.WarpCase(lanes=8, entry="inclusive_scan", op="last", short=9),
    fam.WarpCase(lanes=2, entry="exclusive_scan", op="last", initial_value=4, items_per_thread=3),
    fam.WarpCase(
        dtype="float32",
        lanes=32,
        prefix="running",
        entry="exclusive_sum",
        shift=1,
        store="vectorize",
        tiles=3,
    ),
    fam.WarpCase(dtype="uint8", lanes=1, block=(5, 1, 1), entry="none", short=1, load="direct"),
    # half-precision rows of float32 items: 16-byte words of 8 and 16 items a lane (the
    # second case's rows start 2 items past an aligned address: direct accesses there)
    fam.WarpCase(dtype="float32", array="float16", items_per_thread=8, short=5, prefix="running"),
    fam.WarpCase(
        dtype="float32",
        array="bfloat16" if "bfloat16" in fuzz.HALF_ARRAYS else "float16",
        lanes=8,
        items_per_thread=16,
        shift=2,
        entry="exclusive_sum",
    ),
    fam.WarpCase(dtype="float64", array="float16", lanes=16, items_per_thread=8, tiles=3),
]

LOOKBACKS = [
    lb.LookbackCase(),
    # deterministic statuses: the ordered look-back, forward and reverse, seeded, 2-D
    lb.LookbackCase(deterministic=True, tiles=6, short=9),
    # more tiles than a look-back window (32): tiles look back past whole windows of
    # partial tiles, and fold those windows forward, in order (compose does not commute)
    lb.LookbackCase(
        dtype="pair",
        op="compose",
        block=(32, 1, 1),
        items_per_thread=1,
        tiles=90,
        short=3,
        deterministic=True,
    ),
    lb.LookbackCase(
        dtype="float64",
        mode="exclusive",
        seeded=True,
        reverse=True,
        deterministic=True,
        tiles=5,
        algorithm="warp_scans",
    ),
    lb.LookbackCase(
        dtype="pair",
        op="compose",
        block=(32, 2, 1),
        rows=2,
        two_d=True,
        deterministic=True,
        tiles=4,
    ),
    lb.LookbackCase(
        dtype="pair", op="compose", block=(32, 2, 1), rows=2, two_d=True, short=5, tiles=4
    ),
    lb.LookbackCase(op="max", mode="exclusive", seeded=True, items_per_thread=1, tiles=1),
    lb.LookbackCase(dtype="float32", mode="exclusive", tiles=4, short=100),
    lb.LookbackCase(
        dtype="affine",
        op="compose",
        reverse=True,
        tiles=5,
        short=7,
        seeded=True,
        algorithm="warp_scans",
    ),
    lb.LookbackCase(
        dtype="int64",
        op="min",
        reverse=True,
        tiles=3,
        short=70,
        mode="exclusive",
        seeded=True,
        rows=3,
        two_d=True,
    ),
    lb.LookbackCase(dtype="uint32", op="max", algorithm="warp_scans", block=(128, 1, 1), tiles=6),
    lb.LookbackCase(
        op="user_add", reverse=True, mode="exclusive", seeded=True, block=(32, 1, 1), tiles=7
    ),
    lb.LookbackCase(
        dtype="pair",
        op="compose",
        reverse=True,
        mode="exclusive",
        seeded=True,
        algorithm="raking_memoize",
        items_per_thread=2,
        tiles=4,
        short=3,
    ),
    lb.LookbackCase(seeded=True, op="+", block=(256, 1, 1), items_per_thread=8, tiles=3, short=9),
]


#: Differences and run heads: carried across tiles or not, in place or into out=,
#: user operators, partial last tiles, caller temp storage, 2-D blocks, narrow types.
NEIGHBOURS = [
    fam.NeighbourCase(),
    fam.NeighbourCase(out=True, short=37, dtype="float32", block=(96, 1, 1), items_per_thread=3),
    fam.NeighbourCase(carry=False, dtype="int8", items_per_thread=7, short=5),
    fam.NeighbourCase(op="gap", dtype="float64", temp_storage="caller", block=(16, 4, 1)),
    fam.NeighbourCase(function="flag_heads", short=100),
    fam.NeighbourCase(function="flag_heads", flags="uint8", dtype="float16", carry=False),
    fam.NeighbourCase(function="flag_heads", flags="bool", op="gap", items_per_thread=1),
    fam.NeighbourCase(
        function="flag_heads", flags="int64", dtype="uint16", temp_storage="caller", short=3
    ),
]
