# SPDX-License-Identifier: Apache-2.0
"""One array of a field's dtype takes record items only with field= naming the field."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

THREADS = 32
ITEMS = 4
pair = np.dtype([("a", np.float32), ("b", np.float32)], align=True)


@cuda.jit
def store_b(a: NDArray[np.float32], b: NDArray[np.float32], h: NDArray[np.float32]) -> None:
    items = cuda.local.array(ITEMS, pair)
    block.load((a, b), 0, items, threads=THREADS)
    block.store(h, 0, items, threads=THREADS)  # E: arg-type: Argument 3 to "store" has incompatible type "_ShapedNDArray[tuple[int], dtype[void]]"
