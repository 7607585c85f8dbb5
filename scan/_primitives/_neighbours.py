# SPDX-License-Identifier: Apache-2.0
"""What the neighbour families share (``adjacent_difference``, ``flag_heads``).

Both compare each item of a tile with the one before it, in the blocked
arrangement: item ``i`` of thread ``t`` with item ``i - 1`` of the same
thread, item 0 with the last item of thread ``t - 1``, and the tile's first
item with ``carry[0]`` when the call passes ``carry=`` (CUB's
``tile_predecessor_item``). A call with ``carry=`` then sets every thread's
``carry[0]`` to the tile's last item, so the next tile of a loop continues
where this one ended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import statefn

from .._errors import ScanTypeError
from .._plan import ArrayFact, ScalarFact, TupleFact, check_value_dtype
from .._spec import BlockInputs, Param
from .._vocab import is_complex

__all__ = [
    "CARRY_PARAM",
    "carry_lines",
    "check_carry",
    "check_items",
    "neighbour_results",
    "user_or_builtin",
]

#: ``carry=``: a local array whose item 0 is the item before the tile, and becomes its last.
CARRY_PARAM = Param("carry", "operand", None)


def check_items(f: str, name: str, items: Any) -> np.dtype:
    """The items' dtype: a 1-D local array of real numbers."""
    if items is None:
        raise ScanTypeError(f"{f}: {name} is required")
    if isinstance(items, TupleFact):
        raise ScanTypeError(
            f"{f}: {name} is a tuple; pass a local array of numbers (load zipped fields into "
            "a local array of records and difference one field at a time, into a number array)"
        )
    if isinstance(items, ScalarFact) or items.ndim != 1:
        raise ScanTypeError(
            f"{f}: {name} must be a 1-D local array (a thread's items, blocked arrangement); "
            "got a scalar: put it in cuda.local.array(1, dtype)"
        )
    dtype = check_value_dtype(f, name, items.dtype)
    if dtype.names is not None or is_complex(dtype):
        raise ScanTypeError(
            f"{f}: {name} has dtype {statefn.dtype_name(dtype)}; {f} takes real numbers "
            "(integers, float16, bfloat16, float32, float64): compare or difference one real "
            "field or part at a time"
        )
    return dtype


def check_carry(f: str, carry: Any, dtype: np.dtype) -> bool:
    """Whether the call passes ``carry=``, checked: a local array of the items' dtype."""
    if carry is None:
        return False
    if not isinstance(carry, ArrayFact) or carry.ndim != 1:
        raise ScanTypeError(
            f"{f}: carry= must be a 1-D local array of the items' dtype (its item 0 is the "
            "item before the tile, and becomes the tile's last): "
            f"carry = cuda.local.array(1, np.{dtype.name})"
        )
    if carry.dtype != dtype:
        raise ScanTypeError(
            f"{f}: carry has dtype {statefn.dtype_name(carry.dtype)} but the items are "
            f"{statefn.dtype_name(dtype)}; allocate it as cuda.local.array(1, np.{dtype.name})"
        )
    if carry.length is not None and carry.length < 1:
        raise ScanTypeError(f"{f}: carry has no items; allocate cuda.local.array(1, ...)")
    if carry.memory not in (None, "local"):
        raise ScanTypeError(
            f"{f}: carry must be a cuda.local.array (every thread's own copy, all set to the "
            f"tile's last item); got {carry.memory} memory"
        )
    return True


def user_or_builtin(
    f: str, op: object, builtin: str | None, spelling: str
) -> statefn.ScanOperator | None:
    """None for the family's built-in operator (`builtin` or None passed), else the user's.

    A user's operator is a binary function ``op(a, b)`` compiled as a scan
    operator (its result converted to the items' dtype).
    """
    if op is None or (builtin is not None and isinstance(op, str) and op == builtin):
        return None
    if isinstance(op, str):
        raise ScanTypeError(
            f"{f}: op={op!r} is not an operator of {f}; pass {spelling}, or a function of "
            "(a, b) such as a @cuda.jit(device=True) function or a lambda"
        )
    try:
        return statefn.normalize(op, role="scan_op")
    except (TypeError, ValueError) as exc:
        raise ScanTypeError(f"{f}: op= {exc}") from None


def carry_lines(threads: int, n: int, block: Sequence[int]) -> tuple[list[str], list[str]]:
    """C++ before and after the CUB call that keep ``carry[0]`` as the tile's last item.

    The last thread puts its last item in a slot of the provider's own before
    the call; after a barrier every thread copies it into its carry.
    ``carry_item`` is a reference to the thread's ``carry[0]``.
    """
    bx, by, bz = block
    before = [
        "value_t& carry_item = *static_cast<value_t*>(carry);",
        "// the tile's last item, every thread's carry after the call: a slot of the",
        "// provider's own (not part of the temp storage a caller sizes)",
        "__shared__ value_t last_item;",
        f"if (cub::RowMajorTid({bx}, {by}, {bz}) == {threads - 1}) last_item = input[{n - 1}];",
    ]
    after = ["__syncthreads();", "carry_item = last_item;"]
    return before, after


def predecessors(
    block: BlockInputs, name: str, has_carry: bool
) -> tuple[list[np.ndarray[Any, Any]], Any, Any]:
    """Every thread's items, the tile's predecessor (thread 0's ``carry[0]``; None without
    ``carry=``) and the tile's last item.

    Items past a partial tile's end are taken as they are (a load without
    ``oob_default=`` leaves them unset): their results are not stored by a
    guarded store, as on a GPU.
    """
    plan = block.plan
    items = [block.items(rank, name, 0) for rank in range(plan.threads)]
    unset = (
        "carry[0] of thread 0 was never set, and the call takes it as the item before the "
        "tile's first; set carry[0] in every thread before the first tile (the item before "
        "the row, e.g. 0), or leave carry= out"
    )
    first = block.items(0, "carry", 1, unset)[0] if has_carry else None
    return items, first, items[-1][-1]


def neighbour_results(
    block: BlockInputs,
    name: str,
    has_carry: bool,
    first_without_carry: Callable[[Any], Any],
    pair: Callable[[Any, Any], Any],
    out: str,
    dtype: np.dtype,
) -> list[dict[str, np.ndarray[Any, Any]]]:
    """Each thread's writes: ``out`` gets ``pair(previous, item)`` per item (the tile's first:
    ``first_without_carry(item)`` without ``carry=``); ``carry`` the tile's last item."""
    items, first, last = predecessors(block, name, has_carry)
    results = []
    previous = first
    for rank, own in enumerate(items):
        values = np.empty(len(own), dtype=dtype)
        for i, item in enumerate(own):
            if rank == 0 and i == 0 and previous is None:
                values[i] = first_without_carry(item)
            else:
                values[i] = pair(previous, item)
            previous = item
        writes = {out: values}
        if has_carry:
            writes["carry"] = np.array([last], dtype=items[0].dtype)
        results.append(writes)
    return results
