# SPDX-License-Identifier: Apache-2.0
"""Cross-block scans (``prefix_op=scan.lookback``) without a GPU: plans, refusals, layouts, code.

Every refusal of the planner, the status dtype that ties a status to its
values, CUB's tile-status layout read from the compiled code (CCCL 3.5 here,
3.0 as on the GPU machine: records pack with their status only in 3.1+), the
row size and tile count formulas the host and the generated code share, and
kernels that link for sm_90 with no local memory. Runs are in
tests/sim/test_sim_lookback.py (simulator and GPU).
"""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
from helpers.cccl import run_with_cccl_3_0, skip_reason, toolkit_cccl
from helpers.kernels import assert_links_without_local_memory, linked_ptx
from helpers.plans import scan_plan
from numba import cuda
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan
from scan import PlanError, ScanTypeError, block
from scan._lookback import STATUS_SLACK, status_row_bytes
from scan._plan import ArrayFact, ScalarFact, plan_fields
from scan._tile_status import status_layout, status_unit

pytestmark = pytest.mark.nvrtc

CC = (9, 0)
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
INT_STATUS = ArrayFact(scan.tile_status_dtype(np.int32), 1, memory="global")


def lookback_plan(**over):
    return scan_plan(**{"prefix_op": scan.lookback, "prefix_state": INT_STATUS, **over})


# ---------------------------------------------------------------- plans


def test_a_lookback_plan_has_no_callback_and_its_own_key():
    plan = lookback_plan()
    assert plan.lookback
    assert plan.prefix_op is None
    assert not plan.stateful
    assert plan.key != scan_plan().key


@pytest.mark.parametrize(
    ("over", "error", "match"),
    [
        ({"prefix_state": None}, PlanError, r"needs prefix_state=, the tile status"),
        (
            {"prefix_state": ArrayFact(np.int32, 1, 1, memory="local")},
            ScanTypeError,
            r"reads its prefix from a tile status, but prefix_state= is a 1-D array of int32",
        ),
        (
            {"prefix_state": ArrayFact(scan.tile_status_dtype(np.float32), 1)},
            ScanTypeError,
            r"made for values of another dtype than this scan's \(int32\)",
        ),
        (
            {"prefix_state": ArrayFact(scan.tile_status_dtype(np.int32), 2)},
            ScanTypeError,
            r"2-D tile status .* prefix_state=status\[row\], with tile=",
        ),
        (
            {"block_aggregate": ArrayFact(np.int32, 1, 1)},
            PlanError,
            r"block_aggregate= cannot be combined",
        ),
        ({"temp_storage": ArrayFact(np.uint8)}, PlanError, r"drop temp_storage="),
        ({"block": (16, 2, 1)}, PlanError, r"x dimension to be a multiple of 32"),
        (
            {"function": "exclusive_scan", "mode": "exclusive", "scan_op": "max"},
            PlanError,
            r"needs initial_value=: tile 0 has no earlier tile",
        ),
        ({"tile": ScalarFact(np.float32)}, ScanTypeError, r"tile= must be an integer"),
    ],
)
def test_lookback_refusals(over, error, match):
    with pytest.raises(error, match=match):
        lookback_plan(**over)


def test_tile_without_lookback_is_refused():
    with pytest.raises(PlanError, match=r"tile= was given without prefix_op=scan.lookback"):
        scan_plan(tile=ScalarFact(np.int32))


def test_a_status_with_another_prefix_op_is_refused():
    with pytest.raises(PlanError, match=r"only prefix_op=scan.lookback reads"):
        scan_plan(prefix_state=INT_STATUS)


def test_a_reverse_lookback_plan():
    plan = lookback_plan(reverse=True)
    assert plan.lookback
    assert plan.reverse
    assert plan.key != lookback_plan().key


def test_an_initial_value_seeds_tile_zero():
    plan = lookback_plan(
        function="exclusive_scan",
        mode="exclusive",
        scan_op="max",
        initial_value=ScalarFact(np.int32),
    )
    assert plan.has_initial_value


def test_status_dtypes_tell_values_apart():
    dtypes = [np.int32, np.uint32, np.float32, np.int64, PAIR]
    made = {scan.tile_status_dtype(d) for d in dtypes}
    assert len(made) == len(dtypes)
    assert all(d.itemsize == 16 for d in made)
    # the record's layout, not its spelling, decides
    same = np.dtype([("a", "<f4"), ("b", "<f4")])
    assert scan.tile_status_dtype(same) == scan.tile_status_dtype(PAIR)


def test_a_deterministic_status_is_a_type_of_its_own():
    plain, ordered = (scan.tile_status_dtype(np.float32, deterministic=d) for d in (False, True))
    assert plain != ordered
    assert ordered.itemsize == 16
    plans = [
        scan_plan(
            values=ArrayFact(np.float32, 1, 4),
            prefix_op=scan.lookback,
            prefix_state=ArrayFact(status, 1),
        )
        for status in (plain, ordered)
    ]
    assert [p.deterministic for p in plans] == [False, True]
    assert plans[0].key != plans[1].key
    assert "deterministic" not in plan_fields(plans[0])  # earlier keys unchanged
    # a deterministic status of other values is refused like any other
    with pytest.raises(ScanTypeError, match="made for values of another dtype"):
        scan_plan(
            values=ArrayFact(np.float64, 1, 4),
            prefix_op=scan.lookback,
            prefix_state=ArrayFact(ordered, 1),
        )


def test_deterministic_must_be_a_bool():
    with pytest.raises(ScanTypeError, match="deterministic= must be True or False"):
        scan.tile_status(4, np.float32, deterministic="yes")


# ---------------------------------------------------------------- CUB's layout


def test_status_layout_comes_from_the_compiled_code():
    # CCCL 3.5: numbers and 8-byte records pack with their status in one word
    assert status_layout(np.dtype(np.int32), CC) == (8, 32)
    assert status_layout(np.dtype(np.float64), CC) == (16, 32)
    assert status_layout(PAIR, CC) == (16, 32)


@pytest.mark.parametrize(("tiles", "tile_bytes"), [(1, 8), (7, 20), (131072, 16), (5, 4)])
def test_a_row_holds_the_tiles_it_was_made_for(tiles, tile_bytes):
    nbytes = status_row_bytes(tiles, tile_bytes, 32)
    assert nbytes % 16 == 0
    holds = (nbytes - STATUS_SLACK) // tile_bytes - 32  # what the generated code computes
    assert tiles <= holds < tiles + 16 // tile_bytes + 1
    # CUB's own size: each of its three arrays rounded to 256 bytes, plus 255
    cub = sum(-(-(holds + 32) * b // 256) * 256 for b in (tile_bytes, 0, 0)) + 255
    assert cub <= nbytes


def test_the_status_unit_initialises_every_tile_it_holds():
    name, source = status_unit(np.dtype(np.int32))
    assert f"{name}_init(void* status, long long row_bytes)" in source
    assert "InitializeStatus(num_tiles)" in source
    assert "AllocationSize(num_tiles, needed)" in source


LAYOUT_CHILD = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype
    import scan
    from scan import block
    from scan._tile_status import status_layout

    pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)

    @cuda.jit(device=True)
    def compose(x, y):
        return (x.a * y.a, y.a * x.b + y.b)

    @cuda.jit
    def recurrence(ab, h, status):
        items = cuda.local.array(4, pair)
        base = cuda.blockIdx.x * 512
        block.load(ab, base, items, oob_default=(1.0, 0.0))
        block.inclusive_scan(items, scan_op=compose, prefix_op=scan.lookback, prefix_state=status)
        block.store(h, base, items)

    for dtype in (np.dtype(np.int32), pair):
        print(*status_layout(dtype, (9, 0)))
    # records kept apart from their status: CUB's Init reports errors through
    # CubDebug, which needs no device runtime with CUB_DISABLE_CDP
    pairs = types.Array(from_dtype(pair), 1, "C")
    status = types.Array(from_dtype(scan.tile_status_dtype(pair)), 1, "C")
    cubin = scan.compile(recurrence, (pairs, pairs, status), cc=(9, 0), block=128)
    print("linked" if cubin[:4] == b"\\x7fELF" else "not a cubin")
    # a deterministic status: the ordered look-back against CCCL 3.0's ScanTileState
    for dtype, kernel in ((pair, recurrence),):
        ordered = types.Array(from_dtype(scan.tile_status_dtype(dtype, deterministic=True)), 1, "C")
        cubin = scan.compile(kernel, (pairs, pairs, ordered), cc=(9, 0), block=128)
        print("ordered" if cubin[:4] == b"\\x7fELF" else "not a cubin")
    """
)


@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_status_layout_with_cccl_3_0(tmp_path):
    out = run_with_cccl_3_0(LAYOUT_CHILD, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    # CCCL 3.0 keeps records apart from their status: 4 + 2 x 8 bytes a tile
    assert out.stdout.split() == ["8", "32", "20", "32", "linked", "ordered"]


# ---------------------------------------------------------------- kernels


@cuda.jit(device=True)
def compose(x, y):
    return (x.a * y.a, y.a * x.b + y.b)


def cumsum(src, dst, status):
    items = cuda.local.array(8, np.int32)
    base = cuda.blockIdx.x * 2048
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status)
    block.store(dst, base, items)


def recurrence(ab, h, status):
    items = cuda.local.array(4, PAIR)
    base = cuda.blockIdx.x * 512
    block.load(ab[cuda.blockIdx.y], base, items, oob_default=(1.0, 0.0))
    block.inclusive_scan(
        items,
        scan_op=compose,
        prefix_op=scan.lookback,
        prefix_state=status[cuda.blockIdx.y],
        tile=cuda.blockIdx.x,
    )
    block.store(h[cuda.blockIdx.y], base, items)


def _status(dtype, ndim, deterministic=False):
    status = scan.tile_status_dtype(dtype, deterministic=deterministic)
    return types.Array(from_dtype(status), ndim, "C")


@pytest.mark.parametrize(
    ("kernel", "argtypes", "threads"),
    [
        (cumsum, (types.int32[::1], types.int32[::1], _status(np.int32, 1)), 256),
        (cumsum, (types.int32[::1], types.int32[::1], _status(np.int32, 1, True)), 256),
        (
            recurrence,
            (
                types.Array(from_dtype(PAIR), 2, "C"),
                types.Array(from_dtype(PAIR), 2, "C"),
                _status(PAIR, 2),
            ),
            128,
        ),
    ],
)
def test_lookback_kernels_link_without_local_memory(kernel, argtypes, threads, tmp_path):
    # no stack frame: the look-back op and the tile state stay in registers
    assert_links_without_local_memory(cuda.jit(kernel), argtypes, threads, tmp_path)


def suffix_sum(src, dst, status):
    items = cuda.local.array(4, np.int64)
    base = cuda.blockIdx.x * 512
    block.load(src, base, items, oob_default=0)
    block.inclusive_sum(items, prefix_op=scan.lookback, prefix_state=status, reverse=True)
    block.store(dst, base, items)


def test_a_reverse_lookback_holds_one_set_of_exchange_slots():
    # tile 0 and the later tiles scan in two branches; the slots the reverse
    # scan exchanges through are declared once for both (2 x 128 x 8 bytes)
    argtypes = (types.int64[::1], types.int64[::1], _status(np.int64, 1))
    codes = scan.compile(cuda.jit(suffix_sum), argtypes, cc=CC, block=128, output="ltoir")
    shared = re.findall(r"\.shared \.align \d+ \.b8 (\w+)\[(\d+)\]", linked_ptx(codes))
    slots = [size for name, size in shared if "reverse_slots" in name]
    assert slots == ["2048"], shared


# ---------------------------------------------------------------- the status as an argument


def _device_status(rows: int | None) -> scan.TileStatus:
    """A status as tile_status makes one on a GPU (no memory behind it: never launched)."""
    from scan._tile_status import TileStatus

    return TileStatus(100, rows, np.dtype(np.int32), row_bytes=2048, address=1 << 20, cc=CC)


def test_a_status_is_typed_as_an_array_of_its_status_dtype():
    # the array interface's typestr ('|V16') has no fields: numba-cuda would type
    # the status as an array of void; the front end types it from the status
    from numba.cuda.typing.typeof import typeof

    status = _device_status(3)
    element = from_dtype(scan.tile_status_dtype(np.int32))
    assert typeof(status) == types.Array(element, 2, "C")
    assert typeof(status[1]) == types.Array(element, 1, "C")


def test_the_array_interface_describes_the_rows():
    status = _device_status(3)
    cai = status.__cuda_array_interface__
    assert cai["shape"] == (3, 128)
    assert np.dtype(cai["typestr"]).itemsize == 16  # what numba-cuda passes: bytes per element
    row = status[2].__cuda_array_interface__
    assert row["shape"] == (128,)
    assert row["data"][0] == (1 << 20) + 2 * 2048


def test_a_status_is_typed_by_numba_cuda_mlir_too():
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed")
    from numba.cuda.typing.typeof import typeof
    from numba_cuda_mlir.numba_cuda import types as mtypes
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype as mfrom_dtype
    from numba_cuda_mlir.numba_cuda.typing.typeof import typeof as mtypeof

    import scan._numba_cuda_mlir

    status = _device_status(None)
    # each front end's type is made once per status and kept apart from the other's
    assert typeof(status) == types.Array(from_dtype(scan.tile_status_dtype(np.int32)), 1, "C")
    element = mfrom_dtype(scan.tile_status_dtype(np.int32))
    assert mtypeof(status) == mtypes.Array(element, 1, "C")
    assert type(mtypeof(status)) is mtypes.Array


TRIPLE = np.dtype([("x", np.float32), ("y", np.float32), ("n", np.int32)], align=True)


@pytest.mark.parametrize("algorithm", ["raking", "raking_memoize", "warp_scans"])
@pytest.mark.parametrize(
    ("dtype", "mode", "op", "seeded", "reverse", "deterministic"),
    [
        (np.int8, "exclusive", "+", False, False, False),
        (np.uint64, "inclusive", "max", False, False, False),
        (np.float64, "exclusive", "min", True, False, False),
        (np.float32, "inclusive", "+", False, True, False),
        (np.float32, "inclusive", "+", False, False, True),
        (np.float64, "exclusive", "+", True, True, True),
    ],
)
def test_lookback_providers_compile(algorithm, dtype, mode, op, seeded, reverse, deterministic):
    from scan._compile import compile_provider
    from scan._primitives.block_scan import render_scan

    value = np.dtype(dtype)
    plan = scan_plan(
        function=f"{mode}_scan",
        mode=mode,
        scan_op=op,
        initial_value=ScalarFact(value) if seeded else None,
        values=ArrayFact(value, 1, 3),
        prefix_op=scan.lookback,
        prefix_state=ArrayFact(scan.tile_status_dtype(value, deterministic=deterministic), 1),
        algorithm=algorithm,
        block=(64, 2, 1),
        reverse=reverse,
    )
    assert plan.deterministic == deterministic
    text = render_scan(plan)
    assert ("ordered_lookback_op_t" in text) == deterministic
    provider = compile_provider(plan.symbol, text, cc=CC)
    assert provider.ltoir


@cuda.jit(device=True)
def running_mean(a, b):
    return (a.x + b.x, a.y + b.y, a.n + b.n)


@pytest.mark.parametrize("algorithm", ["raking", "warp_scans"])
def test_twelve_byte_records_link(algorithm, tmp_path):
    # never packed with their status (not a power of two): CUB's separate arrays
    def kernel(src, dst, status):
        items = cuda.local.array(3, TRIPLE)
        base = cuda.blockIdx.x * 384
        block.load(src, base, items)
        block.inclusive_scan(
            items,
            scan_op=running_mean,
            prefix_op=scan.lookback,
            prefix_state=status,
            algorithm=algorithm,
        )
        block.store(dst, base, items)

    triples = types.Array(from_dtype(TRIPLE), 1, "C")
    cubin = scan.compile(
        cuda.jit(kernel), (triples, triples, _status(TRIPLE, 1)), cc=CC, block=(64, 2, 1)
    )
    assert cubin[:4] == b"\x7fELF"


def test_a_status_outside_the_simulator_is_device_memory():
    # compiled kernels have a host backend too (it refuses host calls): only the
    # simulator's makes simulated statuses, which a GPU launch cannot take
    from scan._calls import host_backend

    assert host_backend() is not None
    assert not host_backend().simulated
    try:
        from cuda.core import Device

        Device()
    except Exception:  # no GPU here: a device for the status is what is missing
        with pytest.raises(scan.ToolchainError, match=r"set NUMBA_ENABLE_CUDASIM=1 before numba"):
            scan.tile_status(4, np.int32)
        return
    assert not scan.tile_status(4, np.int32).simulated
