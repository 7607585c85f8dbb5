# SPDX-License-Identifier: Apache-2.0
"""Host-side query of a primitive's temp-storage size and alignment."""

from __future__ import annotations

import numpy as np

from ._codegen import provider_symbol, render_scan, render_tile_io
from ._compile import TempStorageLayout, compile_provider
from ._errors import PlanError
from ._plan import ArrayFact, plan_scan, plan_tile_io, resolve_block

__all__ = ["temp_storage_layout"]


#: The simulator has no real device: layouts there are those of this target.
SIMULATOR_CC = (9, 0)


def _default_cc() -> tuple[int, int]:
    from numba import cuda

    from . import _sim_switch

    if _sim_switch.ACTIVE:
        return SIMULATOR_CC

    if not cuda.is_available():
        raise PlanError(
            "temp_storage: no CUDA device to take the compute capability from; "
            "pass cc=(major, minor)"
        )
    major, minor = cuda.get_current_device().compute_capability
    return (int(major), int(minor))


def temp_storage_layout(
    primitive: str,
    dtype: np.dtype,
    threads: int | tuple[int, ...],
    items_per_thread: int,
    *,
    algorithm: str | None,
    cc: tuple[int, int] | None,
) -> TempStorageLayout:
    """(size, alignment) of ``primitive``'s TempStorage, from compiled code."""
    name = f"temp_storage({primitive!r})"
    blk = resolve_block(name, threads, None)
    items = ArrayFact(dtype=dtype, ndim=1, length=items_per_thread)
    target = cc if cc is not None else _default_cc()
    caller = ArrayFact(dtype=np.uint8, ndim=1)
    if primitive == "scan":
        plan = plan_scan(
            function=name,
            values=items,
            out=None,
            mode="inclusive",
            scan_op="+",
            initial_value=None,
            prefix_op=None,
            prefix_state=None,
            block_aggregate=None,
            algorithm=algorithm or "raking",
            temp_storage=caller,
            block=blk,
        )
        symbol = provider_symbol("scan", plan.key)
        source = render_scan(plan)
    elif primitive in ("load", "store"):
        io = plan_tile_io(
            function="load" if primitive == "load" else "store",
            array=ArrayFact(dtype=dtype, ndim=1),
            items=items,
            algorithm=algorithm,
            oob_default=None,
            temp_storage=caller,
            block=blk,
        )
        symbol = provider_symbol(io.direction, io.key)
        source = render_tile_io(io)
    else:
        raise PlanError(
            f"temp_storage: primitive must be 'scan', 'load' or 'store' (got {primitive!r})"
        )
    provider = compile_provider(symbol, source, cc=target)
    return provider.layout
