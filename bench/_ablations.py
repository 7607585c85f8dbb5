# SPDX-License-Identifier: Apache-2.0
"""Compiling the project's kernels with parts of the generated code or the lowering changed.

Shared by ``codegen_ablation``, ``mlir_ablation``, ``mlir_cold_compile`` and
``resource_usage``:

- :func:`items_first`, :func:`plus`: two choices of the block scan's generated code for integer
  scans (the thread's items scanned first or after the block scan; ``+`` given to
  CUB as ``::cuda::std::plus<>`` or as the unit's functor);
- :func:`mlir_kernel`, :func:`mlir_variant`: the default row kernel under
  numba-cuda-mlir and the variants of its lowering (``mlir``, ``mlir_no_bounds``,
  ``mlir_own_units``, ``mlir_launch_bounds``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import _matrix_kernels

import scan._primitives.block_scan._unit as block_scan_unit


def _forget_units() -> None:
    """Drop this process's memo of compiled units and their link objects (both by
    name, and the two orders give units of the same name); the disk cache is keyed
    by the generated source, so each order finds its own."""
    from scan import _build
    from scan._numba_cuda import _lowering

    _build._units.clear()
    _lowering._LINK_OBJECTS._objects.clear()


@contextlib.contextmanager
def _compiled_with(**patches: Any) -> Iterator[None]:
    """Compile with these attributes of ``scan._primitives.block_scan._unit`` replaced."""
    originals = {name: getattr(block_scan_unit, name) for name in patches}
    _forget_units()
    for name, value in patches.items():
        setattr(block_scan_unit, name, value)
    try:
        yield
    finally:
        for name, value in originals.items():
            setattr(block_scan_unit, name, value)
        _forget_units()


def items_first(enabled: bool) -> contextlib.AbstractContextManager[None]:
    """Compile with the thread's items scanned first, as the library does, or after
    them (CUB's order)."""
    return _compiled_with() if enabled else _compiled_with(thread_items_first=lambda plan: False)


def plus(enabled: bool) -> contextlib.AbstractContextManager[None]:
    """Compile with ``+`` given to CUB as ``::cuda::std::plus<>`` (also at the shapes of
    ``OWN_PLUS``) or as the unit's functor."""
    if enabled:
        return _compiled_with(OWN_PLUS=frozenset())
    return _compiled_with(cub_plus=lambda plan: False)


def _forget_mlir_units() -> None:
    """Drop this process's memo of compiled units and link objects: the variants
    give units of the same names, the disk cache is keyed by their sources."""
    from scan import _build
    from scan._numba_cuda_mlir import _lowering

    _build._units.clear()
    _lowering._LINK_OBJECTS._objects.clear()


def mlir_kernel(name: str, dtype: str, threads: int, items: int) -> Any:
    """The default row kernel of numba-cuda-mlir variant `name` (compiled inside ``variant``)."""
    bounds = (threads, 2048 // threads) if name == "mlir_launch_bounds" else None
    return _matrix_kernels.make_mlir_kernel(dtype, threads, items, launch_bounds=bounds)


@contextlib.contextmanager
def mlir_variant(name: str) -> Iterator[None]:
    """Compile numba-cuda-mlir kernels with the named part of the lowering off."""
    from scan._numba_cuda_mlir import _lowering
    from scan._numba_cuda_mlir._typing import KERNEL_GROUPS

    bounds = _lowering._Call._declare_launch_bounds
    _forget_mlir_units()
    if name == "mlir_no_bounds":
        _lowering._Call._declare_launch_bounds = lambda self: None  # type: ignore[method-assign]
    elif name == "mlir_own_units":
        KERNEL_GROUPS.take = list  # type: ignore[method-assign]  # no kernel's other calls
    try:
        yield
    finally:
        _lowering._Call._declare_launch_bounds = bounds  # type: ignore[method-assign]
        vars(KERNEL_GROUPS).pop("take", None)
        _forget_mlir_units()
