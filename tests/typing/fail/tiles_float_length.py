# SPDX-License-Identifier: Apache-2.0
"""block.tiles takes the row's length as an integer, not a float."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

@cuda.jit
def kernel(src: NDArray[np.float32]) -> None:
    items = cuda.local.array(4, np.float32)
    for base in block.tiles(float(src.shape[0]), items):  # E: arg-type: Argument 1 to "tiles" has incompatible type "float"
        block.load(src, base, items)
