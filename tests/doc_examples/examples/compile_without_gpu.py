# SPDX-License-Identifier: Apache-2.0
"""The quickstart's kernel compiled and linked for sm_90 without a GPU (docs/quickstart.md)."""

from __future__ import annotations

import scan
from doc_examples.examples.quickstart import THREADS, row_cumsum

# magictoken.compile_without_gpu.begin
cubin = scan.compile(
    row_cumsum, "void(int32[:, ::1], int32[:, ::1])", cc=(9, 0), block=THREADS
)  # the launch's block shape
objects = scan.compile(
    row_cumsum, "void(int32[:, ::1], int32[:, ::1])", cc=(9, 0), block=THREADS, output="ltoir"
)  # every LTO-IR object, the kernel's first
# magictoken.compile_without_gpu.end
