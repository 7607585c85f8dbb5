# SPDX-License-Identifier: Apache-2.0
"""warp.tiles steps by a logical warp's tile: it takes lanes=, not a block's threads=."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

from scan import warp

@cuda.jit
def kernel(src: NDArray[np.float32]) -> None:
    items = cuda.local.array(4, np.float32)
    for base in warp.tiles(src.shape[0], items, threads=64):  # E: call-arg: Unexpected keyword argument "threads" for "tiles"
        warp.load(src, base, items)
