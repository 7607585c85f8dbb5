# SPDX-License-Identifier: Apache-2.0
"""Run the documentation's host-side examples (declarations, keys)."""

from __future__ import annotations

import numpy as np

import statefn


def test_declarations():
    from doc_examples.examples import callbacks

    assert isinstance(callbacks.running_total, statefn.StatefulFunction)
    assert callbacks.running_total.state_dtype == np.dtype(np.int64)
    assert isinstance(callbacks.offset, statefn.StatelessFunction)
    assert isinstance(callbacks.larger, statefn.ScanOperator)
    assert not callbacks.larger.is_builtin


def test_host_calls():
    from doc_examples.examples import callbacks

    callbacks.host_calls()
    # the example's own asserts, checked here too (python -O drops those)
    state = np.zeros(1, dtype=np.int64)
    assert callbacks.running_total(state, 5) == 0
    assert callbacks.running_total(state, 3) == 5
    assert state[0] == 8
    assert callbacks.larger(2, 7) == 7


def test_keys():
    from doc_examples.examples import callbacks

    make = callbacks.keys()
    assert make(100) == make(100)
    assert make(100).key != make(200).key
    assert make(100).key != make(100).with_state_dtype(np.int64).key


def test_raking_threads_formula():
    from doc_examples.examples import state_contract as sc

    table = {1: 1, 7: 7, 32: 32, 33: 17, 48: 24, 62: 31, 64: 32, 96: 32, 100: 25, 128: 32}
    for threads, callers in table.items():
        assert sc.raking_threads(threads) == callers


def test_launch_shape_query():
    from doc_examples.examples import launch_shape as ls
    from scan import block

    # the values the page's comments show
    assert block.launch_shape(2048, np.int32) == (128, 8)
    assert block.launch_shape(65536, np.int32) == (256, 4)
    assert block.launch_shape(65536, np.float64) == (256, 8)
    assert (ls.THREADS, ls.ITEMS) == (128, 8)
