# SPDX-License-Identifier: Apache-2.0
"""Plans to C++: deterministic translation units instantiating CUB.

Each unit is rendered from a template file shipped in ``_templates/`` and
exports one ``extern "C" __device__`` entry point whose operands all travel by
pointer, plus two constants holding ``sizeof``/``alignof`` of the primitive's
``TempStorage`` (read back from compiled code by :mod:`scan._compile`). The
text depends only on the plan and the callbacks' symbols, so equal plans give
byte-identical sources (tests pin them).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from importlib import resources
from typing import Any

import attrs
import numpy as np

import statefn

from ._lookback import LOOKBACK, status_tiles_cxx
from ._plan import ScanPlan, TileIOPlan, plan_fields
from ._vocab import (
    CUB_LOAD_ALGORITHMS,
    CUB_SCAN_ALGORITHMS,
    CUB_STORE_ALGORITHMS,
    c_type,
    is_bfloat16,
    is_complex,
)

__all__ = [
    "GENERATOR_VERSION",
    "OWN_PLUS",
    "ZIPPED_OWN_STORAGE",
    "CallbackDecl",
    "callback_barrier_suffices",
    "complex_decl",
    "conversion_decl",
    "cub_plus",
    "cub_plus_dtype",
    "functor_calling",
    "group_storage",
    "operator_functor",
    "prefix_functor",
    "render_group",
    "render_unit",
    "scan_unit",
    "thread_items_first",
    "tile_io_unit",
    "value_decl",
    "value_includes",
    "word_moves",
]

#: Bumped whenever the generated text changes; part of every cache key.
GENERATOR_VERSION = "15"

_BUILTIN_BODIES = {
    "+": "return a + b;",
    "*": "return a * b;",
    "min": "return b < a ? b : a;",
    "max": "return a < b ? b : a;",
    "&": "return a & b;",
    "|": "return a | b;",
    "^": "return a ^ b;",
}


@attrs.frozen
class CallbackDecl:
    """What generated code needs to know about one lowered callback.

    Attributes
    ----------
    symbol : str
        The callback's ``extern "C"`` symbol.
    c_decl : str
        Its C++ declaration, emitted verbatim.
    """

    symbol: str
    c_decl: str


def value_decl(dtype: np.dtype) -> str:
    """The C++ declaration of ``value_t``: an alias of a scalar type, or a record's struct.

    A record becomes a struct with one member per field, in field order, of
    the field's C type: the NumPy dtype was checked to have exactly that
    layout (:func:`statefn.as_value_dtype`), and the static assertion makes
    the compiler confirm it. Members are named ``f0``, ``f1``, ... (field
    names may be C++ keywords); comments give the NumPy names.

    A complex dtype becomes a struct of two floats (:func:`complex_decl`);
    float16 is ``__half`` and bfloat16 ``__nv_bfloat16`` (:func:`value_includes`).
    """
    if is_complex(dtype):
        return complex_decl(dtype) + f"\nusing value_t = {c_type(dtype)};"
    if dtype.names is None:
        return f"using value_t = {c_type(dtype)};"
    fields = statefn.record_fields(dtype)
    lines = [
        f"// {statefn.dtype_name(dtype)}: the NumPy dtype's layout, member for member",
        "struct value_t {",
    ]
    lines += [
        f"  {c_type(f.dtype)} f{i}; // {f.name}, offset {f.offset}" for i, f in enumerate(fields)
    ]
    lines += [
        "};",
        f"static_assert(sizeof(value_t) == {dtype.itemsize} && alignof(value_t) == "
        f'{dtype.alignment}, "value_t must have the NumPy record dtype\'s layout");',
    ]
    return "\n".join(lines)


def complex_decl(dtype: np.dtype) -> str:
    """The struct of a complex dtype, with the arithmetic the built-in operators use.

    NumPy's (and Numba's) layout: the real part, then the imaginary part, each
    a float of half the dtype's size, aligned as one of them (CUDA's
    ``cuda::std::complex`` is aligned to its whole size, which a local array
    of Numba's complex numbers need not be). ``+`` adds the parts, ``*`` is
    the textbook product, as Numba and NumPy compute them.
    """
    part = "float" if dtype.itemsize == 8 else "double"
    name = c_type(dtype)
    args = f"const {name}& a, const {name}& b"
    return "\n".join(
        [
            f"// {dtype.name}: NumPy's layout (real part, imaginary part)",
            f"struct {name} {{",
            f"  {part} re, im;",
            "};",
            f"static_assert(sizeof({name}) == {dtype.itemsize} && alignof({name}) == "
            f'{dtype.alignment}, "{name} must have NumPy\'s {dtype.name} layout");',
            f"__device__ __forceinline__ {name} operator+({args})",
            "{ return {a.re + b.re, a.im + b.im}; }",
            f"__device__ __forceinline__ {name} operator*({args})",
            "{ return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }",
        ]
    )


def value_includes(*dtypes: np.dtype) -> list[str]:
    """The ``#include`` lines the C types of `dtypes` need (none for most dtypes).

    ``__half`` and ``__nv_bfloat16`` come from the toolkit's ``cuda_fp16.h``
    and ``cuda_bf16.h``; CCCL includes the first on its own, and a unit says
    so anyway.
    """
    lines = []
    if any(d.names is None and d == np.dtype(np.float16) for d in dtypes):
        lines.append("#include <cuda_fp16.h>")
    if any(is_bfloat16(d) for d in dtypes):
        lines.append("#include <cuda_bf16.h>")
    return lines


def operator_functor(name: str, op: statefn.ScanOperator, callback: CallbackDecl | None) -> str:
    """A functor struct `name` applying `op` to two ``value_t`` (a, b).

    A built-in operator is written out; a user's calls `callback` (its
    lowered function; :func:`functor_calling` swaps the operands).
    """
    if op.is_builtin:
        return _functor(name, _BUILTIN_BODIES[str(op.builtin)])
    assert callback is not None
    return functor_calling(name, callback)


def functor_calling(name: str, callback: CallbackDecl, *, swapped: bool = False) -> str:
    """A functor struct `name` returning ``callback(a, b)`` (``callback(b, a)`` if `swapped`)."""
    operands = "&b, &a" if swapped else "&a, &b"
    return _functor(name, f"value_t r; {callback.symbol}(&r, {operands}); return r;")


def _functor(name: str, body: str) -> str:
    return (
        f"struct {name} {{\n"
        "  __device__ __forceinline__ value_t\n"
        "  operator()(const value_t& a, const value_t& b) const\n"
        f"  {{ {body} }}\n"
        "};"
    )


def prefix_functor(
    callback: CallbackDecl, *, stateful: bool, argument: str = "block_aggregate"
) -> str:
    """``prefix_op_t``: calls `callback` with its state (when `stateful`) and `argument`."""
    state = "state, " if stateful else ""
    return (
        "struct prefix_op_t {\n"
        "  void* state;\n"
        f"  __device__ __forceinline__ value_t operator()(value_t {argument})\n"
        f"  {{ value_t r; {callback.symbol}(&r, {state}&{argument}); return r; }}\n"
        "};"
    )


def _template(name: str) -> string.Template:
    text = resources.files("scan").joinpath("_templates", name).read_text(encoding="utf-8")
    return string.Template(text)


def _summary(plan: Any) -> str:
    parts = []
    for name, value in plan_fields(plan).items():
        if isinstance(value, np.dtype):
            value = statefn.dtype_name(value).replace(" ", "")
        elif isinstance(value, tuple) and all(isinstance(v, np.dtype) for v in value):
            value = ",".join(statefn.dtype_name(v).replace(" ", "") for v in value)
        elif isinstance(value, statefn.ScanOperator):
            value = value.builtin if value.is_builtin else f"user:{value.key[:12]}"
        elif isinstance(value, statefn.StatefulFunction | statefn.StatelessFunction):
            value = f"{type(value).__name__}:{value.key[:12]}"
        parts.append(f"{name}={value}")
    return " ".join(parts)


def _temp_decl(mode: str, storage: str | None = None) -> str:
    if mode == "implicit" and storage is not None:
        # the buffer its unit's sharing providers overlay (render_group)
        return f"  temp_storage_t& temp_storage = *static_cast<temp_storage_t*>({storage}());"
    if mode == "implicit":
        return (
            "  __shared__ temp_storage_t library_temp_storage;\n"
            "  temp_storage_t& temp_storage = library_temp_storage;"
        )
    return "  temp_storage_t& temp_storage = *static_cast<temp_storage_t*>(temp);"


def _scan_functors(
    plan: ScanPlan, scan_cb: CallbackDecl | None, prefix_cb: CallbackDecl | None
) -> str:
    out: list[str] = []
    op = plan.scan_op
    if cub_plus(plan):
        out.append(
            "// CUB's warp scans have shuffle-and-add steps of their own for this\n"
            "// operator, and exclusive integer scans subtract instead of shuffling\n"
            "using scan_op_t = ::cuda::std::plus<>;"
        )
    elif plan.reverse and not op.is_builtin:
        # the reversed tile is scanned forward: the operands change places
        assert scan_cb is not None
        out.append(functor_calling("scan_op_t", scan_cb, swapped=True))
    else:
        out.append(operator_functor("scan_op_t", op, scan_cb))
    if prefix_cb is not None:
        comment = (
            "// CUB calls this from the first warp's lanes; only thread 0's return\n"
            "// seeds the scan. Each calling lane updates its own state copy.\n"
        )
        functor = prefix_functor(prefix_cb, stateful=plan.stateful)
        out.append(comment + functor if plan.stateful else functor)
    return "\n".join(out)


#: value dtypes for which CUB's warp scan has a ``::cuda::std::plus<>`` step
#: of its own (an ``add`` predicated on the shuffle's in-range flag), in CCCL
#: 3.0 and 3.5 alike
_CUB_PLUS_DTYPES = frozenset({"int32", "uint32", "int64", "uint64", "float32", "float64"})


def cub_plus_dtype(dtype: np.dtype) -> bool:
    """Whether CUB's warp-level steps specialise ``::cuda::std::plus<>`` for `dtype`."""
    return dtype.name in _CUB_PLUS_DTYPES


def cub_plus(plan: ScanPlan) -> bool:
    """Whether `plan`'s operator is given to CUB as ``::cuda::std::plus<>``.

    True for the built-in ``+`` on the value dtypes CUB's warp scan
    specialises it for. A functor of the unit's own computes the same sums,
    but CUB's generic warp-scan step selects the shuffled value with a lane
    comparison (four instructions a step where the specialised one takes
    two), and its exclusive integer scan shuffles once more where the
    specialised one subtracts the input from the inclusive result. The
    ``*Sum`` methods use ``plus<>`` already; this is for the calls that take
    an operator (an initial value, or the thread's items scanned first).
    """
    op = plan.scan_op
    return (
        op.is_builtin
        and str(op.builtin) == "+"
        and plan.value_dtype.name in _CUB_PLUS_DTYPES
        and (plan.algorithm, plan.threads, plan.items_per_thread) not in OWN_PLUS
    )


#: (scan algorithm, threads, items per thread) where ``+`` stays the unit's own
#: functor all the same: measured on an H200 with the default ``warp_transpose``
#: tile I/O (bench/codegen_ablation.py --toggle plus,
#: docs/results/h200_2026-12-03_v10_plus_ablation.md), ``plus<>`` was 9-13%
#: slower at 512 x 4 and 11-17% at 512 x 8 with ``raking`` (ptxas gives the
#: kernel 40 and 52 registers a thread instead of 32 and 40), and 5% slower at
#: 256 x 16 with ``warp_scans`` on rows of 2048 (40 registers instead of 32).
#: In the other 14 configurations measured it ran at 0.989-1.27 times the
#: functor's speed (1.135-1.150 for ``raking_memoize`` + ``direct`` at 256 x 8).
OWN_PLUS = frozenset({("raking", 512, 4), ("raking", 512, 8), ("warp_scans", 256, 16)})


#: built-in operators that are exactly associative on integers (modulo 2**bits)
_INTEGER_ASSOCIATIVE = ("+", "*", "min", "max", "&", "|", "^")


def thread_items_first(plan: ScanPlan) -> bool:
    """Whether a scan with a prefix callback scans each thread's own items first.

    CUB's scan of several items per thread with a callback reduces each
    thread's items, scans the totals across the block, and only then, after
    the barrier that delivers the callback's prefix, scans each thread's items
    from its prefix: a chain of dependent operations between that barrier and
    the results. For integers and the exactly associative built-in operators
    the same results come from scanning the thread's items first and combining
    each with the prefix afterwards, which leaves only independent operations
    after the barrier. Floating point keeps CUB's order (reassociating would
    change rounding).
    """
    op = plan.scan_op
    return (
        plan.prefix_op is not None
        and plan.items_per_thread > 1
        and plan.value_dtype.kind in "iu"
        and op.is_builtin
        and str(op.builtin) in _INTEGER_ASSOCIATIVE
    )


def _partial_scan(n: int) -> list[str]:
    """The thread's own items scanned (``partial``), ahead of the block scan."""
    return [
        "  // exact for integers: the thread's items are scanned before the block",
        "  // scan, so only independent operations follow the prefix's barrier",
        f"  value_t partial[{n}];",
        "  partial[0] = input[0];",
        "  #pragma unroll",
        f"  for (int i = 1; i < {n}; ++i) partial[i] = scan_op_t{{}}(partial[i - 1], input[i]);",
    ]


def _thread_items_first_call(plan: ScanPlan) -> list[str]:
    n = plan.items_per_thread
    if plan.mode == "inclusive":
        combine = "output[i] = scan_op_t{}(thread_prefix, partial[i]);"
        start = 0
    else:
        combine = "output[i] = scan_op_t{}(thread_prefix, partial[i - 1]);"
        start = 1
    lines = [
        "  prefix_op_t prefix_op{state};",
        *_partial_scan(n),
        "  value_t thread_prefix;",
        f"  block_scan_t(temp_storage).ExclusiveScan(partial[{n - 1}], thread_prefix, "
        "scan_op_t{}, prefix_op);",
    ]
    if start:
        lines.append("  output[0] = thread_prefix;")
    lines += ["  #pragma unroll", f"  for (int i = {start}; i < {n}; ++i) {combine}"]
    return lines


def _io_decl(plan: ScanPlan) -> str:
    """``input`` and ``output``: the call's items, or for a reverse scan the thread's reversed."""
    n = plan.items_per_thread
    if not plan.reverse:
        return (
            f"  value_t (&input)[{n}]  = *static_cast<value_t (*)[{n}]>(in);\n"
            f"  value_t (&output)[{n}] = *static_cast<value_t (*)[{n}]>(out);"
        )
    return "\n".join(
        [
            "  // reverse=True: the tile is scanned from its end. Each thread takes its",
            "  // items last first (input); thread T-1's come first in the scan's order,",
            "  // so thread t's share of the block scan is made by rank T-1-t (_reverse_call).",
            f"  value_t (&tile_in)[{n}] = *static_cast<value_t (*)[{n}]>(in);",
            f"  value_t (&tile_out)[{n}] = *static_cast<value_t (*)[{n}]>(out);",
            f"  value_t input[{n}];",
            f"  value_t output[{n}];",
            "  #pragma unroll",
            f"  for (int i = 0; i < {n}; ++i) input[i] = tile_in[{n - 1} - i];",
        ]
    )


def _reverse_call(plan: ScanPlan, *, declare_slots: bool = True) -> list[str]:
    """A reverse scan: CUB's own steps for several items a thread, ranks mirrored.

    CUB scans ``ITEMS`` items a thread in three steps: the thread reduces its
    items (``cub::ThreadReduce``), the block scans the threads' totals (the
    one-item ``ExclusiveSum``/``ExclusiveScan`` with the call's other
    operands), and the thread scans its items from the prefix it got. Here the
    thread's items are its own taken last first (``input``), and only the
    middle step needs the threads in the scan's order: thread t's total goes
    through shared memory to rank T-1-t, and the prefix that rank gets comes
    back. The operations and their order are CUB's, so the results are those
    of a forward scan of the reversed tile, bit for bit. One item a thread is
    exchanged as it is and scanned by the call itself (CUB's one-item path).

    The two exchanges use separate slots, so no barrier is needed after the
    call: every thread has finished its reads of the temp storage and of the
    first slots before any passes the second barrier, and the next call writes
    the second slots only after its own first barrier. A caller with two
    branches of reverse scans (a look-back scan) declares the slots once
    before them (:func:`_reverse_slots`) and passes ``declare_slots=False``.
    """
    n, t = plan.items_per_thread, plan.threads
    bx, by, bz = plan.block
    lines = [
        *([_reverse_slots(plan)] if declare_slots else []),
        f"  const int rank = cub::RowMajorTid({bx}, {by}, {bz});",
        f"  const int mirror = {t - 1} - rank;",
    ]
    if plan.prefix_op is not None:
        lines.append("  prefix_op_t prefix_op{state};")
    if n == 1:
        return [
            *lines,
            "  reverse_slots[0][mirror] = input[0];",
            "  __syncthreads();",
            "  input[0] = reverse_slots[0][rank];",
            f"  {_block_call(plan, _scan_method(plan), ['input', 'output'])}",
            "  reverse_slots[1][mirror] = output[0];",
            "  __syncthreads();",
            "  tile_out[0] = reverse_slots[1][rank];",
        ]
    sum_path = plan.scan_op.is_sum and not plan.has_initial_value
    first = thread_items_first(plan)
    op = "::cuda::std::plus<>{}" if sum_path and not first else "scan_op_t{}"
    if first:
        lines += [*_partial_scan(n), f"  reverse_slots[0][mirror] = partial[{n - 1}];"]
        method = "ExclusiveScan"
    else:
        lines.append(f"  reverse_slots[0][mirror] = cub::ThreadReduce(input, {op});")
        method = "ExclusiveSum" if sum_path else "ExclusiveScan"
    lines += [
        "  __syncthreads();",
        "  value_t thread_prefix;",
        "  "
        + _block_call(plan, method, ["reverse_slots[0][rank]", "thread_prefix"], force_op=first),
        "  reverse_slots[1][mirror] = thread_prefix;",
        "  __syncthreads();",
        "  thread_prefix = reverse_slots[1][rank];",
    ]
    if first:
        if plan.mode == "inclusive":
            combine, start = "output[i] = scan_op_t{}(thread_prefix, partial[i]);", 0
        else:
            combine, start = "output[i] = scan_op_t{}(thread_prefix, partial[i - 1]);", 1
            lines.append("  output[0] = thread_prefix;")
        lines += ["  #pragma unroll", f"  for (int i = {start}; i < {n}; ++i) {combine}"]
    else:
        # CUB applies the prefix in every thread when there is a prefix callback,
        # an initial value or (exclusive sums) the implicit zero; else not in rank 0
        always = (
            plan.prefix_op is not None
            or plan.has_initial_value
            or (sum_path and plan.mode == "exclusive")
        )
        apply = "true" if always else "mirror != 0"
        loop = f"for (int i = 1; i < {n}; ++i)"
        step = f"acc = {op}(acc, input[i]);"
        lines += [
            "  value_t acc = input[0];",
            f"  if ({apply}) acc = {op}(thread_prefix, acc);",
            "  output[0] = " + ("acc;" if plan.mode == "inclusive" else "thread_prefix;"),
            "  #pragma unroll",
            f"  {loop} {{ {step} output[i] = acc; }}"
            if plan.mode == "inclusive"
            else f"  {loop} {{ output[i] = acc; {step} }}",
        ]
    return [
        *lines,
        "  #pragma unroll",
        f"  for (int i = 0; i < {n}; ++i) tile_out[{n - 1} - i] = output[i];",
    ]


def _scan_method(plan: ScanPlan) -> str:
    """The CUB method of the call (``InclusiveSum``, ``ExclusiveScan``, ...)."""
    sum_path = plan.scan_op.is_sum and not plan.has_initial_value
    return ("Inclusive" if plan.mode == "inclusive" else "Exclusive") + (
        "Sum" if sum_path else "Scan"
    )


def _block_call(plan: ScanPlan, method: str, operands: list[str], force_op: bool = False) -> str:
    """``block_scan_t(temp_storage).<method>(operands, <the call's other operands>);``."""
    args = list(operands)
    if plan.has_initial_value:
        args.append("*static_cast<const value_t*>(initial_value)")
    if force_op or not method.endswith("Sum"):
        args.append("scan_op_t{}")
    if plan.prefix_op is not None:
        args.append("prefix_op")
    if plan.has_block_aggregate:
        args.append("*static_cast<value_t*>(block_aggregate)")
    return f"block_scan_t(temp_storage).{method}({', '.join(args)});"


_LOOKBACK_TYPES = """\
// prefix_op=scan.lookback: CUB's tile status in global memory, and the prefix
// callback of its single-pass scans (decoupled look-back). The first warp
// publishes the tile's aggregate, waits for the tiles before it, and returns
// their combination; thread 0's seeds the scan and is published as the
// tile's inclusive prefix.
using tile_state_t = cub::ScanTileState<value_t>;
using lookback_op_t = cub::TilePrefixCallbackOp<value_t, scan_op_t, tile_state_t>;
struct prefix_op_t {
  void* state; // the lookback_op_t
  __device__ __forceinline__ value_t operator()(value_t block_aggregate)
  { return (*static_cast<lookback_op_t*>(state))(block_aggregate); }
};"""

_ORDERED_LOOKBACK_TYPES = """\
// prefix_op=scan.lookback with a deterministic status (scan.tile_status(...,
// deterministic=True)): CUB's tile status in global memory. Thread 0 publishes
// the tile's aggregate, walks back to the nearest earlier tile that has
// published its inclusive prefix, then combines the tiles after that one
// forward, in order (an inclusive prefix met on the way replaces the
// combination so far: it is the same combination). Every tile's prefix is
// then ((a0 op a1) op a2) op ... in one fixed order, whatever the timing, and
// is published as the tile's inclusive prefix with the tile's aggregate.
using tile_state_t = cub::ScanTileState<value_t>;
struct ordered_lookback_op_t {
  struct TempStorage {};
  tile_state_t& tile_state;
  int tile_index;
  __device__ __forceinline__ ordered_lookback_op_t(
      tile_state_t& state, TempStorage&, scan_op_t, int tile)
      : tile_state(state), tile_index(tile) {}
  __device__ value_t operator()(value_t block_aggregate) {
    // CUB's contract: only thread 0's return seeds the scan
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return block_aggregate;
    tile_state.SetPartial(tile_index, block_aggregate);
    typename tile_state_t::StatusWord status;
    value_t value;
    int first = tile_index - 1;
    for (;; --first) {
      tile_state.WaitForValid(first, status, value);
      if (status == cub::SCAN_TILE_INCLUSIVE) break;
    }
    value_t exclusive = value;
    for (int j = first + 1; j < tile_index; ++j) {
      tile_state.WaitForValid(j, status, value);
      exclusive = status == cub::SCAN_TILE_INCLUSIVE ? value : scan_op_t{}(exclusive, value);
    }
    tile_state.SetInclusive(tile_index, scan_op_t{}(exclusive, block_aggregate));
    return exclusive;
  }
};
using lookback_op_t = ordered_lookback_op_t;
struct prefix_op_t {
  void* state; // the lookback_op_t
  __device__ __forceinline__ value_t operator()(value_t block_aggregate)
  { return (*static_cast<lookback_op_t*>(state))(block_aggregate); }
};"""

_LOOKBACK_STORAGE = """\
struct temp_storage_t {
  typename block_scan_t::TempStorage scan;
  typename lookback_op_t::TempStorage lookback;
};"""


def _reverse_slots(plan: ScanPlan) -> str:
    """The shared slots a reverse scan exchanges the threads' totals and prefixes through."""
    return f"  __shared__ value_t reverse_slots[2][{plan.threads}];"


def _lookback_call(plan: ScanPlan) -> str:
    """A look-back scan: tile 0 scans alone and publishes; every later tile looks back.

    The two branches are the library's scans of the tile without a prefix
    (with the block aggregate, and the initial value if given) and with a
    prefix callback (the look-back op); inside each, ``temp_storage``,
    ``block_aggregate`` and ``state`` name what those scans expect. The
    branch is the same for every thread of a block, so each ends with the
    barrier its own scan needs before the storage is reused (none after a
    look-back where CUB's barrier after the callback suffices,
    :func:`callback_barrier_suffices`); a reverse scan's exchange slots are
    declared once, before the branches, so that the block holds one set.
    """
    # tile 0's scan; it publishes before its own trailing barrier (appended below)
    first = attrs.evolve(
        plan, lookback=False, prefix_op=None, has_block_aggregate=True, auto_sync=False
    )
    # a plan whose code calls prefix_op_t (here, the look-back op) as it calls a callback
    later = attrs.evolve(
        plan,
        lookback=False,
        prefix_op=LOOKBACK,  # type: ignore[arg-type]
        has_initial_value=False,
    )
    published = "tile_aggregate"
    if plan.has_initial_value:  # CUB's block aggregate leaves the initial value out
        published = "scan_op_t{}(*static_cast<const value_t*>(initial_value), tile_aggregate)"
    bx, by, bz = plan.block
    publish = [
        f"  if (cub::RowMajorTid({bx}, {by}, {bz}) == 0) tile_state.SetInclusive(0, {published});"
    ]
    if plan.auto_sync and not plan.reverse:  # a reverse scan ends with its own barrier
        publish.append(_SYNC)
    linear = "blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)"
    lines = [
        "  temp_storage_t& lookback_storage = temp_storage;",
        "  // the tiles the status row holds, as scan.tile_status sized and initialised it",
        f"  const int num_tiles = {status_tiles_cxx('status_bytes')};",
        f"  const long long tile_index = tile < 0 ? static_cast<long long>({linear}) : tile;",
        "  if (tile_index >= num_tiles) __trap(); // a tile the status does not hold",
        "  tile_state_t tile_state;",
        "  tile_state.Init(num_tiles, status, static_cast<size_t>(status_bytes));",
        *([_reverse_slots(plan)] if plan.reverse else []),
        "  if (tile_index == 0) {",
        "    typename block_scan_t::TempStorage& temp_storage = lookback_storage.scan;",
        "    value_t tile_aggregate;",
        "    void* block_aggregate = &tile_aggregate;",
        _indented("\n".join([_scan_call(first, declare_slots=False), *publish])),
        "  } else {",
        "    typename block_scan_t::TempStorage& temp_storage = lookback_storage.scan;",
        "    lookback_op_t lookback(tile_state, lookback_storage.lookback, scan_op_t{}, "
        "static_cast<int>(tile_index));",
        "    void* state = &lookback;",
        _indented(_scan_call(later, declare_slots=False)),
        "  }",
    ]
    return "\n".join(lines)


def _indented(text: str) -> str:
    return "\n".join(
        ("  " + line) if line and not line.startswith("#") else line for line in text.splitlines()
    )


def _scan_call(plan: ScanPlan, *, declare_slots: bool = True) -> str:
    if plan.lookback:
        return _lookback_call(plan)
    lines = []
    if plan.reverse:
        lines += _reverse_call(plan, declare_slots=declare_slots)
    elif thread_items_first(plan):
        lines += _thread_items_first_call(plan)
    else:
        if plan.prefix_op is not None:
            lines.append("  prefix_op_t prefix_op{state};")
        lines.append("  " + _block_call(plan, _scan_method(plan), ["input", "output"]))
    if plan.auto_sync and not plan.reverse:  # a reverse scan ends with its own barrier
        lines.append(_CALLBACK_SCAN_SYNC if callback_barrier_suffices(plan) else _SYNC)
    return "\n".join(lines)


def callback_barrier_suffices(plan: ScanPlan) -> bool:
    """Whether CUB's own barrier after the prefix callback makes the trailing one redundant.

    In CUB's ``warp_scans`` algorithm a scan with a prefix callback ends with a
    barrier after the callback; all that follows it is each thread reading the
    broadcast prefix. Library-owned storage is used by this scan alone, whose
    next call writes that prefix slot only after its own first barrier, and
    its warp aggregates after every thread has passed the callback barrier of
    this call. So every read of this call happens before the next call's
    writes without a further barrier. The generated code still falls back to
    the barrier for CCCL releases outside the ones whose code this was read
    from (3.0 to 3.5). A forward look-back scan is one too: its later tiles
    call the look-back op as their callback, so its storage is its own and
    never overlaid with other providers' (``Primitive.shares_storage``).
    """
    return (
        (plan.prefix_op is not None or plan.lookback)  # a look-back's later tiles call one
        and plan.algorithm == "warp_scans"
        and plan.temp_storage == "implicit"
        and not plan.reverse  # ends after its second exchange barrier (_reverse_call)
    )


_SYNC = "  __syncthreads(); // temp storage may be reused after this barrier"
_CALLBACK_SCAN_SYNC = (
    "#if CCCL_VERSION >= 3000000 && CCCL_VERSION < 3006000\n"
    "  // no barrier: CUB's barrier after the prefix callback already separates\n"
    "  // this call's reads of the storage from the next call's writes\n"
    "#else\n"
    f"{_SYNC}\n"
    "#endif"
)


def scan_unit(
    plan: ScanPlan,
    *,
    scan_callback: CallbackDecl | None = None,
    prefix_callback: CallbackDecl | None = None,
    symbol: str | None = None,
    storage: str | None = None,
    params: str,
) -> str:
    """C++ source of a block scan's provider.

    Parameters
    ----------
    plan : ScanPlan
    scan_callback : CallbackDecl, optional
        The lowered user scan operator (when ``plan.scan_op`` is not built in).
    prefix_callback : CallbackDecl, optional
        The lowered prefix callback (when ``plan.prefix_op`` is set).
    symbol : str, optional
        The entry point's name; ``plan.symbol`` by default.
    storage : str, optional
        The function returning the library-owned storage this provider shares
        in its unit (:func:`render_group`); its own storage by default.
    params : str
        The entry point's C++ parameter list (from the family's operand
        table: :func:`scan._spec.c_parameters`).
    """
    decls: Sequence[CallbackDecl] = [c for c in (scan_callback, prefix_callback) if c is not None]
    includes = [*value_includes(plan.value_dtype), "#include <cub/block/block_scan.cuh>"]
    temp_type = "using temp_storage_t = typename block_scan_t::TempStorage;"
    functors = _scan_functors(plan, scan_callback, prefix_callback)
    if plan.lookback:
        includes.append("#include <cub/agent/single_pass_scan_operators.cuh>")
        functors += "\n" + (_ORDERED_LOOKBACK_TYPES if plan.deterministic else _LOOKBACK_TYPES)
        temp_type = _LOOKBACK_STORAGE
    return _template("scan.cuh.in").substitute(
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=_summary(plan),
        includes="\n".join(includes),
        temp_type=temp_type,
        callback_decls="".join(c.c_decl.rstrip() + "\n" for c in decls),
        value_decl=value_decl(plan.value_dtype),
        block_x=plan.block[0],
        block_y=plan.block[1],
        block_z=plan.block[2],
        algorithm=CUB_SCAN_ALGORITHMS[plan.algorithm],
        functors=functors,
        symbol=symbol or plan.symbol,
        params=params,
        items_per_thread=plan.items_per_thread,
        temp_decl=_temp_decl(plan.temp_storage, storage),
        io_decl=_io_decl(plan),
        body=_scan_call(plan),
    )


def render_unit(
    plan: Any,
    *,
    header: str | Sequence[str],
    callbacks: Sequence[CallbackDecl],
    value: str,
    types: str,
    symbol: str | None,
    storage: str | None,
    params: str,
    comment: str,
    body: str,
    value_dtypes: Sequence[np.dtype[Any]] = (),
) -> str:
    """A provider's translation unit, for the families that render through one template.

    Parameters
    ----------
    plan
        The plan (its key, symbol, summary and temp-storage mode).
    header : str or sequence of str
        The CUB headers: each a name under ``cub/block/``, or a path under
        ``cub/`` (``warp/warp_scan.cuh``).
    callbacks : sequence of CallbackDecl
        The user callbacks the unit calls, declared before its types.
    value : str
        The declaration of ``value_t`` (:func:`value_decl`).
    types : str
        The unit's types; one of them is ``temp_storage_t``.
    symbol, storage : str or None
        As in :func:`scan_unit`.
    params : str
        The entry point's C++ parameter list (:func:`scan._spec.c_parameters`).
    comment : str
        One line on what the entry point does with its operands.
    body : str
        The entry point's statements after ``temp_storage`` is declared.
    value_dtypes : sequence of numpy.dtype
        Further dtypes of the unit's values (whose headers it includes).
    """
    return _template("unit.cuh.in").substitute(
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=_summary(plan),
        includes="\n".join(
            [
                *value_includes(
                    plan.value_dtype,
                    *(getattr(plan, "array_dtypes", None) or ()),
                    *value_dtypes,
                ),
                *(
                    f"#include <cub/{h}>" if "/" in h else f"#include <cub/block/{h}>"
                    for h in ([header] if isinstance(header, str) else header)
                ),
            ]
        ),
        callback_decls="".join(c.c_decl.rstrip() + "\n" for c in callbacks),
        value_decl=value,
        types=types,
        symbol=symbol or plan.symbol,
        params=params,
        comment=comment,
        temp_decl=_temp_decl(plan.temp_storage, storage),
        body=body,
    )


def group_storage(name: str) -> str:
    """The function of unit `name` that returns the buffer its sharing providers overlay."""
    return f"{name}_storage"


def render_group(name: str, units: Sequence[tuple[str, str, bool]]) -> str:
    """Several providers' units as one translation unit, for one NVRTC run.

    Compiling a unit costs mostly the parsing of CUB's headers, so the
    providers a kernel needs compile together. Each unit keeps its text inside
    a namespace of its own (its helper types keep their names); its entry
    point and layout constants carry a symbol local to the group (rendered
    with ``symbol=``), so several groups holding the same provider can be
    linked into one kernel without clashing.

    The providers marked as sharing (rendered with
    ``storage=group_storage(name)``) use one library-owned buffer, a union of
    their ``TempStorage`` types, instead of one each, as a CUB kernel overlays
    the storage of its primitives. Only providers that end with a barrier
    after their last use of the storage may share it (library-owned storage
    and ``auto_sync``, and not a scan that relies on CUB's callback barrier):
    then any later use, by whichever provider, comes after that barrier.

    Parameters
    ----------
    name : str
        The unit's name (a prefix of its internal symbols).
    units : sequence of (local symbol, source, shares storage)
        Each provider's unit (:func:`scan_unit`, :func:`tile_io_unit`)
        rendered with its local symbol, and whether it uses the shared buffer.
    """
    storage_fn = group_storage(name)
    includes: list[str] = []
    bodies: list[str] = []
    members: list[str] = []
    for i, (_, source, shares) in enumerate(units):
        lines = []
        for line in source.splitlines():
            if line.startswith("#include "):
                if line not in includes:
                    includes.append(line)
            else:
                lines.append(line)
        body = "\n".join(lines).strip("\n")
        if shares:
            members.append(f"  statefn_scan_unit{i}::temp_storage_t unit{i};")
        bodies.append(
            f"namespace statefn_scan_unit{i} {{\n{body}\n}} // namespace statefn_scan_unit{i}\n"
        )
    head = (
        f"// Generated by scan._codegen (generator version {GENERATOR_VERSION}); do not edit.\n"
        f"// {len(units)} providers in one unit: "
        + ", ".join(local for local, _, _ in units)
        + "\n"
    )
    text = head + "\n".join(includes) + "\n\n"
    if members:
        text += (
            "// The library-owned temp storage the sharing providers overlay.\n"
            f"static __device__ __forceinline__ void* {storage_fn}();\n\n"
        )
    text += "\n".join(bodies)
    if members:
        text += (
            f"\nunion {storage_fn}_t {{\n" + "\n".join(members) + "\n};\n\n"
            f"static __device__ __forceinline__ void* {storage_fn}()\n{{\n"
            f"  __shared__ {storage_fn}_t storage;\n"
            "  return &storage;\n}\n"
        )
    return text


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


def word_moves(load: bool, address: str, buffer: str, words: int) -> list[str]:
    """C++ lines moving `words` 16-byte words between `address` (in the array) and the
    local array `buffer`: loads (`load`) or stores; the caller checks the alignment."""
    if load:
        return [
            f"const uint4* v = reinterpret_cast<const uint4*>({address});",
            f"uint4 w[{words}];",
            f"for (int k = 0; k < {words}; ++k) w[k] = v[k];",
            f"memcpy(&{buffer}, w, sizeof(w));",
        ]
    return [
        f"uint4* v = reinterpret_cast<uint4*>({address});",
        f"uint4 w[{words}];",
        f"memcpy(w, &{buffer}, sizeof(w));",
        f"for (int k = 0; k < {words}; ++k) v[k] = w[k];",
    ]


def _converted_vectors(plan: TileIOPlan) -> str:
    """A converting ``vectorize`` full tile's accesses: each thread's narrow items as 16-byte
    vectors (empty: not a converting plan, or a thread's items are no whole vectors).

    CUB's ``BLOCK_LOAD_VECTORIZE`` moves ``__half`` and ``__nv_bfloat16``
    items one by one (they are not among the types it vectorises): 2-byte
    accesses 16 bytes apart. A thread's items lie together in the blocked
    arrangement, so they are moved as ``uint4`` words (8 half-precision items
    each; a warp's accesses then cover 512 contiguous bytes), the way
    :func:`_blocked_tail` moves a partial tile's whole threads. The caller
    has checked that ``p`` is 16-byte aligned.
    """
    if plan.array_dtypes is None:
        return ""
    n = plan.items_per_thread
    nbytes = n * plan.array_dtype.itemsize
    if nbytes % 16 != 0:
        return ""
    bx, by, bz = plan.block
    first = f"cub::RowMajorTid({bx}, {by}, {bz}) * {n}"
    lines = word_moves(plan.direction == "load", f"p + {first}", "memory_items", nbytes // 16)
    return "\n      ".join(lines)


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
        vectors = _converted_vectors(plan)
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
    return _template("tile_io.cuh.in").substitute(
        moves,
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=_summary(plan),
        includes=_tile_io_includes(plan),
        value_decl=values,
        symbol=symbol or plan.symbol,
        params=params,
        tile_items=plan.tile_items,
        temp_decl=_temp_decl(plan.temp_storage, storage),
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
            _template("tile_io_field.cuh.in").substitute(
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
    return _template("tile_io_zip.cuh.in").substitute(
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=_summary(plan),
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
        temp_decl=_temp_decl(plan.temp_storage, storage),
        pointers=f"{const}void* const* ptrs = static_cast<{const}void* const*>(ptr);",
        field_calls="\n".join(calls),
        sync=sync,
    )
