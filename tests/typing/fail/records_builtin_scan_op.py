# SPDX-License-Identifier: Apache-2.0
"""The built-in operators are not defined on records: scan_op="max" on (value, pos) records."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

BLOCK = 128
ITEMS = 4
VI = np.dtype([("value", np.float32), ("pos", np.int32)], align=True)


@cuda.jit
def running_max(src: NDArray[np.void], dst: NDArray[np.void]) -> None:
    items = cuda.local.array(ITEMS, VI)
    base = cuda.blockIdx.x * BLOCK * ITEMS
    block.load(src, base, items, threads=BLOCK)
    block.inclusive_scan(items, scan_op="max", threads=BLOCK)  # E: call-overload: No overload variant of "inclusive_scan" matches
    block.store(dst, base, items, threads=BLOCK)
