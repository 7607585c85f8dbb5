# SPDX-License-Identifier: Apache-2.0
"""reverse= of block.tiles is a bool."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import block

@cuda.jit
def kernel(src: NDArray[np.float32]) -> None:
    items = cuda.local.array(4, np.float32)
    for base in block.tiles(src.shape[0], items, reverse="yes"):  # E: arg-type: Argument "reverse" to "tiles" has incompatible type "str"
        block.load(src, base, items)
