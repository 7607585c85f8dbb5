# SPDX-License-Identifier: Apache-2.0
"""Load, scan and store tile loops: one case per way the three calls share memory and barriers.

Each case walks short rows tile by tile (the last tile partial or past the
end) through ``block.load``, a scan and ``block.store``, and is checked against
NumPy. Between them the cases use every scan algorithm, every tile I/O
algorithm, library-owned, caller-owned and dynamic temp storage shared by all
three calls, ``auto_sync=False`` with the caller's barriers, 1-D, 2-D and 3-D
blocks and every kind of callback.

Marked ``sanitize``: tools/gpu_suite.sh runs these on the GPU under
compute-sanitizer, where racecheck and synccheck see the shared-memory traffic
and barriers of each combination.
"""

from __future__ import annotations

import pytest
from cases import block_cases as bc
from cases import fuzz
from cases.block_cases import ScanCase

pytestmark = [pytest.mark.sim, pytest.mark.sanitize]

CASES = {
    "default-io-running": ScanCase(
        block=(64, 1, 1), items_per_thread=4, tiles=3, prefix="running", io="default", short=37
    ),
    # 256 x 4 int32: vector accesses on the first (16-byte aligned) row, the
    # warp_transpose fallback and its barrier on the second (3069 items a row)
    "default-io-vector-or-transpose": ScanCase(
        block=(256, 1, 1), items_per_thread=4, tiles=3, prefix="running", io="default", short=3
    ),
    "warp-scans-timesliced-caller": ScanCase(
        entry="exclusive_scan",
        mode="exclusive",
        op="max",
        dtype="float32",
        block=(96, 1, 1),
        items_per_thread=2,
        tiles=2,
        algorithm="warp_scans",
        prefix="running",
        state_dtype="float64",
        io="warp_transpose_timesliced",
        temp_storage="caller",
        short=10,
    ),
    "memoize-transpose-dynamic-no-sync": ScanCase(
        entry="inclusive_scan",
        op="min",
        dtype="int16",
        block=(33, 1, 1),
        items_per_thread=3,
        tiles=2,
        algorithm="raking_memoize",
        prefix="count",
        io="transpose",
        auto_sync=False,
        temp_storage="dynamic",
    ),
    "scalar-striped-2d-stateless": ScanCase(
        entry="scan",
        mode="exclusive",
        dtype="uint64",
        block=(4, 8, 1),
        items_per_thread=0,
        tiles=2,
        prefix="stateless",
        io="striped",
        explicit_threads=True,
        valid_items=20,
    ),
    "vectorize-3d-aggregate-caller-no-sync": ScanCase(
        dtype="int8",
        block=(2, 4, 4),
        items_per_thread=2,
        tiles=2,
        aggregate=True,
        io="vectorize",
        short=5,
        out_of_place=True,
        temp_storage="caller",
        auto_sync=False,
    ),
    "warp-scans-warp-transpose-dynamic": ScanCase(
        entry="exclusive_sum",
        mode="exclusive",
        dtype="float64",
        block=(128, 1, 1),
        items_per_thread=1,
        tiles=2,
        algorithm="warp_scans",
        prefix="running",
        state_dtype="float64",
        io="warp_transpose",
        temp_storage="dynamic",
        oob_default=0,
        short=129,
    ),
    "user-operator-direct": ScanCase(
        entry="inclusive_scan",
        op="user_add",
        dtype="int32",
        block=(7, 1, 1),
        items_per_thread=4,
        tiles=2,
        prefix="running",
        io="direct",
    ),
    # the scan whose trailing barrier the library leaves out (CUB's own follows
    # the callback): library-owned storage, warp_scans, a callback, in a loop
    "warp-scans-callback-own-barrier": ScanCase(
        block=(64, 1, 1),
        items_per_thread=2,
        tiles=4,
        algorithm="warp_scans",
        prefix="running",
        io="direct",
    ),
    "io-only-past-the-end": ScanCase(
        entry="none",
        block=(64, 1, 1),
        items_per_thread=2,
        tiles=3,
        io="warp_transpose",
        short=168,
        oob_default=3,
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_tile_loop(case):
    src, state_init = bc.scan_inputs(case, rows=2, seed=1)
    got = bc.run_scan(case, src, state_init)
    fuzz.assert_matches(case, got, bc.scan_reference(case, src, state_init))
