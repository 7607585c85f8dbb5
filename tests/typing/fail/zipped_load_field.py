# SPDX-License-Identifier: Apache-2.0
"""A load from a tuple of arrays fills every field: it takes no field=."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

THREADS = 32
ITEMS = 4
pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@cuda.jit
def load_b(a: NDArray[np.float32], b: NDArray[np.float32]) -> None:
    items = cuda.local.array(ITEMS, pair)
    block.load((a, b), 0, items, field="b", threads=THREADS)  # E: call-overload: No overload variant of "load" matches argument types
