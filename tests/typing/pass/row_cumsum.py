# SPDX-License-Identifier: Apache-2.0
"""Row-wise cumulative sum, tile by tile, with a running total carried in int64."""

from collections.abc import Callable

import numpy as np
from numba import cuda
from numba.cuda import types
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


# magictoken.typed_kernel.begin
@statefn.stateful(np.int64)
def running_total(state: NDArray[np.int64], block_aggregate: np.int32) -> np.int32:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return np.int32(prefix)


@cuda.jit
def row_cumsum(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    row = cuda.blockIdx.x
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(ITEMS, np.int32)
    for base in range(0, src.shape[1], BLOCK * ITEMS):
        block.load(src[row], base, items, oob_default=0, threads=BLOCK)
        block.inclusive_sum(
            items, items, prefix_op=running_total, prefix_state=state, threads=BLOCK
        )
        block.store(dst[row], base, items, threads=BLOCK)


# magictoken.typed_kernel.end


def main() -> None:
    host = np.arange(4 * 10_000, dtype=np.int32).reshape(4, 10_000)
    d_src = cuda.to_device(host)
    d_dst = cuda.device_array_like(d_src)
    row_cumsum[host.shape[0], BLOCK](d_src, d_dst)
    out: NDArray[np.int32] = d_dst.copy_to_host()
    assert (out == np.cumsum(host, axis=1)).all()


_ROWS = types.Array(types.int32, 2, "C")
KERNELS: list[tuple[Callable[..., None], tuple[types.Type, ...]]] = [
    (row_cumsum.py_func, (_ROWS, _ROWS)),
]
