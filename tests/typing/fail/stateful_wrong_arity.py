# SPDX-License-Identifier: Apache-2.0
"""A stateful callback takes (state, block_aggregate); this one forgot the aggregate."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.int64)  # E: arg-type: Argument 1 to "__call__" of "_StatefulDecorator" has incompatible type
def running_total(state: NDArray[np.int64]) -> np.int32:
    prefix = state[0]
    state[0] = prefix + 1
    return np.int32(prefix)
