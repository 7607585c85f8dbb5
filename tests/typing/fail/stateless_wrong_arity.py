# SPDX-License-Identifier: Apache-2.0
"""A stateless callback takes only the block aggregate."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateless  # E: arg-type: Argument 1 to "stateless" has incompatible type
def shifted(block_aggregate: np.int32, shift: np.int32) -> np.int32:
    return block_aggregate + shift
