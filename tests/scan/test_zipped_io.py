# SPDX-License-Identifier: Apache-2.0
"""Zipped tile I/O: record items loaded from and stored to one array per field.

Every misuse is refused while typing, with its exact words; the provider of
every algorithm compiles (against CCCL 3.5 and 3.0); a recurrence kernel
(``h = a * h + b`` from two float32 arrays) links for sm_90 in both front ends
without local memory (its pointer table stays in registers).
"""

from __future__ import annotations

import types as pytypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from doc_examples.examples import records
from helpers.cccl import compile_variants_with_cccl_3_0, skip_reason, toolkit_cccl
from helpers.kernels import assert_links_without_local_memory, typing_error
from helpers.plans import ZIP_PAIR, zipped_plan
from numba import cuda
from numba.cuda import types
from numba.cuda.np.numpy_support import from_dtype

import scan
from scan import block
from scan._codegen import render_group
from scan._compile import compile_provider
from scan._primitives.tile_io import SPEC
from scan._vocab import IO_ALGORITHMS

pytestmark = pytest.mark.nvrtc

CC = (9, 0)
PAIR = ZIP_PAIR
F32 = types.float32[::1]
ROWS = types.Array(types.float32, 2, "C")
THREADS = 128
ITEMS = 4


# ---------------------------------------------------------------- refusals


def _kernel(body: str) -> Any:
    """``def k(a, b, h)`` running `body`, with ``items`` (4 PAIR records), ``numbers``
    (4 float32), ``d`` (float64), ``m`` (a 2-D array) and ``t`` (shared bytes)."""
    source = (
        "def k(a, b, h):\n"
        "    items = cuda.local.array(4, PAIR)\n"
        "    numbers = cuda.local.array(4, np.float32)\n"
        "    d = cuda.local.array(8, np.float64)\n"
        "    m = cuda.local.array((2, 8), np.float32)\n"
        "    t = cuda.shared.array(64, np.uint8)\n"
        f"    {body}\n"
    )
    scope: dict[str, Any] = {"cuda": cuda, "np": np, "block": block, "scan": scan, "PAIR": PAIR}
    exec(source, scope)
    return scope["k"]


REFUSALS = [
    (
        "block.load((a, b, h), 0, items, threads=32)",
        "ScanTypeError: load: src holds 3 array(s) but the items' record dtype has 2 field(s) "
        "(a, b); pass a tuple of one 1-D array per field, in that order",
    ),
    (
        "block.load((a, d), 0, items, threads=32)",
        "ScanTypeError: load: the src array of field 'b' has dtype float64 but the field is "
        "float32; pass an array of the field's dtype (convert it with .astype(np.float32) "
        "outside the kernel)",
    ),
    (
        "block.load((a, b), 0, numbers, threads=32)",
        "ScanTypeError: load: src is a tuple of arrays (zipped tile I/O) but items have dtype "
        "float32; items must be a local array of a record dtype with one field per array, e.g. "
        "cuda.local.array(n, np.dtype([('a', np.float32), ('b', np.float32)], align=True))",
    ),
    (
        "block.store(h, 0, items, field='c', threads=32)",
        "ScanTypeError: store: items have no field 'c'; their fields are 'a', 'b'",
    ),
    (
        "block.store(h, 0, items, field=('b', 'b'), threads=32)",
        "PlanError: store: field= names 'b' twice; name each field once",
    ),
    (
        "block.store((a, b), 0, items, field='b', threads=32)",
        "ScanTypeError: store: dst holds 2 array(s) but field= names 1 field(s) (b); pass a "
        "tuple of one 1-D array per field, in that order",
    ),
    (
        "block.load((a, b), 0, items, field='b', threads=32)",
        "PlanError: load: unexpected keyword argument field= (field= picks the fields a store "
        "writes; a load from a tuple of arrays fills every field of the record items); "
        "accepted keywords are algorithm, auto_sync, items, items_per_thread, offset, "
        "oob_default, src, temp_storage, threads, valid_items",
    ),
    (
        "block.store(h, 0, numbers, field='b', threads=32)",
        "ScanTypeError: store: field= picks fields of record items, but items have dtype "
        "float32; drop field= (numeric items are stored whole)",
    ),
    (
        "block.store((m, b), 0, items, threads=32)",
        "ScanTypeError: store: dst array of field 'a' must be a 1-D array (got 2-D); index a "
        "row first, e.g. dst[row]",
    ),
    (
        "block.store((m[:, 0], b), 0, items, threads=32)",
        "ScanTypeError: store: dst array of field 'a' must be C-contiguous (got a strided "
        "view); pass a contiguous row",
    ),
    (
        "block.load((a, b), 0, items, oob_default=(1.0, 0.0, 2.0), threads=32)",
        "ScanTypeError: load: oob_default is a tuple of (float64, float64, float64) but values "
        "are record(a: float32, b: float32); pass a record of that dtype or a tuple of 2 "
        "numbers, one per field in order",
    ),
    (
        "block.load((a, b), 0, items, temp_storage=t, threads=32)",
        "PlanError: load: zipped tile I/O (a tuple of arrays, or field=) owns its temp "
        "storage; drop temp_storage=",
    ),
    (
        "scan.warp.load((a, b), 0, items, lanes=32, threads=32)",
        "ScanTypeError: warp.load: src is a tuple of arrays; only scan.block.load and "
        "scan.block.store take one (zipped tile I/O, src= and dst=); pass one array",
    ),
    (
        "block.inclusive_sum((a, b), threads=32)",
        "ScanTypeError: inclusive_sum: values is a tuple of arrays; only scan.block.load and "
        "scan.block.store take one (zipped tile I/O): load the fields into a local array of "
        "records and pass that",
    ),
]


@pytest.mark.parametrize(("body", "message"), REFUSALS)
def test_misuse_is_refused_while_typing(body: str, message: str) -> None:
    got = typing_error(_kernel(body), (F32, F32, F32))
    assert got == message, got


def test_field_names_must_be_literal_strings() -> None:
    k = _kernel("block.store(h, 0, items, field=1, threads=32)")
    assert typing_error(k, (F32, F32, F32)) == (
        "PlanError: store: field= must be a field name or a tuple of field names written in "
        "the kernel (got 1); e.g. field='b' or field=('a', 'b')"
    )


def test_a_warp_store_takes_no_field() -> None:
    got = typing_error(
        _kernel("scan.warp.store(h, 0, items, field='b', lanes=32, threads=32)"), (F32,) * 3
    )
    assert got.startswith(
        "PlanError: warp.store: unexpected keyword argument field= (zipped tile I/O is "
        "scan.block.load's and scan.block.store's; a warp store writes whole items)"
    ), got


# ---------------------------------------------------------------- the providers

#: a linear recurrence's pair, and fields of three sizes (a flag, a value, a count)
MIXED = np.dtype([("flag", np.int8), ("value", np.float64), ("n", np.int32)], align=True)
#: (direction, algorithm): each rendered as one unit of every record, field and oob case
_VARIANTS = [(d, a) for d in ("load", "store") for a in (*IO_ALGORITHMS, None)]


def _variant_plans(direction: str, algorithm: str | None) -> list[Any]:
    if direction == "load":
        return [
            zipped_plan("load", algorithm, oob=True),
            zipped_plan("load", algorithm, record=MIXED, items=8),
            zipped_plan("load", algorithm, threads=512, items=16),  # a shared buffer
        ]
    return [
        zipped_plan("store", algorithm),
        zipped_plan("store", algorithm, field="b"),
        zipped_plan("store", algorithm, record=MIXED, field=("n", "flag"), items=8),
    ]


def variant_source(direction: str, algorithm: str | None) -> str:
    """The providers of one direction and algorithm, as one unit."""
    name = f"zipped_{direction}_{algorithm or 'default'}"
    units = [
        (f"{name}_{i}", SPEC.render(plan, [], f"{name}_{i}", None), False)
        for i, plan in enumerate(_variant_plans(direction, algorithm))
    ]
    return render_group(name, units)


def test_the_default_algorithm_follows_the_fields_not_the_record() -> None:
    # 8-byte records, 4-byte fields: the 4-byte default (vector loads) at 256 x 4
    plan = zipped_plan("load")
    assert (plan.algorithm, plan.unaligned) == ("vectorize", "warp_transpose")
    assert [p.value_dtype for p in plan.field_plans()] == [np.dtype(np.float32)] * 2


def _unit(*args: Any, **kwargs: Any) -> str:
    return SPEC.render(zipped_plan(*args, **kwargs), [], None, None)


def test_fields_share_one_buffer_unless_that_takes_block_barriers() -> None:
    # block-wide exchanges: storage of their own, up to 24 KiB together
    assert "struct temp_storage_t {" in _unit("load", "transpose")
    assert "struct temp_storage_t {" in _unit("store", "warp_transpose_timesliced")
    shared = _unit("load", "transpose", threads=512, items=16)
    assert "union temp_storage_t {" in shared
    assert shared.count("__syncthreads(); // the next field reuses the temp storage") == 1
    # each warp exchanges through its own part: one buffer, __syncwarp between fields
    warps = _unit("load", "warp_transpose", threads=256, items=8)
    assert "union temp_storage_t {" in warps
    assert warps.count("__syncwarp(); // the warp's next field") == 1
    assert "the next field reuses the temp storage" not in warps
    # vectorize's fallback exchanges end with a barrier: one buffer, nothing added
    default = _unit("load")
    assert "union temp_storage_t {" in default
    assert "__syncwarp" not in default
    assert "the next field reuses" not in default
    # no shared memory at all
    assert "__syncwarp" not in _unit("store", "direct")


@pytest.mark.parametrize("variant", _VARIANTS)
def test_every_algorithm_compiles(variant: tuple[str, str | None]) -> None:
    compile_provider("zipped", variant_source(*variant), cc=CC, what=f"zipped {variant}")


@pytest.mark.skipif(toolkit_cccl() is None, reason=skip_reason())
def test_every_algorithm_compiles_with_cccl_3_0(tmp_path: Path) -> None:
    assert compile_variants_with_cccl_3_0(__file__, tmp_path) == f"ok {len(_VARIANTS)}"


# ---------------------------------------------------------------- a recurrence kernel


def test_recurrence_links_without_local_memory(tmp_path: Path) -> None:
    # docs/records.md's recurrence: the address table and field items stay in registers
    assert_links_without_local_memory(records.selective_scan, (ROWS,) * 3, THREADS, tmp_path)


def _front_end(name: str) -> tuple[Any, Any]:
    """The ``cuda`` module and ``types`` of front end `name` (skips numba-cuda-mlir when absent)."""
    if name == "numba-cuda":
        return cuda, types
    mlir = pytest.importorskip(
        "numba_cuda_mlir",
        reason="!!!!! numba-cuda-mlir is not installed: its zipped tile I/O is NOT tested",
    )
    from numba_cuda_mlir.numba_cuda import types as mlir_types

    return mlir.cuda, mlir_types


def _jit(fn: Any, module: Any) -> Any:
    """`fn`'s body, with the global ``cuda`` bound to `module`, as a kernel of that front end."""
    fn = getattr(fn, "py_func", fn)
    return module.jit(
        pytypes.FunctionType(fn.__code__, {**fn.__globals__, "cuda": module}, fn.__name__)
    )


def test_recurrence_links_without_local_memory_under_numba_cuda_mlir(tmp_path: Path) -> None:
    module, ty = _front_end("numba-cuda-mlir")
    rows = ty.Array(ty.float32, 2, "C")
    kernel = _jit(records.selective_scan, module)
    assert_links_without_local_memory(kernel, (rows,) * 3, THREADS, tmp_path)


def test_record_rows_and_field_rows_mix() -> None:
    """A store of every field to a tuple, after a load of record rows (numba-cuda)."""

    def k(ab, a, b):
        items = cuda.local.array(ITEMS, PAIR)
        block.load(ab, 0, items)
        block.store((a, b), 0, items)

    record_row = types.Array(from_dtype(PAIR), 1, "C")
    cubin = scan.compile(cuda.jit(k), (record_row, F32, F32), cc=CC, block=THREADS)
    assert cubin[:4] == b"\x7fELF"


def test_a_record_as_oob_default_compiles() -> None:
    def k(a, b, fill, h):
        items = cuda.local.array(ITEMS, PAIR)
        block.load((a, b), 0, items, oob_default=fill[0])
        block.store(h, 0, items, field="a")

    record_row = types.Array(from_dtype(PAIR), 1, "C")
    cubin = scan.compile(cuda.jit(k), (F32, F32, record_row, F32), cc=CC, block=THREADS)
    assert cubin[:4] == b"\x7fELF"


def _every_form(a, b, n):
    items = cuda.local.array(ITEMS, PAIR)
    block.load((a, b), 0, items, valid_items=n)
    block.store((b, a), 0, items, field=("a", "b"), valid_items=n)
    block.store(a, 0, items, field="b", algorithm="striped")
    block.store((a, b), 0, items, algorithm="warp_transpose")


@pytest.mark.parametrize("front_end", ["numba-cuda", "numba-cuda-mlir"])
def test_every_form_compiles(front_end: str) -> None:
    """A tuple load, stores of named fields in another order, of one field, of every field."""
    module, ty = _front_end(front_end)
    row = ty.float32[::1]
    cubin = scan.compile(_jit(_every_form, module), (row, row, ty.int64), cc=CC, block=THREADS)
    assert cubin[:4] == b"\x7fELF"
