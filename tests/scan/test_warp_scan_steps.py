# SPDX-License-Identifier: Apache-2.0
"""A built-in ``+`` reaches CUB as ``::cuda::std::plus<>``, read in the linked PTX.

CUB's warp scan has a step of its own for ``plus<>`` on 32- and 64-bit
integers and floats: one shuffle whose in-range flag predicates the add
(``shfl.sync.up.b32 r0|p`` then ``@p add``). With any other functor it takes
the generic step, a shuffle and a lane comparison that selects the value, and
an exclusive integer scan shuffles once more where the ``plus<>`` one
subtracts the input. Integer scans with a prefix callback call
``ExclusiveScan`` with an operator (the thread's items are scanned first), so
they depend on the generated code passing ``plus<>`` there.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from helpers.plans import scan_plan
from numba import cuda

import scan
import statefn
from scan import block
from scan._plan import ArrayFact
from scan._primitives.block_scan._unit import OWN_PLUS, cub_plus

pytestmark = pytest.mark.nvrtc

CC = (9, 0)


def _plan(
    dtype: Any, op: str, algorithm: str = "warp_scans", threads: int = 128, items: int = 4
) -> Any:
    return scan_plan(
        function="scan",
        values=ArrayFact(np.dtype(dtype), 1, items),
        scan_op=op,
        algorithm=algorithm,
        block=(threads, 1, 1),
    )


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_plus_on_the_types_cub_specialises(dtype: str) -> None:
    assert cub_plus(_plan(dtype, "+"))


@pytest.mark.parametrize(
    ("dtype", "op"),
    [("int16", "+"), ("uint8", "+"), ("int32", "max"), ("float32", "*"), ("int64", "^")],
)
def test_other_operators_and_types_keep_a_functor(dtype: str, op: str) -> None:
    assert not cub_plus(_plan(dtype, op))


def _linked_ptx(dtype: str, algorithm: str) -> str:
    from cuda.core import Linker, LinkerOptions, ObjectCode

    value = np.dtype(dtype)
    state_dtype = np.int64 if value.kind in "iu" else value.type
    items_per_thread = 4

    @statefn.stateful(state_dtype)
    def running_total(state: Any, block_aggregate: Any) -> Any:
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

    def kernel(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, state_dtype)
        state[0] = 0
        items = cuda.local.array(items_per_thread, value)
        block.load(src, 0, items)
        block.inclusive_sum(
            items, items, prefix_op=running_total, prefix_state=state, algorithm=algorithm
        )
        block.store(dst, 0, items)

    sig = f"void({dtype}[::1], {dtype}[::1])"
    objects = scan.compile(cuda.jit(kernel), sig, cc=CC, output="ltoir", block=128)
    opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
    code = Linker(*map(ObjectCode.from_ltoir, objects), options=opts).link("ptx").code
    return code.decode() if isinstance(code, bytes | bytearray) else str(code)


_SHUFFLE_UP = re.compile(r"shfl\.sync\.up\.b32\s+([^,]+),")


@pytest.mark.parametrize("algorithm", ["warp_scans", "raking"])
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64"])
def test_integer_callback_scans_take_cubs_plus_steps(dtype: str, algorithm: str) -> None:
    """Every up-shuffle is a predicated shuffle-and-add; none is a bare shuffle
    (the generic step's, or the exclusive result's, which plus<> subtracts)."""
    ptx = _linked_ptx(dtype, algorithm)
    targets = _SHUFFLE_UP.findall(ptx)
    assert targets, "no warp scan in the PTX"
    assert all(t.endswith("|p") for t in targets), targets
    adds = len(re.findall(r"@p add\.[su]\d+", ptx)) + len(re.findall(r"@p add\.cc", ptx))
    assert adds >= 5


def test_float_sums_take_cubs_plus_steps() -> None:
    ptx = _linked_ptx("float32", "warp_scans")
    assert len(re.findall(r"@p add\.f32", ptx)) == 5


@pytest.mark.parametrize(("algorithm", "threads", "items"), sorted(OWN_PLUS))
def test_measured_shapes_keep_the_functor(algorithm: str, threads: int, items: int) -> None:
    """bench/codegen_ablation.py --toggle plus: plus<> was slower at these shapes."""
    assert not cub_plus(_plan("int32", "+", algorithm, threads, items))
    assert cub_plus(_plan("int32", "+", algorithm, threads // 2, items))
