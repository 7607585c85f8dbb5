# SPDX-License-Identifier: Apache-2.0
"""Kernel bodies using block reduce, for either front end's ``cuda`` module (compile tests)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from scan import block

#: The (value, position) record the argmax reduces.
REC = np.dtype([("v", np.float32), ("i", np.int32)])


def kernels(cuda: ModuleType) -> tuple[Any, Any]:
    """(row_stats, argmax): Python functions for `cuda.jit`, written against `cuda`.

    ``row_stats(src, out)``: a sum accumulated in float64 (``dtype=``), a max
    with ``valid=`` and a raking min of a scalar in thread 0 only
    (``broadcast=False``), over 2-D ``src``. ``argmax(src, out)``: a
    reduce of :data:`REC` records with a device function as the operator.
    """

    @cuda.jit(device=True)
    def pick(a: Any, b: Any) -> Any:
        return a if a[0] >= b[0] else b

    def row_stats(src: Any, out: Any) -> None:
        items = cuda.local.array(4, np.float32)
        row = src[cuda.blockIdx.x]
        block.load(row, 0, items, oob_default=0.0)
        total = block.sum(items, dtype=np.float64)
        top = block.reduce(items, "max", valid=row.shape[0])
        x = block.reduce(row[cuda.threadIdx.x], "min", algorithm="raking", broadcast=False)
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = total + top + x

    def argmax(src: Any, out: Any) -> None:
        items = cuda.local.array(2, REC)
        for j in range(2):
            t = cuda.threadIdx.x * 2 + j
            items[j].v = src[t]
            items[j].i = t
        best = block.reduce(items, pick)
        if cuda.threadIdx.x == 0:
            out[0] = best.i

    return row_stats, argmax
