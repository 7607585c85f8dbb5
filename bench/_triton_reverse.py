# SPDX-License-Identifier: Apache-2.0
"""The Triton contenders of ``bench/reverse_bench.py``, imported only where Triton is.

One program per row walks the row from its end in tiles of ``BLOCK``
elements, aligned at the row's start: the partial tile (masked) first, then
the full tiles (unmasked) from the last to the first. Two tasks:

``suffix_sum``
    int32 suffix sums: ``tl.associative_scan(x, 0, _add, reverse=True)`` of a
    tile plus the carried sum of every tile to the right (int32, wrapping);
    the tile's ``tl.sum`` is added to the carry.
``recurrence``
    ``h[t] = g[t] + a[t+1] * h[t+1]`` (``h[n] = 0``): the (c, g) = (a[t+1],
    g[t]) maps of a tile composed by ``tl.associative_scan((c, g), 0,
    _compose, reverse=True)``; ``h = C * carry + G`` where ``carry`` is the h
    of the first element of the tile to the right (the composition of every
    map to the right applied to ``h[n] = 0``), so only that one float32 is
    carried.

``FLIP=True`` is the other way a Triton user writes a reverse scan (and the
workaround triton-lang/triton#4362 gives for ``reverse=True`` with an operator
that is not commutative): the tile is loaded at reversed offsets (``start +
BLOCK - 1 - lane``) and scanned forward, the results stored at the same
reversed offsets. Both variants are tuned and checked; the benchmark reports
a variant whose results are wrong.

The kernels live at module level so that Triton finds the combine functions
among the kernel's globals.
"""

import triton  # type: ignore[import-not-found, unused-ignore]
import triton.language as tl  # type: ignore[import-not-found, unused-ignore]

__all__ = ["recurrence", "suffix_sum"]


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def _add(a, b):  # type: ignore[no-untyped-def, unused-ignore]
    return a + b


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def _compose(c1, g1, c2, g2):  # type: ignore[no-untyped-def, unused-ignore]
    # (c1, g1) is applied first (the map to the right), then (c2, g2)
    return c1 * c2, c2 * g1 + g2


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def _suffix_tile(
    src, dst, start, cols, carry, BLOCK: tl.constexpr, FULL: tl.constexpr, FLIP: tl.constexpr
):  # type: ignore[no-untyped-def, unused-ignore]
    lane = tl.arange(0, BLOCK)
    if FLIP:  # noqa: SIM108 (an if statement on a constexpr, as Triton kernels write it)
        offs = start + (BLOCK - 1) - lane
    else:
        offs = start + lane
    if FULL:  # noqa: SIM108
        x = tl.load(src + offs)
    else:
        x = tl.load(src + offs, mask=offs < cols, other=0)
    if FLIP:  # noqa: SIM108
        y = tl.associative_scan(x, 0, _add)
    else:
        y = tl.associative_scan(x, 0, _add, reverse=True)
    y = y + carry
    if FULL:
        tl.store(dst + offs, y)
    else:
        tl.store(dst + offs, y, mask=offs < cols)
    return carry + tl.sum(x, axis=0).to(carry.dtype)


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def suffix_sum(src, dst, cols, BLOCK: tl.constexpr, FLIP: tl.constexpr):  # type: ignore[no-untyped-def, unused-ignore]
    row = tl.program_id(0).to(tl.int64)
    row_src = src + row * cols
    row_dst = dst + row * cols
    carry = tl.zeros((), dtype=tl.int32)
    full = cols // BLOCK * BLOCK
    if full < cols:
        carry = _suffix_tile(row_src, row_dst, full, cols, carry, BLOCK, False, FLIP)
    for k in range(full // BLOCK):
        start = full - (k + 1) * BLOCK
        carry = _suffix_tile(row_src, row_dst, start, cols, carry, BLOCK, True, FLIP)


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def _recurrence_tile(
    a, g, h, start, cols, carry, BLOCK: tl.constexpr, FULL: tl.constexpr, FLIP: tl.constexpr
):  # type: ignore[no-untyped-def, unused-ignore]
    lane = tl.arange(0, BLOCK)
    if FLIP:  # noqa: SIM108
        offs = start + (BLOCK - 1) - lane
    else:
        offs = start + lane
    # c[t] = a[t+1]; 1.0 past the row (c[n-1] multiplies h[n] = 0: any value does)
    c = tl.load(a + offs + 1, mask=offs + 1 < cols, other=1.0)
    if FULL:  # noqa: SIM108
        gv = tl.load(g + offs)
    else:
        gv = tl.load(g + offs, mask=offs < cols, other=0.0)
    if FLIP:
        cc, gg = tl.associative_scan((c, gv), 0, _compose)
    else:
        cc, gg = tl.associative_scan((c, gv), 0, _compose, reverse=True)
    hv = cc * carry + gg
    if FULL:
        tl.store(h + offs, hv)
    else:
        tl.store(h + offs, hv, mask=offs < cols)
    # the tile's first element's h: the next tile's carry
    first = BLOCK - 1 if FLIP else 0
    return tl.sum(tl.where(lane == first, hv, 0.0), axis=0)


@triton.jit  # type: ignore[untyped-decorator, unused-ignore]
def recurrence(a, g, h, cols, BLOCK: tl.constexpr, FLIP: tl.constexpr):  # type: ignore[no-untyped-def, unused-ignore]
    row = tl.program_id(0).to(tl.int64)
    row_a = a + row * cols
    row_g = g + row * cols
    row_h = h + row * cols
    carry = tl.zeros((), dtype=tl.float32)  # h[n] = 0
    full = cols // BLOCK * BLOCK
    if full < cols:
        carry = _recurrence_tile(row_a, row_g, row_h, full, cols, carry, BLOCK, False, FLIP)
    for k in range(full // BLOCK):
        start = full - (k + 1) * BLOCK
        carry = _recurrence_tile(row_a, row_g, row_h, start, cols, carry, BLOCK, True, FLIP)
