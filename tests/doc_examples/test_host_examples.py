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


def test_keys():
    from doc_examples.examples import callbacks

    callbacks.keys()


def test_raking_threads_formula():
    from doc_examples.examples import state_contract as sc

    table = {1: 1, 7: 7, 32: 32, 33: 17, 48: 24, 62: 31, 64: 32, 96: 32, 100: 25, 128: 32}
    for threads, callers in table.items():
        assert sc.raking_threads(threads) == callers
