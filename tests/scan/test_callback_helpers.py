# SPDX-License-Identifier: Apache-2.0
"""Callbacks that call ``@cuda.jit(device=True)`` helpers compile without a GPU.

numba-cuda compiles a device function called from another for the current
device; the callbacks' helpers are compiled for the requested ``cc`` instead
(``scan._numba_cuda._callbacks._Helpers``). The helpers' arithmetic must reach
the linked code: each helper multiplies or adds a constant no other code uses,
and the linked PTX is searched for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan._numba_cuda._callbacks import lower

pytestmark = pytest.mark.nvrtc

CC = (9, 0)


@cuda.jit(device=True)
def times_12345(x: Any) -> Any:
    return x * 12345


@cuda.jit(device=True)
def scaled_plus(x: Any, offset: Any = 678) -> Any:
    return times_12345(x) + offset  # a helper calling a helper, with a default


@statefn.stateful(np.int64)
def scaled_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + scaled_plus(block_aggregate)
    return prefix


def _closure_callback(helper: Any) -> Any:
    def shifted(block_aggregate: Any) -> Any:
        return helper(block_aggregate, offset=9876)  # a keyword argument

    return statefn.stateless(shifted)


def _kernel(callback: Any, stateful: bool) -> Any:
    if stateful:

        def k(a: Any, totals: Any) -> None:
            state = cuda.local.array(1, np.int64)
            state[0] = 0
            i = cuda.threadIdx.x
            a[i] = scan.block.inclusive_sum(a[i], prefix_op=callback, prefix_state=state)
            totals[i] = state[0]  # keeps the state update (and the helpers) alive

    else:

        def k(a: Any, totals: Any) -> None:
            i = cuda.threadIdx.x
            a[i] = scan.block.inclusive_sum(a[i], prefix_op=callback)

    return cuda.jit(k)


def _linked_ptx(kernel: Any) -> str:
    from cuda.core import Linker, LinkerOptions, ObjectCode

    sig = (types.Array(types.int32, 1, "C"), types.Array(types.int64, 1, "C"))
    cubin = scan.compile(kernel, sig, cc=CC, block=(128, 1, 1))
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    objects = scan.compile(kernel, sig, cc=CC, block=(128, 1, 1), output="ltoir")
    opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
    code = Linker(*map(ObjectCode.from_ltoir, objects), options=opts).link("ptx").code
    return code.decode() if isinstance(code, bytes | bytearray) else str(code)


def test_stateful_callback_calling_helpers_links_with_their_arithmetic() -> None:
    ptx = _linked_ptx(_kernel(scaled_total, stateful=True))
    assert "12345" in ptx  # times_12345, called by scaled_plus
    assert "678" in ptx  # scaled_plus's default offset


def test_closure_helper_with_keyword_argument() -> None:
    ptx = _linked_ptx(_kernel(_closure_callback(scaled_plus), stateful=False))
    assert "12345" in ptx
    assert "9876" in ptx


def test_helpers_are_compiled_under_the_callbacks_name() -> None:
    """The helpers' internal symbols carry the callback's name, so two callbacks
    compiled in different processes never share one, and the user's dispatchers
    are left as they were (nothing compiled into them)."""
    from scan._numba_cuda._callbacks import _renamed

    def uses_helper(block_aggregate: Any) -> Any:
        return scaled_plus(block_aggregate)

    copy = _renamed(uses_helper, "statefn_test_cb__op", CC)
    ptx, _ = cuda.compile(copy, types.int32(types.int32), device=True, cc=CC, output="ptx")
    assert "statefn_test_cb__op__scaled_plus" in ptx
    assert "statefn_test_cb__op__times_12345" in ptx
    assert not scaled_plus.overloads
    assert not times_12345.overloads
    assert lower(scaled_total, np.int32, cc=CC).ltoir


def test_numba_njit_helper() -> None:
    import numba

    @numba.njit
    def plus_4321(x: Any) -> Any:
        return x + 4321

    callback = statefn.stateless(lambda block_aggregate: plus_4321(block_aggregate))
    assert "4321" in _linked_ptx(_kernel(callback, stateful=False))


def test_numba_cuda_mlir_callback_calling_helpers() -> None:
    """The other front end: its own device functions, a helper calling a helper
    with a default, compiled for cc 9.0 without a GPU."""
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed")
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from numba_cuda_mlir import cuda as mcuda
    from numba_cuda_mlir.numba_cuda import types as mtypes

    times_2468 = mcuda.jit(device=True)(lambda x: x * 2468)

    @mcuda.jit(device=True)
    def plus_offset(x: Any, offset: Any = 1357) -> Any:
        return times_2468(x) + offset

    @statefn.stateful(np.int64)
    def total(state: Any, block_aggregate: Any) -> Any:
        prefix = state[0]
        state[0] = prefix + plus_offset(block_aggregate)
        return prefix

    def k(a: Any, totals: Any) -> None:
        state = mcuda.local.array(1, np.int64)
        state[0] = 0
        i = mcuda.threadIdx.x
        a[i] = scan.block.inclusive_sum(a[i], prefix_op=total, prefix_state=state, threads=128)
        totals[i] = state[0]

    sig = (mtypes.Array(mtypes.int32, 1, "C"), mtypes.Array(mtypes.int64, 1, "C"))
    objects = scan.compile(mcuda.jit(k), sig, cc=CC, output="ltoir")
    opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
    code = Linker(*map(ObjectCode.from_ltoir, objects), options=opts).link("ptx").code
    ptx = code.decode() if isinstance(code, bytes | bytearray) else str(code)
    assert "2468" in ptx
    assert "1357" in ptx


def test_helper_reached_through_a_module_attribute() -> None:
    import types as pytypes

    helpers = pytypes.ModuleType("cb_helpers")
    exec(
        "from numba import cuda\n@cuda.jit(device=True)\ndef plus_2222(x):\n    return x + 2222\n",
        vars(helpers),
    )
    callback = statefn.stateless(lambda block_aggregate: helpers.plus_2222(block_aggregate))
    assert "2222" in _linked_ptx(_kernel(callback, stateful=False))
    assert not helpers.plus_2222.overloads
