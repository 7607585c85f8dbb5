# SPDX-License-Identifier: Apache-2.0
"""Host execution of the generated CUDA C++: the CUB shim's harnesses, kernels and cases.

The C++ side is ``include/`` (the shim's headers: CUDA's keywords and
intrinsics, CUB's block and warp primitives, the harness's I/O) and
``src/runtime.cpp`` (fibers, barriers, checked shared memory). The Python
side writes, builds and runs harnesses: :mod:`~hostexec.toolchain` (the
compiler, builds), :mod:`~hostexec.units` (the generated units),
:mod:`~hostexec.corpus` (the callbacks), :mod:`~hostexec.program` (calls
through the operand tables, runs), :mod:`~hostexec.kernels`,
:mod:`~hostexec.families`, :mod:`~hostexec.lookback` (the kernels and their
NumPy references), :mod:`~hostexec.suite` (the cases) and ``audit.py`` (the
planted-bug audit). docs/gpu-testing.md says what the shim models.
"""
