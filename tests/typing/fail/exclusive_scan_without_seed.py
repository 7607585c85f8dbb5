# SPDX-License-Identifier: Apache-2.0
"""An exclusive scan with a non-sum operator needs initial_value= (or prefix_op=)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4


@cuda.jit
def running_max(src: NDArray[np.int32], dst: NDArray[np.int32]) -> None:
    items = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, threads=BLOCK)
    block.exclusive_scan(items, scan_op="max", threads=BLOCK)  # E: arg-type: Argument "scan_op" to "exclusive_scan" has incompatible type "Literal['max']"; expected "Literal['+', 'add', 'sum', 'plus'] | ScanOperator | ufunc | Callable[[signedinteger[_32Bit], signedinteger[_32Bit]], signedinteger[_32Bit]] | NonSumOperatorNeedsInitialValueOrPrefixOp[Never]"
    block.store(dst, base, items, threads=BLOCK)
