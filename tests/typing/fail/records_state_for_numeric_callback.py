# SPDX-License-Identifier: Apache-2.0
"""A record state array passed to a callback declared with float32 state."""

from typing import Any

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


def compose(x: Any, y: Any) -> tuple[Any, Any]:
    return (x.a * y.a, y.a * x.b + y.b)


@statefn.stateful(np.float32)  # meant: statefn.stateful(PAIR)
def carry_map(state: NDArray[np.float32], block_aggregate: Any) -> tuple[Any, Any]:
    return (state[0], state[0])


@cuda.jit
def selective_scan(ab: NDArray[np.void], h: NDArray[np.void]) -> None:
    state = cuda.local.array(1, PAIR)
    state[0].a = 1.0
    state[0].b = 0.0
    items = cuda.local.array(ITEMS, PAIR)
    for base in range(0, ab.shape[0], BLOCK * ITEMS):
        block.load(ab, base, items, oob_default=(1.0, 0.0), threads=BLOCK)
        block.inclusive_scan(items, items, scan_op=compose, prefix_op=carry_map, prefix_state=state, threads=BLOCK)  # E: arg-type: Argument "prefix_state" to "inclusive_scan" has incompatible type "_ShapedNDArray[tuple[int], dtype[void]]"; expected "ndarray[tuple[int], dtype[floating[_32Bit]]] | generic[Callable[[], floating[_32Bit]]]"
        block.store(h, base, items, threads=BLOCK)
