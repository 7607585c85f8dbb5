# SPDX-License-Identifier: Apache-2.0
"""The linear-recurrence job: ``h[t] = a[t] * h[t-1] + x[t]``, forward and forward+backward.

Contenders, each on the same values in its own layout, on torch tensors:

``project``       the docs' example (``tests/doc_examples/examples/linear_recurrence.py``):
                  one block per row, or cross-block look-back for fewer rows than
                  multiprocessors; ``project_rows`` / ``project_lookback`` force one
``accel_warp``    accelerated-scan's CUDA kernel (``accelerated_scan.warp.scan``, (B, C, T),
                  T a power of 2 up to 65536; built by torch's ``load_inline`` at import)
``accel_triton``  accelerated-scan's Triton kernel (``accelerated_scan.scalar.scan``)
``fla_chunk``     flash-linear-attention's ``fla.ops.hgrn.chunk_hgrn(x, g)``, (B, T, C),
                  ``a = exp(g)``
``fla_fused``     ``fla.ops.hgrn.fused_recurrent_hgrn(x, g)``
``copy``          a device-to-device copy of the forward's bytes (the memory roofline)

A peer that does not import is reported (``ERROR``) and skipped; nothing is installed here.
Every output (h; da and dx after the backward with a random dy) is compared with a float64
sequential reference (one CUDA thread a row, plain Numba) and the relative L2 error reported.
Times are medians of CUDA-event-timed calls after warm-up, contenders interleaved round by
round; ``eager`` times the Python call as users make it, ``graph`` replays a CUDA graph of it
(device time alone) where capture works. GB/s counts the storage dtype's bytes: forward a, x
read and h written; backward a, h, dy read and da, dx written.

Prints ``RESULT bench=recurrence ...`` lines; with ``--out`` also writes ``recurrence.csv`` and
``recurrence.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SHAPES = ((8, 1536, 2048), (8, 1536, 8192), (2, 768, 65536), (1, 16, 1 << 20))
QUICK_SHAPES = ((2, 64, 2048), (1, 4, 1 << 16))
PEERS = ("accel_warp", "accel_triton", "fla_chunk", "fla_fused")


def _example() -> Any:
    path = REPO / "tests" / "doc_examples" / "examples" / "linear_recurrence.py"
    spec = importlib.util.spec_from_file_location("linear_recurrence_example", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------- reference


def _reference_kernels() -> tuple[Any, Any]:
    import numpy as np
    from numba import cuda

    @cuda.jit
    def forward(a, x, h):  # one thread a row, float64, in order
        row = cuda.grid(1)
        if row < a.shape[0]:
            s = 0.0
            for t in range(a.shape[1]):
                s = np.float64(a[row, t]) * s + np.float64(x[row, t])
                h[row, t] = s

    @cuda.jit
    def backward(a, h, dy, da, dx):
        row = cuda.grid(1)
        if row < a.shape[0]:
            n = a.shape[1]
            dh = 0.0
            for t in range(n - 1, -1, -1):
                after = np.float64(a[row, t + 1]) * dh if t + 1 < n else 0.0
                dh = np.float64(dy[row, t]) + after
                dx[row, t] = dh
                da[row, t] = dh * (h[row, t - 1] if t > 0 else 0.0)

    return forward, backward


def reference(a: Any, x: Any, dy: Any) -> tuple[Any, Any, Any]:
    """(h, da, dx) in float64, from float64 copies of the (B, C, T) inputs."""
    import torch
    from numba import cuda

    forward, backward = _reference_kernels()
    T = a.shape[-1]
    a64, x64, dy64 = (t.reshape(-1, T).double().contiguous() for t in (a, x, dy))
    h, da, dx = (torch.empty_like(a64) for _ in range(3))
    rows = a64.shape[0]
    grid = (-(-rows // 128), 128)
    forward[grid](*(cuda.as_cuda_array(t) for t in (a64, x64, h)))
    backward[grid](*(cuda.as_cuda_array(t) for t in (a64, h, dy64, da, dx)))
    torch.cuda.synchronize()
    return h.view(a.shape), da.view(a.shape), dx.view(a.shape)


def rel_error(got: Any, want: Any) -> float:
    diff = (got.double() - want).norm().item()
    base = want.norm().item()
    return diff / base if base else diff


def tolerance(dtype_name: str) -> float:
    """The largest relative L2 error an output may have against the float64 reference."""
    return 1e-4 if dtype_name == "float32" else 3e-2


def within(errors: Any, dtype_name: str) -> bool:
    """Whether every error is finite and within :func:`tolerance`."""
    tol = tolerance(dtype_name)
    return all(math.isfinite(e) and e < tol for e in errors)


# ---------------------------------------------------------------------------- contenders


class Contender:
    """One implementation: ``forward(a, x) -> h`` and ``backward(a, x, dy) -> (h, da, dx)`` on
    (B, C, T) tensors; ``prepare`` turns the common inputs into its own layout once."""

    name: str = ""

    def supports(self, shape: tuple[int, int, int], dtype: Any) -> str | None:
        return None

    def prepare(self, a: Any, x: Any, dy: Any) -> Any:
        a = a.detach().clone().requires_grad_()
        x = x.detach().clone().requires_grad_()
        return a, x, dy

    def forward(self, inputs: Any) -> Any:
        raise NotImplementedError

    def forward_backward(self, inputs: Any) -> Any:
        a, x, dy = inputs
        a.grad = x.grad = None
        h = self.forward(inputs)
        h.backward(dy)
        return h

    def outputs(self, inputs: Any) -> tuple[Any, Any, Any]:
        """(h, da, dx) in (B, C, T) after one forward_backward."""
        a, x, _ = inputs
        h = self.forward_backward(inputs)
        return h.detach(), a.grad, x.grad


class Project(Contender):
    def __init__(
        self, name: str, example: Any, lookback: bool | None, threads: Any, items: Any
    ) -> None:
        self.name = name
        self.example, self.lookback, self.threads, self.items = example, lookback, threads, items

    def forward(self, inputs: Any) -> Any:
        a, x, _ = inputs
        h, _ = self.example.linear_recurrence(
            a, x, lookback=self.lookback, threads=self.threads, items=self.items
        )
        return h


class AccelWarp(Contender):
    name = "accel_warp"

    def __init__(self) -> None:
        from accelerated_scan import warp

        self.scan = warp.scan

    def supports(self, shape: tuple[int, int, int], dtype: Any) -> str | None:
        T = shape[-1]
        if T & (T - 1) or T > 65536:
            return f"T={T}: accelerated_scan.warp takes powers of 2 up to 65536"
        return None

    def forward(self, inputs: Any) -> Any:
        a, x, _ = inputs
        return self.scan(a, x)


class AccelTriton(Contender):
    name = "accel_triton"

    def __init__(self) -> None:
        from accelerated_scan import scalar

        self.scan = scalar.scan

    def forward(self, inputs: Any) -> Any:
        a, x, _ = inputs
        return self.scan(a, x)


class Fla(Contender):
    """HGRN: ``h = exp(g) * h + x`` on (B, T, C) tensors; ``g = log(a)``, ``da = dg / a``."""

    def __init__(self, name: str) -> None:
        from fla.ops.hgrn import chunk_hgrn, fused_recurrent_hgrn

        self.name = name
        self.op = chunk_hgrn if name == "fla_chunk" else fused_recurrent_hgrn

    def prepare(self, a: Any, x: Any, dy: Any) -> Any:
        g = a.log().transpose(1, 2).contiguous().requires_grad_()
        xt = x.transpose(1, 2).contiguous().requires_grad_()
        return g, xt, dy.transpose(1, 2).contiguous()

    def forward(self, inputs: Any) -> Any:
        g, x, _ = inputs
        o, _ = self.op(x, g)
        return o

    def outputs(self, inputs: Any) -> tuple[Any, Any, Any]:
        g, x, _ = inputs
        o = self.forward_backward(inputs)
        da = g.grad.double() / g.detach().double().exp()
        return (t.transpose(1, 2) for t in (o.detach(), da, x.grad))  # type: ignore[return-value]


def contenders(args: argparse.Namespace, example: Any) -> list[Contender]:
    out: list[Contender] = [Project("project", example, None, args.threads, args.items)]
    for threads, items in args.configs:
        for lookback, tag in ((False, "rows"), (True, "lookback")):
            out.append(
                Project(f"project_{tag}_{threads}x{items}", example, lookback, threads, items)
            )
    for peer in args.peers:
        try:
            if peer == "accel_warp":
                out.append(AccelWarp())
            elif peer == "accel_triton":
                out.append(AccelTriton())
            else:
                out.append(Fla(peer))
        except Exception as exc:
            _common.emit_error(exc, bench="recurrence", impl=peer, stage="import")
    return out


# ---------------------------------------------------------------------------- timing


def _graph(call: Callable[[], object]) -> Callable[[], object] | None:
    import torch

    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                call()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        # captured on the warm-up stream: per-stream state (look-back statuses) already exists
        with torch.cuda.graph(graph, stream=stream):
            call()
    except Exception as exc:
        print(f"# no CUDA graph: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
        torch.cuda.synchronize()
        return None
    return graph.replay


def _time(call: Callable[[], object], reps: int) -> float:
    import _torch_util

    return statistics.median(_torch_util.time_ms(call, reps=reps, warmup=3))


def make_inputs(shape: tuple[int, int, int], dtype_name: str, seed: int) -> tuple[Any, Any, Any]:
    """``a`` uniform in [0.5, 1), ``x`` and ``dy`` standard normal, on the GPU."""
    import torch

    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[
        dtype_name
    ]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = (torch.rand(shape, device="cuda", generator=gen) * 0.5 + 0.5).to(dtype)
    x = torch.randn(shape, device="cuda", generator=gen).to(dtype)
    dy = torch.randn(shape, device="cuda", generator=gen).to(dtype)
    return a, x, dy


def run_shape(
    shape: tuple[int, int, int], dtype_name: str, impls: list[Contender], args: argparse.Namespace
) -> list[dict[str, Any]]:
    import torch

    a, x, dy = make_inputs(shape, dtype_name, args.seed)
    ref_h, ref_da, ref_dx = reference(a, x, dy)
    n = a.numel()
    size = a.element_size()
    fwd_bytes, bwd_bytes = 3 * n * size, 5 * n * size
    rows: list[dict[str, Any]] = []
    live: list[tuple[Contender, Any, dict[str, Any]]] = []
    for impl in impls:
        label = {
            "bench": "recurrence",
            "impl": impl.name,
            "shape": "x".join(map(str, shape)),
            "dtype": dtype_name,
        }
        why = impl.supports(shape, a.dtype)
        if why:
            _common.emit("SKIP", **label, why=why)
            continue
        try:
            inputs = impl.prepare(a, x, dy)
            h, da, dx = impl.outputs(inputs)
            torch.cuda.synchronize()
            errors = {
                k: rel_error(got, want)
                for k, got, want in (
                    ("err_h", h, ref_h),
                    ("err_da", da, ref_da),
                    ("err_dx", dx, ref_dx),
                )
            }
        except Exception as exc:
            _common.emit_error(exc, **label, stage="check")
            torch.cuda.synchronize()
            continue
        ok = within(errors.values(), dtype_name)
        record = {
            **label,
            **errors,
            "ok": ok,
            "fwd_eager": [],
            "fb_eager": [],
            "fwd_graph": [],
            "fb_graph": [],
        }
        record["graphs"] = (
            _graph(lambda i=inputs, c=impl: c.forward(i)),
            _graph(lambda i=inputs, c=impl: c.forward_backward(i)),
        )
        live.append((impl, inputs, record))
    copy_src = torch.empty(3 * n * size // 2, dtype=torch.uint8, device="cuda")
    copy_dst = torch.empty_like(copy_src)
    copy_ms: list[float] = []
    for _ in range(args.rounds):  # interleaved: drift hits every contender alike
        copy_ms.append(_time(lambda: copy_dst.copy_(copy_src), args.reps))
        for impl, inputs, record in live:
            record["fwd_eager"].append(_time(lambda i=inputs, c=impl: c.forward(i), args.reps))
            record["fb_eager"].append(
                _time(lambda i=inputs, c=impl: c.forward_backward(i), args.reps)
            )
            fwd_graph, fb_graph = record["graphs"]
            if fwd_graph is not None:
                record["fwd_graph"].append(_time(fwd_graph, args.reps))
            if fb_graph is not None:
                record["fb_graph"].append(_time(fb_graph, args.reps))
    copy = statistics.median(copy_ms)
    _common.emit(
        "RESULT",
        bench="recurrence",
        impl="copy",
        shape="x".join(map(str, shape)),
        dtype=dtype_name,
        fwd_ms=copy,
        fwd_gbps=fwd_bytes / copy / 1e6,
        ok=True,
    )
    for _impl, _, record in live:
        del record["graphs"]
        out = {k: v for k, v in record.items() if not isinstance(v, list)}
        for key in ("fwd_eager", "fb_eager", "fwd_graph", "fb_graph"):
            if record[key]:
                out[key] = statistics.median(record[key])
        fwd = out.get("fwd_graph", out["fwd_eager"])
        fb = out.get("fb_graph", out["fb_eager"])
        out["fwd_ms"], out["fb_ms"] = fwd, fb
        out["fwd_gbps"] = fwd_bytes / fwd / 1e6
        out["fb_gbps"] = (fwd_bytes + bwd_bytes) / fb / 1e6
        out["fwd_vs_copy"] = copy / fwd
        _common.emit("RESULT", **out)
        rows.append(out)
    return rows


def profile_launch(impl: Contender, shape: tuple[int, int, int], dtype_name: str, seed: int) -> int:
    """Run one contender's forward twice, then forward and backward twice, and check the last
    outputs against the float64 reference: for Nsight Compute, e.g.::

        ncu -k regex:"forward|backward" --launch-count 6 python bench/recurrence_bench.py \\
            --shapes 8x1536x2048 --dtypes bfloat16 --profile-launch project

    The kernels launch in the order forward, forward, forward, backward, forward, backward (the
    first of each compiles); the reference kernels (also named ``forward`` and ``backward``)
    come after them. Returns 1 if an output is off.
    """
    import torch

    a, x, dy = make_inputs(shape, dtype_name, seed)
    inputs = impl.prepare(a, x, dy)
    for _ in range(2):
        impl.forward(inputs)
    torch.cuda.synchronize()
    for _ in range(2):
        impl.forward_backward(inputs)
    torch.cuda.synchronize()
    got = impl.outputs(inputs)
    torch.cuda.synchronize()
    want = reference(a, x, dy)
    errors = [rel_error(g, w) for g, w in zip(got, want, strict=True)]
    ok = within(errors, dtype_name)
    shape_text = "x".join(map(str, shape))
    print(
        f"{impl.name} {shape_text} {dtype_name}: relative L2 error h, da, dx "
        + ", ".join(f"{e:.2e}" for e in errors)
        + ("" if ok else f" (over {tolerance(dtype_name):g})"),
        flush=True,
    )
    return 0 if ok else 1


def report(rows: list[dict[str, Any]], out: Path) -> None:
    import csv

    keys = sorted({k for r in rows for k in r})
    with (out / "recurrence.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    lines = [
        "| shape | dtype | impl | fwd ms | fwd+bwd ms | fwd GB/s | vs copy | err h | err da "
        "| err dx | fastest peer fwd / fwd+bwd | project speedup fwd / fwd+bwd |",
        "| --- " * 12 + "|",
    ]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["shape"], r["dtype"]), []).append(r)
    for (shape, dtype), group in groups.items():
        peers = [r for r in group if not r["impl"].startswith("project")]
        best_f = min((r["fwd_ms"] for r in peers), default=float("nan"))
        best_fb = min((r["fb_ms"] for r in peers), default=float("nan"))
        for r in group:
            speed = ""
            if r["impl"] == "project" and peers:
                speed = f"{best_f / r['fwd_ms']:.3f} / {best_fb / r['fb_ms']:.3f}"
            lines.append(
                f"| {shape} | {dtype} | {r['impl']} | {r['fwd_ms']:.4f} | {r['fb_ms']:.4f} | "
                f"{r['fwd_gbps']:.0f} | {r['fwd_vs_copy']:.3f} | {r['err_h']:.2e} | "
                f"{r['err_da']:.2e} | {r['err_dx']:.2e} | "
                f"{best_f:.4f} / {best_fb:.4f} | {speed} |"
            )
    (out / "recurrence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, few rounds")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--peers", default=",".join(PEERS), help="peers to run (comma-separated)")
    parser.add_argument("--threads", type=int, default=None, help="(default: the example's)")
    parser.add_argument("--items", type=int, default=None, help="(default: the example's)")
    parser.add_argument(
        "--configs", default="", help="extra project configs THREADSxITEMS,... (both variants)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shapes", default="", help="BxCxT,... (default: the four of the issue)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--profile-launch",
        default="",
        metavar="IMPL",
        help="for a profiler: run IMPL (project, a peer, or project_rows_TxI / "
        "project_lookback_TxI from --configs) on the first shape and dtype, forward twice, "
        "forward and backward twice, check it, and exit",
    )
    args = parser.parse_args(argv)
    args.peers = [p for p in args.peers.split(",") if p]
    args.configs = [tuple(map(int, c.split("x"))) for c in args.configs.split(",") if c]
    shapes = (
        [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
        if args.shapes
        else (QUICK_SHAPES if args.quick else SHAPES)
    )
    if args.quick:
        args.rounds, args.reps = 2, 3
    example = _example()
    if args.profile_launch:
        args.peers = [p for p in args.peers if p == args.profile_launch]
        chosen = [c for c in contenders(args, example) if c.name == args.profile_launch]
        if not chosen:
            parser.error(f"--profile-launch {args.profile_launch}: no such contender here")
        return profile_launch(chosen[0], shapes[0], args.dtypes.split(",")[0], args.seed)
    impls = contenders(args, example)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for dtype in args.dtypes.split(","):
        for shape in shapes:
            rows += run_shape(shape, dtype, impls, args)  # type: ignore[arg-type]
            print(f"# {shape} {dtype} done at {time.perf_counter() - t0:.0f}s", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        report(rows, args.out)
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
