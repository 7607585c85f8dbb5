# SPDX-License-Identifier: Apache-2.0
"""The registry of primitive families: each call and plan to its :class:`~scan._spec.Primitive`.

Adding a family is a module of its own here (its calls, planner, operand
ABI, renderer and simulator semantics) and one line in :data:`PRIMITIVES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._spec import EntryPoint, Primitive
from . import adjacent_difference, block_reduce, block_scan, flag_heads, tile_io, warp_io, warp_scan

__all__ = ["CALLS", "PRIMITIVES", "for_call", "for_layout", "for_plan", "module_calls"]

#: Every family, in the order of their functions in ``block.pyi`` (then ``warp.pyi``).
PRIMITIVES: tuple[Primitive, ...] = (
    tile_io.SPEC,
    block_scan.SPEC,
    block_reduce.SPEC,
    adjacent_difference.SPEC,
    flag_heads.SPEC,
    warp_scan.SPEC,
    warp_io.SPEC,
)

_BY_CALL: Mapping[str, Primitive] = MappingProxyType(
    {entry.key: spec for spec in PRIMITIVES for entry in spec.calls}
)
_BY_PLAN: Mapping[type, Primitive] = MappingProxyType({s.plan_type: s for s in PRIMITIVES})
_BY_LAYOUT: Mapping[str, Primitive] = MappingProxyType(
    {name: spec for spec in PRIMITIVES for name in spec.layout_names}
)

#: Every entry point, by key (:attr:`~scan._spec.EntryPoint.key`: the name of a
#: :mod:`scan.block` function, ``<module>.<name>`` for another module's).
CALLS: Mapping[str, EntryPoint] = MappingProxyType(
    {entry.key: entry for spec in PRIMITIVES for entry in spec.calls}
)
if len(CALLS) != sum(len(spec.calls) for spec in PRIMITIVES):
    raise ValueError("two families declare an entry point of the same module and name")


def for_call(key: str) -> Primitive:
    """The family of entry point `key`."""
    return _BY_CALL[key]


def module_calls(module: str) -> dict[str, EntryPoint]:
    """The entry points of :mod:`scan.<module>`, by function name."""
    return {e.name: e for e in CALLS.values() if e.module == module}


def for_plan(plan: Any) -> Primitive:
    """The family that made `plan`."""
    return _BY_PLAN[type(plan)]


def for_layout(primitive: str) -> Primitive | None:
    """The family answering ``temp_storage(primitive, ...)``, if any."""
    return _BY_LAYOUT.get(primitive)
