# SPDX-License-Identifier: Apache-2.0
"""How a refused call looks in a kernel (docs/errors.md)."""

from __future__ import annotations

import numpy as np
from numba import cuda

import statefn
from scan import block


@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


# magictoken.error_in_kernel.begin
@cuda.jit
def forgot_the_state(a):
    i = cuda.threadIdx.x
    a[i] = block.inclusive_sum(a[i], prefix_op=running_total, threads=32)


# magictoken.error_in_kernel.end
