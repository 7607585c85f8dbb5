# SPDX-License-Identifier: Apache-2.0
# The kernel side of numba_cuda_mlir.cuda mirrors numba.cuda's: one set of types for both
# front ends, so the same kernel body type-checks (and the same mistakes fail) under either.
from numba.cuda import *
from numba.cuda import launchconfig as launchconfig
from numba.cuda import types as types
