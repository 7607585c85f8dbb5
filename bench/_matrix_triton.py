# SPDX-License-Identifier: Apache-2.0
"""The Triton row-scan kernel of ``bench/matrix.py``, imported only where Triton is.

One program per row walks the row in tiles of ``BLOCK`` elements; each tile is
scanned with ``tl.cumsum`` (``ASSOC=False``) or ``tl.associative_scan`` with an
add combine (``ASSOC=True``), the carried total of the earlier tiles is added,
and the tile's ``tl.sum`` is added to the carry (of the value dtype, as in
``bench/triton_rowscan.py``). The kernels live at module level so that Triton
finds the combine function among the kernel's globals, and so that the
processes that fill Triton's cache and the timing process compile the same
source (the same cache keys).
"""

import triton  # type: ignore[import-not-found, unused-ignore]
import triton.language as tl  # type: ignore[import-not-found, unused-ignore]

__all__ = ["row_cumsum"]


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def _add(a, b):  # type: ignore[no-untyped-def, unused-ignore]
    return a + b


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def row_cumsum(src, dst, cols, BLOCK: tl.constexpr, EVEN: tl.constexpr, ASSOC: tl.constexpr):  # type: ignore[no-untyped-def, unused-ignore]
    row = tl.program_id(0).to(tl.int64)
    row_src = src + row * cols
    row_dst = dst + row * cols
    carry = tl.zeros((), dtype=dst.dtype.element_ty)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        if EVEN:  # noqa: SIM108 (an if statement on a constexpr, as Triton kernels write it)
            x = tl.load(row_src + offs)
        else:
            x = tl.load(row_src + offs, mask=offs < cols, other=0)
        if ASSOC:  # noqa: SIM108
            y = tl.associative_scan(x, 0, _add)
        else:
            y = tl.cumsum(x, axis=0)
        y = y + carry
        if EVEN:
            tl.store(row_dst + offs, y)
        else:
            tl.store(row_dst + offs, y, mask=offs < cols)
        carry += tl.sum(x, axis=0).to(carry.dtype)
