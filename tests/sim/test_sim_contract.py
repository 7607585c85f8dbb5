# SPDX-License-Identifier: Apache-2.0
"""The state contract, checked: each mistake a new user makes, and what is said.

State in shared or global memory is refused by the planner, so both backends
refuse it with the same words (these tests also run on a GPU). State that no
thread, or only thread 0, initialised, state initialised differently in the
calling lanes, and a partial tile loaded without ``oob_default=`` whose items
reach the callback are found by the simulator while the kernel runs
(``sim_only``): a GPU gives undefined or silently wrong results there. The
parity corpus (tests/helpers/callback_corpus.py) runs here as it is compiled
in tests/scan/test_callback_parity.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import SIMULATOR
from helpers import callback_corpus as corpus
from numba import cuda

import statefn
from scan import ScanError, block

pytestmark = pytest.mark.sim

HERE = __file__


def _launch(kernel, a=None, s=None):
    a = np.arange(32, dtype=np.int32) if a is None else a
    s = np.full(1, -1, dtype=np.int64) if s is None else s
    cuda.jit(kernel)[1, 32](a, s)
    return a, s


def _message(exc: BaseException) -> str:
    got = str(getattr(exc, "rejection", exc))  # compiled: reported at the call's line first
    if SIMULATOR:  # the simulator names the thread that raised first
        assert re.match(r"tid=\[\d+, \d+, \d+\] ctaid=\[\d+, \d+, \d+\]: ", got), got
        got = got.split(": ", 1)[1]
    return got


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize("name", sorted(corpus.ACCEPTED))
def test_accepted_callbacks_run(name):
    kernel, want_a, want_s = corpus.ACCEPTED[name]
    a, s = _launch(kernel)
    np.testing.assert_array_equal(a, want_a)
    assert s[0] == want_s


@pytest.mark.parametrize("name", sorted(corpus.REFUSED))
def test_refused_callbacks_are_refused(name):
    kernel, kind, text = corpus.REFUSED[name]
    with pytest.raises(Exception) as info:
        _launch(kernel)
    assert kind in {cls.__name__ for cls in type(info.value).__mro__}
    assert text in _message(info.value)
    if name == "python_object_callback":
        assert corpus.PYTHON_OBJECT_REASON in str(info.value)
        assert corpus.SEEN == []  # refused before the callback ran as Python


# ----------------------------------------------------- found while running


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def _contract_error(kernel, line: str, message: str, *arrays):
    with pytest.raises(ScanError) as info:
        kernel[1, 32](*arrays)
    assert type(info.value).__name__ == "StateContractError"
    assert isinstance(info.value, RuntimeError)
    where, source, got = _message(info.value).split("\n", 2)
    assert re.fullmatch(rf'File "{re.escape(HERE)}", line \d+, in {kernel.__name__}', where)
    assert source.strip() == line
    assert got == message


SCAN_LINE = "a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state)"


@cuda.jit
def thread0_initialises(a):
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    if i == 0:
        state[0] = 0
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state)


@pytest.mark.sim_only
def test_state_initialised_by_thread_0_only():
    _contract_error(
        thread0_initialises,
        SCAN_LINE,
        "inclusive_sum: prefix_state was never written in thread 1 (thread 0 did) before the "
        "callback's first call; threads 0 to 31 each call it with their own state, and a "
        "cuda.local.array starts uninitialised; write state[0] = <initial value> in every "
        "thread before the first scan, not only in thread 0",
        np.arange(32, dtype=np.int32),
    )


@cuda.jit
def never_initialised(a):
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state)


@pytest.mark.sim_only
def test_state_never_initialised():
    _contract_error(
        never_initialised,
        SCAN_LINE,
        "inclusive_sum: prefix_state was never written in thread 0 before the callback's first "
        "call; threads 0 to 31 each call it with their own state, and a cuda.local.array starts "
        "uninitialised; write state[0] = <initial value> in every thread before the first scan, "
        "not only in thread 0",
        np.arange(32, dtype=np.int32),
    )


@cuda.jit
def initialised_per_thread(a):
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = i
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state)


@pytest.mark.sim_only
def test_state_initialised_differently():
    _contract_error(
        initialised_per_thread,
        SCAN_LINE,
        "inclusive_sum: prefix_state differs between the threads that call the callback at its "
        "first call (thread 0 holds 0, thread 1 holds 1); threads 0 to 31 each run the callback "
        "on their own state, and only thread 0's result counts: initialise the state equally in "
        "every thread and read the final state from thread 0 (set STATEFN_SCAN_SIM_CONTRACT=off "
        "to run such a kernel anyway)",
        np.arange(32, dtype=np.int32),
    )


@pytest.mark.sim_only
@pytest.mark.breaks_state_contract
def test_contract_checks_can_be_turned_off():
    a = np.ones(32, dtype=np.int32)
    initialised_per_thread[1, 32](a)
    np.testing.assert_array_equal(a, np.arange(1, 33))  # thread 0's state (0) seeds the scan


@cuda.jit
def count_kept(flags, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for base in range(0, flags.shape[0], 64):
        block.load(flags, base, items)
        block.exclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@pytest.mark.sim_only
def test_partial_tile_without_oob_default_reaching_the_callback():
    flags = (np.arange(100) % 3 == 0).astype(np.int32)
    _contract_error(
        count_kept,
        "block.exclusive_sum(items, items, prefix_op=running_total, prefix_state=state)",
        "exclusive_sum: values hold an item that no load filled: item 0 of thread 18 is left "
        "over from an earlier tile: a partial tile was loaded without oob_default=, which leaves "
        "items past the valid range as they are, and the prefix callback takes in the whole "
        "tile's aggregate; pass oob_default= to block.load (the operator's identity: 0 for a "
        "sum, -inf or the dtype's minimum for max)",
        flags,
        np.zeros(1, dtype=np.int64),
    )


@cuda.jit
def count_kept_oob(flags, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    for base in range(0, flags.shape[0], 64):
        block.load(flags, base, items, oob_default=0)
        block.exclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


def test_partial_tile_with_oob_default_counts_right():
    flags = (np.arange(100) % 3 == 0).astype(np.int32)
    total = np.zeros(1, dtype=np.int64)
    count_kept_oob[1, 32](flags, total)
    assert total[0] == flags.sum()


@cuda.jit
def first_tile_unfilled(src, total):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(2, np.int32)
    block.load(src, 0, items)
    block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    if cuda.threadIdx.x == 0:
        total[0] = state[0]


@pytest.mark.sim_only
def test_partial_first_tile_reads_uninitialised_items():
    _contract_error(
        first_tile_unfilled,
        "block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)",
        "inclusive_sum: values hold an item that no load filled: item 0 of thread 5 was never "
        "written (a cuda.local.array starts uninitialised, and block.load leaves items past a "
        "partial tile's valid range as they are), and the prefix callback takes in the whole "
        "tile's aggregate; pass oob_default= to block.load (the operator's identity: 0 for a "
        "sum, -inf or the dtype's minimum for max)",
        np.ones(10, dtype=np.int32),
        np.zeros(1, dtype=np.int64),
    )
