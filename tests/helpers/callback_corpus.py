# SPDX-License-Identifier: Apache-2.0
"""One corpus of accepted and refused callbacks, run by both backends.

The simulator and the compiled path must agree: everything the simulator
runs compiles, and everything it refuses is refused compiled, with the same
exception and words. ``tests/scan/test_callback_parity.py`` compiles every
kernel for cc 9.0 without a GPU; ``tests/sim/test_sim_contract.py`` runs them
in the simulator (and on a GPU with ``SCAN_TESTS_BACKEND=gpu``).

Every kernel takes ``(a, s)``: an int32 array of 32 items and an int64 array
of one item; it is launched with one block of 32 threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import statefn
from scan import block


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.int64)
class RunningTotal:
    """The reference design's functor: ``self`` is the state cell."""

    def __call__(self, block_aggregate):
        prefix = self[0]
        self[0] = prefix + block_aggregate
        return prefix


class SeedRunningTotal:
    """The same, spelled as the seed does (``self_ptr``), declared without a decorator."""

    def __call__(self_ptr, block_aggregate):  # noqa: N805 - the seed's spelling
        prefix = self_ptr[0]
        self_ptr[0] = prefix + block_aggregate
        return prefix


seed_running_total = statefn.StatefulFunction(SeedRunningTotal, np.int64)


def zero(block_aggregate):
    return 0


ZERO = lambda block_aggregate: 0  # noqa: E731 - the spelling under test


def larger(a, b):
    return a if a > b else b


def three_operands(a, b, c):
    return a


SEEN: list[Any] = []


@statefn.stateful(np.int64)
def logging_total(state, block_aggregate):
    SEEN.append(block_aggregate)
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def plain_prefix(a, s):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_sum(a[i], prefix_op=zero, threads=32)


def lambda_prefix(a, s):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_sum(a[i], prefix_op=ZERO, threads=32)


def plain_scan_op(a, s):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_scan(a[i], scan_op=larger, threads=32)


def functor_class(a, s):
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    a[i] = block.inclusive_sum(a[i], prefix_op=RunningTotal, prefix_state=state, threads=32)
    if i == 0:
        s[0] = state[0]


def seed_functor(a, s):
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    a[i] = block.inclusive_sum(a[i], prefix_op=seed_running_total, prefix_state=state, threads=32)
    if i == 0:
        s[0] = state[0]


def shared_state(a, s):
    i = cuda.threadIdx.x
    state = cuda.shared.array(1, np.int64)
    state[0] = 0
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state, threads=32)


def global_state(a, s):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=s, threads=32)


def wrong_arity_scan_op(a, s):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_scan(a[i], scan_op=three_operands, threads=32)


def python_object_callback(a, s):
    i = cuda.threadIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    a[i] = block.inclusive_sum(a[i], prefix_op=logging_total, prefix_state=state, threads=32)


def _state_message(where: str) -> str:
    return (
        f"inclusive_sum: prefix_state is {where}, one cell that every thread of the block "
        "sees, but the state is per thread: each calling lane of the callback updates its own "
        "copy (up to 32 lanes would update this one cell); allocate cuda.local.array(1, "
        "np.int64) and initialise it in every thread"
    )


#: (kernel, what the kernel computes into ``a`` from ``arange(32)`` and into ``s``)
ACCEPTED: dict[str, tuple[Any, Any, int]] = {
    "plain_prefix": (plain_prefix, np.cumsum(np.arange(32)), -1),
    "lambda_prefix": (lambda_prefix, np.cumsum(np.arange(32)), -1),
    "plain_scan_op": (plain_scan_op, np.arange(32), -1),
    "functor_class": (functor_class, np.cumsum(np.arange(32)), int(np.arange(32).sum())),
    "seed_functor": (seed_functor, np.cumsum(np.arange(32)), int(np.arange(32).sum())),
}

#: (kernel, exception class name, a text its message contains)
REFUSED: dict[str, tuple[Any, str, str]] = {
    "shared_state": (shared_state, "ScanTypeError", _state_message("a cuda.shared.array")),
    "global_state": (
        global_state,
        "ScanTypeError",
        _state_message("a global-memory array (a kernel argument)"),
    ),
    "wrong_arity_scan_op": (
        wrong_arity_scan_op,
        "ArityError",
        "scan operator helpers.callback_corpus.three_operands cannot be called as op(a, b): "
        "expected exactly 2 required positional parameters; got 3 (a, b, c). Parameters "
        "beyond those must have defaults.",
    ),
    "python_object_callback": (
        python_object_callback,
        "CallbackCompileError",
        "could not compile stateful callback helpers.callback_corpus.logging_total for value "
        "dtype int32, state dtype int64 (cc 9.0): TypingError:",
    ),
}

#: The compiler's own reason for the Python-object callback (in both messages; how
#: numba describes the list itself depends on what it holds by then).
PYTHON_OBJECT_REASON = "Untyped global name 'SEEN'"
