# SPDX-License-Identifier: Apache-2.0
"""Tile I/O plans to C++: the load and store providers' units (:func:`tile_io_unit`).

Each unit instantiates CUB's ``BlockLoad``/``BlockStore`` (or moves a
thread's items as 16-byte words where CUB would move them one by one) from
the templates ``tile_io.cuh.in``, ``tile_io_field.cuh.in`` and
``tile_io_zip.cuh.in``, through the shared unit assembly of
:mod:`scan._codegen`. :mod:`scan._primitives.warp_io` renders its warp tiles
with :func:`word_moves` and :func:`conversion_decl` from here.
"""

from __future__ import annotations

import textwrap
from typing import Any

import statefn

from ..._codegen import (
    GENERATOR_VERSION,
    temp_decl,
    template,
    unit_summary,
    value_decl,
    value_includes,
)
from ..._vocab import CUB_LOAD_ALGORITHMS, CUB_STORE_ALGORITHMS, c_type, is_bfloat16
from ._plan import TileIOPlan

__all__ = [
    "ZIPPED_OWN_STORAGE",
    "conversion_decl",
    "tile_io_unit",
    "whole_warps_partial",
    "word_moves",
]


def _blocked_tail(plan: TileIOPlan) -> str:
    """A partial tile in the blocked arrangement: whole 16-byte vectors where a thread can.

    A thread whose items all lie in the valid range, at a 16-byte aligned
    address, moves them as 16-byte vectors, as ``vectorize`` does in a full
    tile; the others (at most one per tile, and every thread of a misaligned
    tile) use CUB's guarded direct accesses. A row shorter than a tile is then
    moved in wide accesses instead of one item per access.

    ``cub::LoadDirectBlocked(rank, p, items, valid)`` compares
    ``rank * ITEMS + i`` with ``valid`` for every item ``i``; compilers hoist
    those ``ITEMS`` sums out of a tile loop and keep them in registers for the
    whole loop. Called with the thread's own first item as the base and rank 0,
    the same function compares ``i`` with one per-thread count instead.
    """
    bx, by, bz = plan.block
    items = plan.items_per_thread
    load = plan.direction == "load"
    convert = plan.array_dtypes is not None
    direct = "cub::LoadDirectBlocked" if load else "cub::StoreDirectBlocked"
    buffer = "memory_items" if convert else "thread_items"
    args = f"0, p + first, {buffer}, valid_items - first"
    if load and plan.has_oob_default:
        args += ", *static_cast<const value_t*>(oob_default)"
    head = f"    const int first = cub::RowMajorTid({bx}, {by}, {bz}) * {items};\n"
    guarded = [f"{direct}({args});"]
    if convert and load:
        # each valid item widened on its own; the others keep their values (or get the default)
        fill = ""
        if plan.has_oob_default:
            fill = " else thread_items[i] = *static_cast<const value_t*>(oob_default);"
        guarded = [
            "const int in_range = valid_items - first;",
            f"for (int i = 0; i < {items}; ++i) {{ if (i < in_range) "
            f"thread_items[i] = from_memory(p[first + i]);{fill} }}",
        ]
    elif convert:
        head = _converted_items(plan) + head
    nbytes = items * plan.array_dtype.itemsize
    if nbytes % 16 != 0:
        return head + "\n".join(f"    {line}" for line in guarded)
    lines = word_moves(load, "p + first", buffer, nbytes // 16)
    if convert and load:
        lines = [
            f"memory_t memory_items[{items}];",
            *lines,
            f"for (int i = 0; i < {items}; ++i) thread_items[i] = from_memory(memory_items[i]);",
        ]
    move = "".join(f"      {line}\n" for line in lines)
    return (
        head + f"    if (first + {items} <= valid_items &&\n"
        "        reinterpret_cast<unsigned long long>(p + first) % 16 == 0) {\n"
        + move
        + "    } else {\n"
        + "".join(f"      {line}\n" for line in guarded)
        + "    }"
    )


def word_moves(
    load: bool,
    address: str,
    buffer: str | None,
    words: int,
    *,
    word_index: str | None = None,
    suffix: str = "",
) -> list[str]:
    """C++ lines moving `words` 16-byte words between `address` (in the array) and the
    local array `buffer`: loads (`load`) or stores; the caller checks the alignment.

    With `word_index`, the words start at word `word_index` of `address` (the
    array's 16-byte words counted from it) instead of at `address` itself. The
    pointer and the words are named ``v`` and ``w`` followed by `suffix`; a load with
    no `buffer` leaves its words in ``w`` (the caller converts them).
    """
    const = "const " if load else ""
    v, w = f"v{suffix}", f"w{suffix}"
    pointer = f"reinterpret_cast<{const}uint4*>({address})"
    if word_index is not None:
        pointer += f" + {word_index}"
    first = f"{const}uint4* {v} = {pointer};"
    if load:
        lines = [
            first,
            f"uint4 {w}[{words}];",
            f"for (int k = 0; k < {words}; ++k) {w}[k] = {v}[k];",
        ]
        return lines if buffer is None else [*lines, f"memcpy(&{buffer}, {w}, sizeof({w}));"]
    assert buffer is not None
    return [
        first,
        f"uint4 {w}[{words}];",
        f"memcpy({w}, &{buffer}, sizeof({w}));",
        f"for (int k = 0; k < {words}; ++k) {v}[k] = {w}[k];",
    ]


def _vector_words(plan: TileIOPlan) -> str:
    """A ``vectorize`` full tile's accesses: each thread's items as 16-byte words (empty: a
    thread's items are no whole words).

    A thread's items lie together in the blocked arrangement, so they are
    moved as ``uint4`` words, the way :func:`_blocked_tail` moves a partial
    tile's whole threads; the caller has checked that ``p`` is 16-byte
    aligned. Where CUB's ``BLOCK_LOAD_VECTORIZE`` / ``BLOCK_STORE_VECTORIZE``
    move 16-byte vectors (4-byte items four at a time, 8-byte items two at a
    time) the full tile's machine code is theirs (sm_90, CCCL 3.5; 8-byte
    items four at a time take one more integer instruction), without
    instantiating their ``ThreadLoad`` / ``ThreadStore`` machinery: 0.10 s of
    NVRTC's front end in a unit that loads and stores this way. Where CUB
    moves items one by one (records, ``__half`` and ``__nv_bfloat16``, 1- and
    2-byte integers: not among the types it vectorises, 16 bytes apart a
    thread), these words cover 512 contiguous bytes a warp.
    """
    n = plan.items_per_thread
    nbytes = n * plan.array_dtype.itemsize
    if nbytes % 16 != 0:
        return ""
    buffer = "thread_items" if plan.array_dtypes is None else "memory_items"
    bx, by, bz = plan.block
    words = nbytes // 16
    rank = f"cub::RowMajorTid({bx}, {by}, {bz})"
    lines = word_moves(plan.direction == "load", "p", buffer, words, word_index=f"{rank} * {words}")
    return "\n      ".join(lines)


#: the unsigned word CUDA moves in one access, by size in bytes
_WORDS = {8: "uint2", 16: "uint4"}


def _record_word(plan: TileIOPlan) -> str | None:
    """The word type a full tile's items move as, where they are less aligned than their size.

    A record or complex item of 8 or 16 bytes aligned to less than its size
    (NumPy's alignment: a record of two float32 is aligned to 4, complex64 to
    4, complex128 to 8) moves as one access a field (two ``LDG.E`` an 8-byte
    record of two float32) where CUB's own ``float2`` moves as one 8-byte
    access: the compiler may not assume more than the type's alignment. Where
    the tile's address is aligned to the item's size (every array NumPy,
    Numba or torch allocates, and every slice of one), the full tile moves
    the items as ``uint2``/``uint4`` words through the same CUB algorithm,
    bit for bit; elsewhere as before. None where the items move as they are:
    a converting or ``vectorize`` plan (whole 16-byte words already), a
    scalar item, or one aligned to its size.
    """
    item = plan.array_dtype
    if plan.array_dtypes is not None or plan.algorithm == "vectorize":
        return None
    if item.alignment >= item.itemsize:
        return None
    return _WORDS.get(item.itemsize)


def _converted_items(plan: TileIOPlan) -> str:
    """A store's items rounded into the array's type (``memory_items``), before it moves them."""
    n = plan.items_per_thread
    return (
        f"    memory_t memory_items[{n}];\n"
        f"    for (int i = 0; i < {n}; ++i) memory_items[i] = to_memory(thread_items[i]);\n"
    )


def conversion_decl(plan: Any) -> str:
    """``memory_t`` (the array's items) and the conversion a converting load or store makes.

    `plan` is a block's or a warp's tile I/O plan (``array_dtype``,
    ``value_dtype``, ``direction``). A load widens float16 and bfloat16
    exactly (through ``float``); a store rounds float32 or float64 items to
    nearest, ties to even, with CUDA's ``_rn`` conversions (from ``double``
    directly: no double rounding).
    """
    memory = plan.array_dtype
    value = plan.value_dtype
    name = "bfloat16" if is_bfloat16(memory) else "half"
    lines = [
        f"// the array holds {statefn.dtype_name(memory)}: "
        + (
            "a load widens it exactly"
            if plan.direction == "load"
            else "a store rounds to nearest, ties to even"
        ),
        f"using memory_t = {c_type(memory)};",
    ]
    if plan.direction == "load":
        lines.append(
            "__device__ __forceinline__ value_t from_memory(memory_t x) "
            f"{{ return static_cast<value_t>(__{name}2float(x)); }}"
        )
    else:
        source = "float" if value.itemsize == 4 else "double"
        rounding = "_rn" if source == "float" else ""  # __double2half/__double2bfloat16: rn
        lines.append(
            "__device__ __forceinline__ memory_t to_memory(value_t x) "
            f"{{ return __{source}2{name}{rounding}(x); }}"
        )
    return "\n".join(lines)


def whole_warps_partial(plan: TileIOPlan) -> bool:
    """Whether the warps of a partial tile whose items are all valid take the full tile's code.

    For ``warp_transpose`` tile I/O where a thread moves 64 bytes or more, at
    up to 256 threads. There blocked vectors use a quarter of a sector per
    access (a row shorter than a tile at 256 x 16 ran at 0.82-0.84 of CUB's
    exchange); with fewer bytes a thread they are whole or half sectors, and
    the per-warp condition raised the tile loop's registers (32 to 40 at
    512 x 4, 256 x 8 and 512 x 16, sm_90), where the blocked path already
    matches or beats CUB on short rows.
    """
    return (
        plan.algorithm == "warp_transpose"
        and plan.items_per_thread * plan.array_dtype.itemsize >= 64
        and plan.threads <= 256
    )


#: Zipped tile I/O: the most bytes of temp storage its fields take each their
#: own of; more, and they share one buffer with barriers between them (static
#: shared memory is at most 48 KiB a block).
ZIPPED_OWN_STORAGE = 24 * 1024


def _tile_moves(plan: TileIOPlan) -> dict[str, Any]:
    """How a tile I/O provider moves one array's tile: its CUB types and code.

    The template substitutions ``tile_io.cuh.in`` and ``tile_io_field.cuh.in``
    share; the code moves ``thread_items`` to or from ``p`` with ``valid``
    items in range, through ``temp_storage`` (and ``oob_default``).

    Where the array holds another type than the items (``memory_t``, a
    half-precision float: :func:`conversion_decl`), CUB moves the array's
    items (vector accesses and exchanges of the narrow type) through
    ``memory_items``, which the thread converts from or to its items.
    """
    load = plan.direction == "load"
    algos = CUB_LOAD_ALGORITHMS if load else CUB_STORE_ALGORITHMS
    method = "Load" if load else "Store"
    extra_types = ""
    temp_type = "typename block_io_t::TempStorage"
    convert = plan.array_dtypes is not None
    io_type = "memory_t" if convert else "value_t"
    buffer = "memory_items" if convert else "thread_items"
    full = f"    block_io_t(temp_storage).{method}(p, {buffer});"
    sync = (
        "  __syncthreads(); // temp storage may be reused after this barrier"
        if plan.auto_sync and plan.uses_shared_memory
        else ""
    )
    if plan.algorithm == "vectorize":
        # Vector accesses need 16-byte alignment. Otherwise: direct accesses,
        # whatever the CUB version does on its own, or CUB's warp_transpose
        # (plan.unaligned), whose temp storage the call then owns; the branch
        # is the same in every thread, so its barrier is too.
        cub_class = "BlockLoad" if load else "BlockStore"
        shape = f"{plan.block[0]}, {plan.items_per_thread}"
        dims = f"{plan.block[1]}, {plan.block[2]}"
        vectors = _vector_words(plan)
        if plan.unaligned is None:
            fallback = "block_direct_t"
            direct = "BLOCK_LOAD_DIRECT" if load else "BLOCK_STORE_DIRECT"
            extra_types = (
                f"using {fallback} = cub::{cub_class}<{io_type}, {shape}, cub::{direct}, {dims}>;"
            )
            aligned_call = vectors or f"block_io_t(temp_storage).{method}(p, {buffer});"
            fallback_call = f"      {fallback}().{method}(p, {buffer});\n"
        else:
            fallback = "block_transpose_t"
            transpose = algos[plan.unaligned]
            fallback_type = f"cub::{cub_class}<{io_type}, {shape}, cub::{transpose}, {dims}>"
            temp_type = f"typename {fallback_type}::TempStorage"
            extra_types = f"using {fallback} = {fallback_type};"
            aligned_call = vectors or f"block_io_t().{method}(p, {buffer});"
            fallback_call = f"      {fallback}(temp_storage).{method}(p, {buffer});\n"
            if sync:
                fallback_call += f"    {sync}\n"
                sync = ""
        full = (
            "    if (reinterpret_cast<unsigned long long>(p) % 16 == 0) {\n"
            f"      {aligned_call}\n"
            "    } else {\n" + fallback_call + "    }"
        )
    n = plan.items_per_thread
    word = _record_word(plan)
    if word is not None:
        # the same algorithm over words (its own temp storage, overlaid on the items' in a union)
        shape = f"{plan.block[0]}, {plan.items_per_thread}, cub::{algos[plan.algorithm]}"
        dims = f"{plan.block[1]}, {plan.block[2]}"
        const = "const " if load else ""
        extra_types = "\n".join(
            [
                f"using block_words_t = cub::{'BlockLoad' if load else 'BlockStore'}"
                f"<{word}, {shape}, {dims}>;",
                "// the items' temp storage, or the words'",
                "union words_or_items_t {",
                "  typename block_io_t::TempStorage items;",
                "  typename block_words_t::TempStorage words;",
                "  __device__ __forceinline__ operator typename block_io_t::TempStorage&()"
                " { return items; }",
                "};",
            ]
        )
        temp_type = "words_or_items_t"
        words_call = (
            f"block_words_t(temp_storage.words).{method}("
            f"reinterpret_cast<{const}{word}*>(p), words);"
        )
        moves = (
            [f"{word} words[{n}];", words_call, "memcpy(&thread_items, words, sizeof(words));"]
            if load
            else [f"{word} words[{n}];", "memcpy(words, &thread_items, sizeof(words));", words_call]
        )
        full = (
            f"    if (reinterpret_cast<unsigned long long>(p) % sizeof({word}) == 0) {{\n"
            + "".join(f"      {line}\n" for line in moves)
            + "    } else {\n"
            f"  {full}\n"
            "    }"
        )
    if convert and load:
        full = (
            f"    memory_t memory_items[{n}];\n{full}\n"
            f"    for (int i = 0; i < {n}; ++i) thread_items[i] = from_memory(memory_items[i]);"
        )
    elif convert:
        full = _converted_items(plan) + full
    if plan.algorithm == "striped" and convert and load:
        # item i of the thread is tile item i * threads + rank: each valid one widened
        fill = ""
        if plan.has_oob_default:
            fill = " else thread_items[i] = *static_cast<const value_t*>(oob_default);"
        bx, by, bz = plan.block
        partial = (
            f"    const int rank = cub::RowMajorTid({bx}, {by}, {bz});\n"
            f"    for (int i = 0; i < {n}; ++i) {{ if (i * {plan.threads} + rank < valid_items) "
            f"thread_items[i] = from_memory(p[i * {plan.threads} + rank]);{fill} }}"
        )
    elif plan.algorithm == "striped":
        oob = ", *static_cast<const value_t*>(oob_default)" if load and plan.has_oob_default else ""
        partial = f"    block_io_t(temp_storage).{method}(p, {buffer}, valid_items{oob});"
        if convert:
            partial = _converted_items(plan) + partial
    else:
        # Every other algorithm leaves items in the blocked arrangement, as
        # direct accesses do. A partial tile (at most one per row) is served
        # without shared memory (_blocked_tail): CUB's guarded exchange, in
        # the loop beside the full tile's, makes the compiler keep the
        # exchange's shared-memory addresses in registers across the loop
        # (at 256 x 16 int32: 79 registers instead of 40), and this defines
        # the items past the valid range (left unchanged) for every algorithm.
        # Kept out of line (__noinline__), the exchange leaves the loop's
        # registers alone but the items cross the call through local memory:
        # 0.20-0.24 of CUB on rows shorter than a tile at 256 x 16 on the
        # H200, and the int32 full-tile loop slowed to 0.71.
        partial = _blocked_tail(plan)
    full_condition = f"valid >= {plan.tile_items}"
    full_comment = "a full tile"
    if whole_warps_partial(plan):
        # Each warp moves its part of the tile on its own (coalesced
        # warp-striped accesses, an exchange through the warp's own shared
        # memory, __syncwarp only), so a warp whose items all lie in the
        # valid range takes the full tile's code in a partial tile too: a row
        # shorter than a tile moves coalesced up to its last warp, with the
        # full tile's code and registers (one copy of it, not two).
        bx, by, bz = plan.block
        warp_items = 32 * plan.items_per_thread
        full_condition = (
            f"(cub::RowMajorTid({bx}, {by}, {bz}) / 32) * {warp_items} + {warp_items} <= valid"
        )
        full_comment = "a warp whose items are all in range"
    return {
        "cub_class": "BlockLoad" if load else "BlockStore",
        "io_type": io_type,
        "block_x": plan.block[0],
        "block_y": plan.block[1],
        "block_z": plan.block[2],
        "items_per_thread": plan.items_per_thread,
        "algorithm": algos[plan.algorithm],
        "extra_types": extra_types,
        "full_tile": full,
        "full_condition": full_condition,
        "full_comment": full_comment,
        "partial_tile": partial,
        "sync": sync,
        "temp_type": temp_type,
    }


def tile_io_unit(
    plan: TileIOPlan, *, symbol: str | None = None, storage: str | None = None, params: str
) -> str:
    """C++ source of a tile load or store provider.

    `symbol`, `storage` and `params` are as in :func:`scan_unit`.
    """
    if plan.zipped:
        return _zipped_unit(plan, symbol=symbol, storage=storage, params=params)
    load = plan.direction == "load"
    const = "const " if load else ""
    moves = _tile_moves(plan)
    io_type = moves["io_type"]
    values = value_decl(plan.value_dtype)
    if plan.array_dtypes is not None:
        values += "\n" + conversion_decl(plan)
    return template("tile_io.cuh.in").substitute(
        moves,
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=unit_summary(plan),
        includes=_tile_io_includes(plan),
        value_decl=values,
        symbol=symbol or plan.symbol,
        params=params,
        tile_items=plan.tile_items,
        temp_decl=temp_decl(plan.temp_storage, storage),
        pointer_decl=f"{const}{io_type}* p = static_cast<{const}{io_type}*>(ptr);",
        items_decl=_items_decl(plan),
    )


def _items_decl(plan: TileIOPlan) -> str:
    """``thread_items``: the caller's items, or a copy a store's exchange may rearrange.

    CUB's ``BlockStore`` exchanges the array it is given in place
    (``BlockExchange::BlockedToStriped``): stored from the caller's items, a
    store through shared memory would leave them permuted for the code after
    it. A converting store exchanges ``memory_items``, its own copy already.
    """
    n = plan.items_per_thread
    cast = f"*static_cast<value_t (*)[{n}]>(items)"
    if plan.direction == "load" or plan.array_dtypes is not None or not plan.uses_shared_memory:
        return f"  value_t (&thread_items)[{n}] = {cast};"
    return (
        f"  // a copy: the exchange rearranges the items it stores, the caller's stay as they are\n"
        f"  value_t thread_items[{n}];\n"
        f"  for (int i = 0; i < {n}; ++i) thread_items[i] = ({cast})[i];"
    )


def _tile_io_includes(plan: TileIOPlan) -> str:
    """A tile load's or store's ``#include`` lines: its value types' headers, then CUB's."""
    header = "block_load.cuh" if plan.direction == "load" else "block_store.cuh"
    types = [plan.value_dtype, *(plan.array_dtypes or ())]
    return "\n".join([*value_includes(*types), f"#include <cub/block/{header}>"])


def _handover(plan: TileIOPlan) -> str:
    """What frees a zipped field's temp storage for the next field (a statement, or nothing).

    Nothing where the field moves without shared memory, or its exchange ends
    with a barrier anyway (``vectorize``'s ``warp_transpose`` fallback with
    ``auto_sync``); ``__syncwarp()`` where each warp exchanges through its own
    part of the storage (``warp_transpose``, the fallback without
    ``auto_sync``); a block barrier otherwise (``transpose`` and
    ``warp_transpose_timesliced`` exchange across warps).
    """
    if not plan.uses_shared_memory or (plan.unaligned is not None and plan.auto_sync):
        return ""
    if plan.algorithm == "warp_transpose" or plan.unaligned is not None:
        return "__syncwarp(); // the warp's next field reuses its part of the temp storage"
    return "__syncthreads(); // the next field reuses the temp storage"


def _zipped_words_together(
    plan: TileIOPlan, field_plans: tuple[TileIOPlan, ...], members: dict[str, int]
) -> str:
    """A zipped ``vectorize`` load's full tile with every array's words loaded before any
    is used: the opening of an ``if`` whose ``else`` is the per-field code (empty: none).

    Moved field by field, each field's words are loaded behind its own
    alignment branch and converted into the records before the next field's
    are asked for, so the compiler issues the second array's loads only once
    the first's have arrived: two memory round trips a tile where one would
    do (the bf16 linear recurrence's forward pass spent 65% of its stall
    samples on those two waits, sm_90). Where the tile is full and every
    array 16-byte aligned (one test for all), this loads each array's
    ``uint4`` words in turn, then converts them: the loads are in flight
    together. Only where every field's plan moves whole 16-byte words a
    thread (``vectorize``, items times item size a multiple of 16); the
    other tiles and plans move as before, field by field.
    """
    if plan.direction != "load" or len(field_plans) < 2:
        return ""
    words = []
    for field_plan in field_plans:
        nbytes = field_plan.items_per_thread * field_plan.array_dtype.itemsize
        if field_plan.algorithm != "vectorize" or nbytes % 16 != 0:
            return ""
        words.append(nbytes // 16)
    assert plan.fields is not None
    ipt = plan.items_per_thread
    bx, by, bz = plan.block
    aligned = " | ".join(
        f"reinterpret_cast<unsigned long long>(ptrs[{j}])" for j in range(len(field_plans))
    )
    lines = [
        f"  if (valid >= {plan.tile_items} && ({aligned}) % 16 == 0) {{",
        "    // a full tile, every array 16-byte aligned: each array's words are loaded before",
        "    // any is converted, so the loads are in flight together",
        f"    const int rank = cub::RowMajorTid({bx}, {by}, {bz});",
    ]
    for j, n in enumerate(words):  # the words stay in w0, w1, ... until all are asked for
        moves = word_moves(True, f"ptrs[{j}]", None, n, word_index=f"rank * {n}", suffix=str(j))
        lines += [f"    {line}" for line in moves]
    for j, (name, field_plan) in enumerate(zip(plan.fields, field_plans, strict=True)):
        member = f"thread_items[i].f{members[name]}"
        if field_plan.array_dtypes is None:
            kind, value = "value_t", "field_items[i]"
        else:
            kind, value = "memory_t", f"io{j}::from_memory(field_items[i])"
        lines += [
            f"    {{ // field {name!r}",
            f"      io{j}::{kind} field_items[{ipt}];",
            f"      memcpy(&field_items, w{j}, sizeof(w{j}));",
            f"      for (int i = 0; i < {ipt}; ++i) {member} = {value};",
            "    }",
        ]
    lines.append("  } else {")
    return "\n".join(lines) + "\n"


def _zipped_unit(plan: TileIOPlan, *, symbol: str | None, storage: str | None, params: str) -> str:
    """C++ source of a zipped tile load or store: record items, one array per field.

    Each field's array moves as a numeric tile I/O provider moves its array
    (:func:`_tile_moves` of the field's plan), in a namespace of its own,
    between the array and a register array of the field's items; the entry
    point gathers those into (or scatters them from) the record items. The
    fields take turns in one buffer (a union), handed over between them as
    :func:`_handover` says, unless that takes a block barrier: then each has
    temp storage of its own, so no barrier separates the fields, as long as
    together they take at most :data:`ZIPPED_OWN_STORAGE` bytes.
    """
    load = plan.direction == "load"
    const = "const " if load else ""
    ipt = plan.items_per_thread
    assert plan.fields is not None
    assert plan.value_dtype.names is not None
    members = {f.name: i for i, f in enumerate(statefn.record_fields(plan.value_dtype))}
    namespaces, temp_members, calls = [], [], []
    sync = ""
    field_plans = plan.field_plans()
    # what the fields' exchanges take (CUB's TempStorage: about one tile of the arrays' items)
    nbytes = sum(p.tile_items * p.array_dtype.itemsize for p in field_plans if p.uses_shared_memory)
    handovers = [_handover(p) for p in field_plans]
    overlay = nbytes > ZIPPED_OWN_STORAGE or not any(
        h.startswith("__syncthreads") for h in handovers[:-1]
    )
    for j, (name, field_plan) in enumerate(zip(plan.fields, field_plans, strict=True)):
        moves = _tile_moves(field_plan)
        sync = sync or moves.pop("sync")
        field_values = f"using value_t = {c_type(field_plan.value_dtype)};"
        if field_plan.array_dtypes is not None:
            field_values += "\n" + conversion_decl(field_plan)
        namespaces.append(
            template("tile_io_field.cuh.in").substitute(
                moves,
                index=j,
                name=name,
                member=members[name],
                value_decl=field_values,
                const=const,
            )
        )
        temp_members.append(f"  io{j}::temp_storage_t io{j};")
        member = f"thread_items[i].f{members[name]}"
        lines = [f"  {{ // field {name!r}", f"    io{j}::value_t field_items[{ipt}];"]
        if not load or not plan.has_oob_default:
            # a load keeps the items past the valid range, as a numeric load does
            lines.append(f"    for (int i = 0; i < {ipt}; ++i) field_items[i] = {member};")
        oob = (
            f"&static_cast<const value_t*>(oob_default)->f{members[name]}"
            if load and plan.has_oob_default
            else "nullptr"
        )
        lines.append(
            f"    io{j}::move(temp_storage.io{j}, "
            f"static_cast<{const}io{j}::{moves['io_type']}*>(ptrs[{j}]), valid, {oob}, "
            "field_items);"
        )
        if load:
            lines.append(f"    for (int i = 0; i < {ipt}; ++i) {member} = field_items[i];")
        if overlay and handovers[j] and j + 1 < len(field_plans):
            lines.append(f"    {handovers[j]}")
        lines.append("  }")
        calls.append("\n".join(lines))
    field_calls = "\n".join(calls)
    together = _zipped_words_together(plan, field_plans, members)
    if together:
        field_calls = together + textwrap.indent(field_calls, "  ") + "\n  }"
    return template("tile_io_zip.cuh.in").substitute(
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=unit_summary(plan),
        includes=_tile_io_includes(plan),
        value_decl=value_decl(plan.value_dtype),
        field_namespaces="\n".join(namespaces),
        storage_comment=(
            "Each field moves through temp storage of its own: no barrier between them."
            if not overlay
            else f"The fields take turns in one temp storage (their own would take {nbytes} bytes)."
            if nbytes > ZIPPED_OWN_STORAGE
            else "The fields take turns in one temp storage (handed over as their exchanges allow)."
        ),
        storage_kind="union" if overlay else "struct",
        temp_members="\n".join(temp_members),
        symbol=symbol or plan.symbol,
        params=params,
        tile_items=plan.tile_items,
        items_per_thread=ipt,
        fields=", ".join(plan.fields),
        temp_decl=temp_decl(plan.temp_storage, storage),
        pointers=f"{const}void* const* ptrs = static_cast<{const}void* const*>(ptr);",
        field_calls=field_calls,
        sync=sync,
    )
