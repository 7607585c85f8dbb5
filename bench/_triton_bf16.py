# SPDX-License-Identifier: Apache-2.0
"""The Triton contender of bench/bf16_rowscan.py: bfloat16 rows, float32 running sums.

One program per row walks the row in tiles of ``BLOCK`` elements: each tile is
loaded as bfloat16 and converted to float32 (``tl.load(...).to(tl.float32)``),
scanned with ``tl.cumsum``, the carried float32 total of the earlier tiles is
added, and the sums are stored as bfloat16 (``.to(tl.bfloat16)``: to nearest,
ties to even); the tile's ``tl.sum`` joins the carry. What a Triton user
writes for a long-row running total of bfloat16 data with float32
accumulation. Imported only where triton imports.
"""

from __future__ import annotations

import triton  # type: ignore[import-not-found, unused-ignore]
import triton.language as tl  # type: ignore[import-not-found, unused-ignore]


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def bf16_cumsum(src, dst, cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):  # type: ignore[no-untyped-def, unused-ignore]
    row = tl.program_id(0).to(tl.int64)
    row_src = src + row * cols
    row_dst = dst + row * cols
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        if EVEN:
            x = tl.load(row_src + offs).to(tl.float32)
        else:
            x = tl.load(row_src + offs, mask=offs < cols, other=0.0).to(tl.float32)
        y = (tl.cumsum(x, axis=0) + carry).to(tl.bfloat16)
        if EVEN:
            tl.store(row_dst + offs, y)
        else:
            tl.store(row_dst + offs, y, mask=offs < cols)
        carry += tl.sum(x, axis=0)
