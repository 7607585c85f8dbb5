# SPDX-License-Identifier: Apache-2.0
"""The generated providers of a kernel, as the build compiles them, made host-ready.

:func:`kernel_unit` takes the plans of a kernel's calls and returns the C++
the library compiles for them with NVRTC: the unit of the group a front end
forms (:func:`scan._build.provider_group`, :func:`scan._build.group_source`),
or a single provider's own unit. The only change made to it for the host is
:func:`rewrite_shared`: each ``__shared__`` declaration becomes the block's
checked object of the runtime (the host has no per-block storage class).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from scan._build import group_source, provider_group, provider_source

__all__ = ["SHARED", "KernelUnit", "kernel_unit", "rewrite_shared"]

#: ``__shared__ <type> <name>[<n>]...;``: every form the generator writes.
SHARED = re.compile(r"__shared__\s+([A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)((?:\s*\[\s*\d+\s*\])*)\s*;")


class KernelUnit:
    """A kernel's providers: the unit's source and each plan's entry point in it."""

    def __init__(self, source: str, symbols: dict[str, str], plans: Sequence[Any]) -> None:
        self.source = source
        self.symbols = symbols
        self.plans = tuple(plans)

    def symbol(self, plan: Any) -> str:
        """`plan`'s entry point in the unit."""
        return self.symbols[plan.symbol]


def kernel_unit(plans: Sequence[Any]) -> KernelUnit:
    """The unit the library compiles for a kernel whose calls have `plans`."""
    group = provider_group(plans[0], plans)
    if len(group) == 1:
        (plan,) = group
        return KernelUnit(provider_source(plan), {plan.symbol: plan.symbol}, group)
    _, source, locals_ = group_source(group)
    return KernelUnit(
        source, {p.symbol: local for p, local in zip(group, locals_, strict=True)}, group
    )


def rewrite_shared(source: str, first_site: int = 1) -> tuple[str, int]:
    """`source` with each ``__shared__`` declaration made a checked per-block object.

    An array, or an item of another type than a temp storage (whose type
    name ends in ``storage_t``), becomes a view whose every element access is
    checked (``hx::shared_view``, ``hx::shared_scalar``); a temp storage
    becomes a reference to the block's object (``hx::shared_object``), whose
    accesses the shim's primitives check. Returns the text and the next
    unused site number (each declaration gets its own).
    """
    site = first_site

    def replace(match: re.Match[str]) -> str:
        nonlocal site
        type_, name, dims = match.group(1), match.group(2), match.group(3)
        extents = re.findall(r"\d+", dims)
        this, site = site, site + 1
        if extents:
            return (
                f'auto {name} = ::hx::shared_view<{type_}, {", ".join(extents)}>({this}, "{name}");'
            )
        if type_.endswith("storage_t"):
            return f'{type_}& {name} = ::hx::shared_object<{type_}>({this}, "{name}");'
        return f'auto {name} = ::hx::shared_scalar<{type_}>({this}, "{name}");'

    text = SHARED.sub(replace, source)
    for number, line in enumerate(text.splitlines(), 1):
        if "__shared__" in line:
            raise ValueError(
                f"line {number} declares shared memory in a form the host harness does not "
                f"rewrite: {line.strip()!r}; extend tests/hostexec/units.py SHARED"
            )
    return text, site
