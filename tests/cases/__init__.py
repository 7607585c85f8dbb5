# SPDX-License-Identifier: Apache-2.0
"""Backend-neutral test case definitions (kernels, inputs, NumPy references).

The same definitions run under the CUDA simulator (``tests/sim``) and on a GPU
(``tests/gpu``).
"""
