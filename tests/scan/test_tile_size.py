# SPDX-License-Identifier: Apache-2.0
"""block.tile_size compiled: a constant from the launch's block shape and the items array.

Both front ends fold it when the kernel is typed (the PTX holds the product
as an immediate) and refuse what they cannot know with the simulator's words.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

import scan
import statefn
from scan import block

pytestmark = pytest.mark.nvrtc

ARRAY_2D = types.Array(types.int32, 2, "C")


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def sizes(out: Any) -> None:
    items = cuda.local.array(8, np.int32)
    out[0] = block.tile_size(items)
    out[1] = block.tile_size(3, threads=(96, 1))


def test_tile_size_is_a_constant_of_the_launch() -> None:
    # numba-cuda's typing is not loaded under the simulator: imported here, not at collection
    from scan._numba_cuda._typing import assume_block

    with assume_block((96, 1, 1)):
        ptx, _ = cuda.compile_ptx(sizes, "void(int64[::1])", cc=(9, 0))
    immediates = [line.split()[-1] for line in ptx.splitlines() if "mov.u64" in line]
    assert "768;" in immediates  # 96 threads x 8 items
    assert "288;" in immediates  # 96 threads x 3 items


def test_readme_kernel_links() -> None:
    from doc_examples.examples.quickstart import row_cumsum

    cubin = scan.compile(row_cumsum, (ARRAY_2D, ARRAY_2D), cc=(9, 0), block=256)
    assert cubin[:4] == b"\x7fELF"


@cuda.jit
def size_of_a_global_array(src: Any, dst: Any) -> None:
    dst[0, 0] = block.tile_size(src[0])


def test_unknown_items_per_thread_is_refused() -> None:
    with pytest.raises(scan.PlanError) as info:
        scan.compile(size_of_a_global_array, (ARRAY_2D, ARRAY_2D), cc=(9, 0), block=256)
    assert str(info.value).endswith(
        "tile_size: cannot tell how many items each thread holds: items is not a "
        "cuda.local.array of literal length in this kernel, nor a literal int; pass the "
        "items array of the tile's block.load, or the items per thread: block.tile_size(8)"
    )


def test_numba_cuda_mlir_folds_it_too() -> None:
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed")
    from numba_cuda_mlir import cuda as mlir_cuda
    from numba_cuda_mlir.numba_cuda import types as mlir_types

    def mlir_row_cumsum(src: Any, dst: Any) -> None:
        state = mlir_cuda.local.array(1, np.int64)
        state[0] = 0
        items = mlir_cuda.local.array(8, np.int32)
        for base in range(0, src.shape[1], block.tile_size(items)):
            block.load(src[mlir_cuda.blockIdx.x], base, items, oob_default=0)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
            block.store(dst[mlir_cuda.blockIdx.x], base, items)

    def mlir_global_array(src: Any, dst: Any) -> None:
        dst[0, 0] = block.tile_size(src[0])

    array = mlir_types.Array(mlir_types.int32, 2, "C")
    cubin = scan.compile(mlir_cuda.jit(mlir_row_cumsum), (array, array), cc=(9, 0), block=256)
    assert cubin[:4] == b"\x7fELF"
    with pytest.raises(scan.PlanError) as info:
        scan.compile(mlir_cuda.jit(mlir_global_array), (array, array), cc=(9, 0), block=256)
    assert str(info.value).endswith("the items per thread: block.tile_size(8)")
