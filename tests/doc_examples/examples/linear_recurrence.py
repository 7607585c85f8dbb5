# SPDX-License-Identifier: Apache-2.0
"""Linear recurrences ``h[t] = a[t] * h[t-1] + x[t]``: forward and backward passes on torch
tensors (docs/linear-recurrence.md).

Rows are the last axis of ``(..., T)`` tensors (``(B, C, T)`` for B sequences of C channels).
Four kernels for each accumulator dtype: a forward and a backward pass with one block per row
(a tile loop carrying the prefix in a stateful callback), and the same two passes with one block
per tile (cross-block look-back), for a few long rows. :func:`linear_recurrence` picks one pair
and wraps it in a ``torch.autograd.Function``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from numba import config, cuda

import scan
import statefn
from scan import block

THREADS, ITEMS = 256, 8  # one block a row: a tile of 2048 items (128 x 16: see _shape)
SIMULATOR = bool(config.ENABLE_CUDASIM)  # NUMBA_ENABLE_CUDASIM=1: CPU tensors run in the simulator


# magictoken.recurrence_kernels.begin
@functools.cache
def kernels(acc: type[np.floating[Any]], ITEMS: int = ITEMS) -> dict[str, Any]:
    """The four kernels for state (accumulator) dtype ``acc`` and ``ITEMS`` items a thread."""
    # an item is the map h -> a * h + b; a row's maps composed give its states
    pair = np.dtype([("a", acc), ("b", acc)], align=True)

    @cuda.jit(device=True)
    def first_then(x, y):  # x first, then y: h -> y.a * (x.a * h + x.b) + y.b
        return (x.a * y.a, y.a * x.b + y.b)

    @cuda.jit(device=True)
    def after(x, y):  # x after y (a reverse scan's operator): h -> x.a * (y.a * h + y.b) + x.b
        return (x.a * y.a, x.a * y.b + x.b)

    @statefn.stateful(pair)
    def before(state, block_aggregate):
        prefix = (state[0].a, state[0].b)  # every earlier tile, composed
        state[0].a = prefix[0] * block_aggregate.a
        state[0].b = block_aggregate.a * prefix[1] + block_aggregate.b
        return prefix

    @statefn.stateful(pair)
    def behind(state, block_aggregate):
        suffix = (state[0].a, state[0].b)  # every later tile, composed
        state[0].a = block_aggregate.a * suffix[0]
        state[0].b = block_aggregate.a * suffix[1] + block_aggregate.b
        return suffix

    @cuda.jit
    def forward(a, x, h0, h, h_last):
        # one block a row: h[t] = a[t] * h[t-1] + x[t], h[-1] = h0
        row = cuda.blockIdx.x
        state = cuda.local.array(1, pair)
        state[0].a = 1.0
        state[0].b = h0[row]  # the map h -> h0: the state before the row
        items = cuda.local.array(ITEMS, pair)
        for base in block.tiles(a.shape[1], items):
            # field a from a, field b from x; past the row's end the identity map
            block.load((a[row], x[row]), base, items, oob_default=(1.0, 0.0))
            block.inclusive_scan(items, scan_op=first_then, prefix_op=before, prefix_state=state)
            block.store(h[row], base, items, field="b")  # each map applied to h0
        if cuda.threadIdx.x == 0:
            h_last[row] = state[0].b  # thread 0's state is the authoritative one

    @cuda.jit
    def backward(a, h, dy, h0, dh_last, da, dx, dh0):
        # dh[t] = dy[t] + a[t+1] * dh[t+1], dh[T-1] = dy[T-1] + dh_last;
        # da[t] = dh[t] * h[t-1], dx[t] = dh[t], dh0 = a[0] * dh[0].
        # With u[t] = a[t] * dh[t] = a[t] * (dy[t] + u[t+1]), the maps z -> a[t] * z + a[t] * dy[t]
        # composed from the row's end give u, and an exclusive scan gives u[t+1] at t: no item
        # needs its neighbour's a.
        row, n = cuda.blockIdx.x, a.shape[1]
        state = cuda.local.array(1, pair)
        state[0].a = 1.0  # the identity map: nothing to the right yet
        state[0].b = 0.0
        items = cuda.local.array(ITEMS, pair)
        dh = cuda.local.array(ITEMS, acc)
        h_before = cuda.local.array(ITEMS, acc)
        for base in block.tiles(n, items, reverse=True):  # from the row's last tile down to 0
            block.load((a[row], dy[row]), base, items, oob_default=(1.0, 0.0))
            if base > 0:
                block.load(h[row], base - 1, h_before)  # h[t - 1]
            else:  # the row's first tile: h[-1] is h0
                for i in range(ITEMS):
                    t = cuda.threadIdx.x * ITEMS + i
                    if t == 0:
                        h_before[i] = h0[row]
                    elif t <= n:
                        h_before[i] = h[row, t - 1]
            for i in range(ITEMS):
                t = base + cuda.threadIdx.x * ITEMS + i
                dh[i] = items[i].b + (dh_last[row] if t == n - 1 else 0.0)  # dy, the seed added
                items[i].b = items[i].a * dh[i]
            block.exclusive_scan(
                items, scan_op=after, prefix_op=behind, prefix_state=state, reverse=True
            )
            for i in range(ITEMS):
                dh[i] += items[i].b  # + u[t + 1]
                h_before[i] *= dh[i]
            block.store(dx[row], base, dh)
            block.store(da[row], base, h_before)
        if cuda.threadIdx.x == 0:
            dh0[row] = state[0].b  # u[0]: every map composed, applied to 0

    @cuda.jit
    def forward_lookback(a, x, h0, h, h_last, status):
        # one block a tile, a grid of (tiles, rows): the tile's prefix from earlier blocks
        row, tile = cuda.blockIdx.y, cuda.blockIdx.x
        n = a.shape[1]
        items = cuda.local.array(ITEMS, pair)
        base = tile * block.tile_size(items)
        block.load((a[row], x[row]), base, items, oob_default=(1.0, 0.0))
        if tile == 0 and cuda.threadIdx.x == 0:
            items[0].b += items[0].a * h0[row]  # h[0] = a[0] * h0 + x[0]
        block.inclusive_scan(
            items,
            scan_op=first_then,
            prefix_op=scan.lookback,
            prefix_state=status[row],
            tile=tile,
        )
        block.store(h[row], base, items, field="b")
        for i in range(ITEMS):
            if base + cuda.threadIdx.x * ITEMS + i == n - 1:
                h_last[row] = items[i].b

    @cuda.jit
    def backward_lookback(a, h, dy, h0, dh_last, da, dx, dh0, status):
        # tiles numbered from the row's end: tile 0 is the last
        row, tile = cuda.blockIdx.y, cuda.blockIdx.x
        n = a.shape[1]
        items = cuda.local.array(ITEMS, pair)
        dh = cuda.local.array(ITEMS, acc)
        h_before = cuda.local.array(ITEMS, acc)
        size = block.tile_size(items)
        base = ((n - 1) // size - tile) * size
        block.load((a[row], dy[row]), base, items, oob_default=(1.0, 0.0))
        if base > 0:
            block.load(h[row], base - 1, h_before)
        else:
            for i in range(ITEMS):
                t = cuda.threadIdx.x * ITEMS + i
                if t == 0:
                    h_before[i] = h0[row]
                elif t <= n:
                    h_before[i] = h[row, t - 1]
        a0 = items[0].a  # a[0] in the row's first tile's thread 0
        for i in range(ITEMS):
            t = base + cuda.threadIdx.x * ITEMS + i
            dh[i] = items[i].b + (dh_last[row] if t == n - 1 else 0.0)
            items[i].b = items[i].a * dh[i]
        block.exclusive_scan(
            items,
            scan_op=after,
            initial_value=(1.0, 0.0),  # nothing after the row's last item
            prefix_op=scan.lookback,
            prefix_state=status[row],
            tile=tile,
            reverse=True,
        )
        for i in range(ITEMS):
            dh[i] += items[i].b
            h_before[i] *= dh[i]
        block.store(dx[row], base, dh)
        block.store(da[row], base, h_before)
        if base == 0 and cuda.threadIdx.x == 0:
            dh0[row] = a0 * dh[0]

    return {
        "pair": pair,
        "forward": forward,
        "backward": backward,
        "forward_lookback": forward_lookback,
        "backward_lookback": backward_lookback,
    }


# magictoken.recurrence_kernels.end


# magictoken.recurrence_torch.begin
STORAGE = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def linear_recurrence(
    a: torch.Tensor,
    x: torch.Tensor,
    h0: torch.Tensor | None = None,
    *,
    lookback: bool | None = None,
    threads: int | None = None,
    items: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``h[t] = a[t] * h[t-1] + x[t]`` along the last axis, differentiable; ``(h, h[..., -1])``.

    ``a``, ``x``: contiguous CUDA tensors of one shape ``(..., T)`` and one dtype (float32,
    float64, float16 or bfloat16; half precision is stored as it is and computed in float32).
    ``h0``: the state before ``t = 0``, shape ``(...)``, or None for zeros. The final state
    comes back in the accumulator's dtype (float32, or float64 for float64 tensors).
    ``lookback``: one block per tile across the GPU (True), one block per row (False), or by
    the number of rows (None: look-back when there are fewer rows than multiprocessors).
    ``threads``, ``items``: the block size and items per thread (None: one block a row at
    128 x 16 for half-precision rows and rows of at most 2048, else 256 x 8, the fastest
    measured on an H100, docs/linear-recurrence.md; across blocks,
    ``block.launch_shape(T, pair, cross_block=True)``).
    """
    check_inputs(a, x, h0)
    for name, value in (("threads", threads), ("items", items)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{name}= must be a positive int or None (got {value!r})")
    h, h_last = LinearRecurrence.apply(a, x, h0, (lookback, threads, items))
    return h, h_last


class LinearRecurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: Any, x: Any, h0: Any, how: Any) -> Any:
        h, h_last = recurrence_forward(a, x, h0, *how)
        ctx.save_for_backward(a, h, h0)
        ctx.how = how
        # an output the loss does not use gets None as its gradient, not a tensor of zeros
        # filled by a kernel of its own: the backward pass reads shared zeros instead
        ctx.set_materialize_grads(False)
        return h, h_last

    @staticmethod
    def backward(ctx: Any, dy: Any, dh_last: Any) -> Any:
        a, h, h0 = ctx.saved_tensors
        dy = torch.zeros_like(a) if dy is None else dy.contiguous()
        da, dx, dh0 = recurrence_backward(a, h, dy, h0, dh_last, *ctx.how)
        return da, dx, (dh0.to(h0.dtype) if h0 is not None else None), None


def check_inputs(a: Any, x: Any, h0: Any) -> None:
    """Refuse what the kernels cannot take, before any launch."""
    if not isinstance(a, torch.Tensor) or not isinstance(x, torch.Tensor):
        raise TypeError(
            f"a and x must be torch tensors (got {type(a).__name__}, {type(x).__name__})"
        )
    if a.shape != x.shape or a.dtype != x.dtype:
        raise ValueError(
            f"a and x must have one shape and dtype (got {tuple(a.shape)} {a.dtype} and "
            f"{tuple(x.shape)} {x.dtype}): broadcast or convert them first"
        )
    if a.dtype not in STORAGE:
        raise TypeError(f"a and x have dtype {a.dtype}: use one of {', '.join(map(str, STORAGE))}")
    if a.dim() == 0 or a.shape[-1] == 0:
        raise ValueError(
            f"a and x need a time axis of at least 1 step (got shape {tuple(a.shape)})"
        )
    for name, t in (("a", a), ("x", x)):
        if t.device.type != "cuda" and not SIMULATOR:
            raise ValueError(
                f"{name} is on {t.device}: the kernels need CUDA tensors ({name}.cuda())"
            )
        if t.device != a.device:
            raise ValueError(f"a is on {a.device} and x on {x.device}: move them to one device")
        if not t.is_contiguous():
            raise ValueError(f"{name} is not contiguous: pass {name}.contiguous()")
    if h0 is not None and (
        not isinstance(h0, torch.Tensor) or h0.shape != a.shape[:-1] or h0.device != a.device
    ):
        shape = tuple(h0.shape) if isinstance(h0, torch.Tensor) else type(h0).__name__
        raise ValueError(
            f"h0 must be a tensor of shape {tuple(a.shape[:-1])} (a's without its time axis) "
            f"on {a.device} (got {shape})"
        )


def recurrence_forward(a, x, h0, lookback, threads, items):
    """The forward pass: ``(h, h_last)``, launched on torch's current stream."""
    T = a.shape[-1]
    rows = a.numel() // T
    acc = torch.float64 if a.dtype == torch.float64 else torch.float32
    h = torch.empty_like(a)
    h_last = torch.empty(a.shape[:-1], dtype=acc, device=a.device)
    if rows == 0:
        return h, h_last
    h0 = _zeros(rows, acc, a.device) if h0 is None else h0.reshape(rows).to(acc)
    args = [a.view(rows, T), x.view(rows, T), h0.contiguous(), h.view(rows, T), h_last.view(rows)]
    across = _use_lookback(lookback, rows, a.device)
    threads, items = _shape(a.dtype, acc, T, across, threads, items)
    k = kernels(np.float64 if acc == torch.float64 else np.float32, items)
    if across:
        tiles = -(-T // (threads * items))
        args.append(_status(rows, tiles, k["pair"], a.device))
        _launch(k["forward_lookback"], (tiles, rows), threads, args)
    else:
        _launch(k["forward"], rows, threads, args)
    return h, h_last


def recurrence_backward(a, h, dy, h0, dh_last, lookback, threads, items):
    """The backward pass: ``(da, dx, dh0)``, launched on torch's current stream."""
    T = a.shape[-1]
    rows = a.numel() // T
    acc = torch.float64 if a.dtype == torch.float64 else torch.float32
    da, dx = torch.empty_like(a), torch.empty_like(a)
    dh0 = torch.empty(a.shape[:-1], dtype=acc, device=a.device)
    if rows == 0:
        return da, dx, dh0
    h0 = _zeros(rows, acc, a.device) if h0 is None else h0.reshape(rows).to(acc)
    if dh_last is None:  # h_last's gradient where the loss does not use h_last
        dh_last = _zeros(rows, acc, a.device)
    dh_last = dh_last.reshape(rows).to(acc).contiguous()
    view = [t.view(rows, T) for t in (a, h, dy)]
    args = [*view, h0.contiguous(), dh_last, da.view(rows, T), dx.view(rows, T), dh0.view(rows)]
    across = _use_lookback(lookback, rows, a.device)
    threads, items = _shape(a.dtype, acc, T, across, threads, items)
    k = kernels(np.float64 if acc == torch.float64 else np.float32, items)
    if across:
        tiles = -(-T // (threads * items))
        args.append(_status(rows, tiles, k["pair"], a.device))
        _launch(k["backward_lookback"], (tiles, rows), threads, args)
    else:
        _launch(k["backward"], rows, threads, args)
    return da, dx, dh0


def _shape(
    dtype: torch.dtype, acc: torch.dtype, T: int, across: bool, threads: Any, items: Any
) -> tuple[int, int]:
    """Threads and items per thread: those given, else the measured ones."""
    if across:  # one block a tile: the library's proposal for cross-block scans of pairs
        a = np.float64 if acc == torch.float64 else np.float32
        pair = np.dtype([("a", a), ("b", a)], align=True)
        shape = block.launch_shape(T, pair, cross_block=True)
        threads = shape.threads if threads is None else threads
        return threads, shape.items_per_thread if items is None else items
    # one block a row: a row of at most 2048 items in one tile, and half-precision rows, at
    # 128 x 16 (two 16-byte words of each array a thread); longer float32 and float64 rows at
    # 256 x 8 (the fastest measured, docs/linear-recurrence.md)
    short = T <= 2048 and dtype != torch.float64
    default = (128, 16) if short or dtype in (torch.float16, torch.bfloat16) else (THREADS, ITEMS)
    return default[0] if threads is None else threads, default[1] if items is None else items


def _use_lookback(lookback: bool | None, rows: int, device: torch.device) -> bool:
    if lookback is not None:
        return lookback
    if device.type != "cuda":
        return False
    if device not in _SMS:
        _SMS[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return rows < _SMS[device]


_SMS: dict[torch.device, int] = {}
_STREAMS: dict[int, Any] = {}


def _stream(device: torch.device, handle: int | None = None) -> Any:
    """torch's current stream on `device` (or the stream `handle`), as numba-cuda's stream
    object (made once a stream)."""
    if handle is None:
        handle = torch.cuda.current_stream(device).cuda_stream
    if handle not in _STREAMS:
        _STREAMS[handle] = cuda.external_stream(handle)
    return _STREAMS[handle]


_ZEROS: dict[tuple[Any, ...], Any] = {}


def _zeros(rows: int, acc: torch.dtype, device: torch.device) -> Any:
    """``rows`` zeros the kernels only read (a missing h0 or h_last gradient), made once per
    device, dtype and count and never freed (kernels on any stream may read them): no fill
    kernel in each pass, nor in a CUDA graph captured after a first call. Zeros first asked
    for while a graph is being captured are made for that graph alone (its memory is the
    graph's: not kept beyond it)."""
    key = (str(device), acc, rows)
    if key in _ZEROS:
        return _ZEROS[key]
    zeros = torch.zeros(rows, dtype=acc, device=device)
    if device.type != "cuda" or not torch.cuda.is_current_stream_capturing():
        _ZEROS[key] = zeros
    return zeros


_STATUS: dict[tuple[Any, ...], Any] = {}


def _status(rows: int, tiles: int, pair: np.dtype[Any], device: torch.device) -> Any:
    """A look-back status of (rows, tiles), kept per stream and reset before each launch."""
    stream = _stream(device) if device.type == "cuda" else None
    handle = torch.cuda.current_stream(device).cuda_stream if stream is not None else 0
    key = (str(device), handle, rows, tiles, pair)
    if key not in _STATUS:
        _STATUS[key] = scan.tile_status((rows, tiles), pair, stream=stream)
    else:
        _STATUS[key].reset(stream)  # ordered before the launch on the same stream
    return _STATUS[key]


def _array(t: Any) -> Any:
    """The kernel argument for tensor ``t``: no copy and no host synchronisation."""
    if not isinstance(t, torch.Tensor):
        return t
    if t.requires_grad:
        t = t.detach()
    if t.device.type == "cuda":
        return t  # numba-cuda reads it through DLPack, ordered on the launch's stream
    if t.dtype == torch.bfloat16:  # in the simulator: NumPy's bfloat16 is ml_dtypes'
        import ml_dtypes

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()  # in the simulator: the tensor's own memory


_LAUNCHERS: dict[tuple[Any, ...], Any] = {}


def _launch(kernel: Any, grid: Any, threads: int, args: list[Any]) -> None:
    """``kernel[grid, threads, stream](*args)`` on torch's current stream, through a
    ``scan.launcher`` kept per kernel, grid, stream and argument dtypes: after its first
    launch it types and packs the tensors itself and launches with cuda.core, a few
    microseconds of host time where ``kernel[...]`` takes tens a tensor (docs/performance.md)."""
    arrays = [_array(t) for t in args]
    device = args[0].device
    if device.type != "cuda":  # the simulator
        kernel[grid, threads](*arrays)
        return
    handle = torch.cuda.current_stream(device).cuda_stream
    # a launcher keeps the argument types of its first launch: one per storage dtype too
    key = (kernel, grid, threads, handle, *(getattr(t, "dtype", None) for t in args))
    launch = _LAUNCHERS.get(key)
    if launch is None:
        stream = _stream(device, handle)
        launch = _LAUNCHERS[key] = scan.launcher(kernel, grid, threads, stream=stream)
    launch(*arrays)


# magictoken.recurrence_torch.end
