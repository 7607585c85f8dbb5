# SPDX-License-Identifier: Apache-2.0
# numba_cuda_mlir: kernels import its `cuda` module, typed as numba-cuda's kernel side.
from . import cuda as cuda
