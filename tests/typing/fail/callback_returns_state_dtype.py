# SPDX-License-Identifier: Apache-2.0
"""The callback returns the value type (int32), not the state type (int64)."""

import numpy as np
from numba import cuda
from numpy.typing import NDArray

import statefn
from scan import block

BLOCK = 128
ITEMS = 4


@statefn.stateful(np.int64)
def running_total(state: NDArray[np.int64], block_aggregate: np.int32) -> np.int32:
    prefix: np.int64 = state[0]
    state[0] = prefix + block_aggregate
    return prefix  # E: return-value: Incompatible return value type (got "signedinteger[_64Bit]", expected "signedinteger[_32Bit]")
