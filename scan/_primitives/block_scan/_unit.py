# SPDX-License-Identifier: Apache-2.0
"""Block scan plans to C++: the scan providers' units (:func:`scan_unit`).

Each unit instantiates CUB's ``BlockScan`` from the template ``scan.cuh.in``
through the shared unit assembly of :mod:`scan._codegen`: the operator and
prefix functors, the thread's items scanned first where that is faster, the
reverse exchange, and the cross-block look-back (CUB's, or the ordered one
of a deterministic status).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..._codegen import (
    GENERATOR_VERSION,
    CallbackDecl,
    cub_plus_dtype,
    functor_calling,
    operator_functor,
    prefix_functor,
    temp_decl,
    template,
    unit_summary,
    value_decl,
    value_includes,
)
from ..._lookback import LOOKBACK, status_tiles_cxx
from ..._vocab import CUB_SCAN_ALGORITHMS
from ._plan import ScanPlan

__all__ = [
    "OWN_PLUS",
    "callback_barrier_suffices",
    "cub_plus",
    "scan_unit",
    "thread_items_first",
]


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
        and cub_plus_dtype(plan.value_dtype)
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
// deterministic=True)): CUB's tile status in global memory, and a look-back
// whose every prefix is one fixed combination of the tiles' aggregates,
// whatever the timing and the number of blocks. Every 32nd tile is an
// anchor; only anchors publish an inclusive prefix:
//   L(0) = a0 (tile 0 publishes it), L(A) = (L(A - 32) op R(A - 31 .. A - 1)) op aA,
// and the exclusive prefix of tile t, with A the last anchor before it, is
//   L(A) op R(A + 1 .. t - 1)  (L(A) alone when t = A + 1),
// where R combines consecutive aggregates in a tree fixed by their count.
// A tile needs only its predecessors' aggregates (partial statuses): an
// anchor that has not published yet is rebuilt from the nearest one that
// has, anchor by anchor, with the same formula. The first warp calls the
// callback (CUB's contract) and every lane takes part, since
// ScanTileState::WaitForValid votes over the whole warp.
using tile_state_t = cub::ScanTileState<value_t>;
// The pauses of CUB's look-back on sm_70 and later: on a grid of 500 blocks or
// more, the warp sleeps before its first look at the earlier tiles (about an
// L2 write's latency) and between polls of tiles that are still invalid, so
// that waiting warps leave the status's cache lines to the tiles publishing
// to them; on smaller grids a fence keeps each poll a load.
struct lookback_pause_t {
  unsigned ns;
  __device__ __forceinline__ void operator()() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    if (gridDim.x >= 500) {
      __nanosleep(ns);
      return;
    }
#endif
    __threadfence_block();
  }
};
struct ordered_lookback_op_t {
  struct TempStorage {};
  tile_state_t& tile_state;
  int tile_index;
  __device__ __forceinline__ ordered_lookback_op_t(
      tile_state_t& state, TempStorage&, scan_op_t, int tile)
      : tile_state(state), tile_index(tile) {}
  // R: lanes 0 .. count - 1 combined in a tree fixed by count (earlier lanes
  // on the left), for every lane
  static __device__ __forceinline__ value_t combine(value_t v, int lane, int count) {
    for (int d = 1; d < 32; d *= 2) {
      const value_t other = cub::ShuffleIndex<32>(v, (lane + d) & 31, 0xffffffffu);
      if ((lane & (2 * d - 1)) == 0 && lane + d < count) v = scan_op_t{}(v, other);
    }
    return cub::ShuffleIndex<32>(v, 0, 0xffffffffu);
  }
  __device__ value_t operator()(value_t block_aggregate) {
    // the lane: the block's x dimension is a multiple of 32 (the planner checks)
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (lane == 0) tile_state.SetPartial(tile_index, block_aggregate);
    const lookback_pause_t poll{350};
    lookback_pause_t{450}();
    typename tile_state_t::StatusWord status;
    value_t value;
    const int anchor = (tile_index - 1) / 32 * 32;
    const int count = tile_index - 1 - anchor;  // tiles between the anchor and this one
    // lanes below count: those tiles; the others: the anchor
    tile_state.WaitForValid(lane < count ? anchor + 1 + lane : anchor, status, value, poll);
    const value_t between = combine(value, lane, count);
    value_t prefix = cub::ShuffleIndex<32>(value, count, 0xffffffffu);
    if (!__shfl_sync(0xffffffffu, status == cub::SCAN_TILE_INCLUSIVE, count)) {
      // the nearest earlier anchor with an inclusive prefix: lane l looks at the
      // (l + 1)-th anchor before, 32 anchors at a time (tile 0 ends the search)
      int found = anchor;
      for (;;) {
        const int look = found - 32 * (lane + 1);
        tile_state.WaitForValid(look > 0 ? look : 0, status, value, poll);
        const unsigned inclusive = __ballot_sync(0xffffffffu, status == cub::SCAN_TILE_INCLUSIVE);
        if (inclusive != 0) {
          const int nearest = __ffs(inclusive) - 1;
          const int at = found - 32 * (nearest + 1);
          found = at > 0 ? at : 0;
          prefix = cub::ShuffleIndex<32>(value, nearest, 0xffffffffu);
          break;
        }
        found -= 32 * 32;
      }
      // then anchor by anchor up to this tile's: L(B) = (L(B - 32) op R(31 tiles)) op aB,
      // or B's own inclusive prefix where it has published it since (the same value)
      for (int b = found + 32; b <= anchor; b += 32) {
        tile_state.WaitForValid(b - 31 + lane, status, value, poll);
        const value_t group = combine(value, lane, 31);
        const value_t last = cub::ShuffleIndex<32>(value, 31, 0xffffffffu);
        const bool done = __shfl_sync(0xffffffffu, status == cub::SCAN_TILE_INCLUSIVE, 31);
        prefix = done ? last : scan_op_t{}(scan_op_t{}(prefix, group), last);
      }
    }
    const value_t exclusive = count > 0 ? scan_op_t{}(prefix, between) : prefix;
    if (lane == 0 && tile_index % 32 == 0)
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
    return template("scan.cuh.in").substitute(
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=unit_summary(plan),
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
        temp_decl=temp_decl(plan.temp_storage, storage),
        io_decl=_io_decl(plan),
        body=_scan_call(plan),
    )
