# SPDX-License-Identifier: Apache-2.0
"""Registers, shared memory and local memory of the benchmark's kernels, read from sm_90 cubins.

No GPU needed. The project's row kernels (``_matrix_kernels``, as ``bench/matrix.py``
builds them) compile and link with ``scan.compile(..., cc=(9, 0), block=threads)``;
the numba-cuda-mlir ablation's variants (``bench/mlir_ablation.py``) the same way;
the CUB C++ kernels are ``bench/matrix.py``'s generated sources, compiled with its
nvcc command line plus ``-Xptxas -v``. Each figure is read from the cubin's ELF:

- registers: ``EIATTR_REGCOUNT`` in ``.nv.info``, keyed by the kernel's symbol;
- shared memory: the size of the kernel's ``.nv.shared.<kernel>`` section (static
  shared memory; no dynamic shared memory is used). For sm_90 that section holds
  1 KiB that the toolchain reserves in front of the kernel's own data: ptxas's
  ``bytes smem`` is the section less 1024 bytes (checked on every CUB kernel here),
  and both figures are given;
- local memory: ``EIATTR_FRAME_SIZE`` (bytes a thread).

For the CUB kernels the same figures are also taken from ptxas's own report and
the two must agree, less the reserve (the check of this reader). Also the
int32 kernels at ``OWN_PLUS`` (``scan._primitives.block_scan._unit``)'s shapes built both ways of
``bench/codegen_ablation.py --toggle plus``. Instruction counts need a
disassembler and are not given.

    python bench/resource_usage.py [--cache DIR] > resource_usage.txt

The library's on-disk cache goes to a fresh temporary folder unless ``--cache``
names one, so every unit is built by the current code.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from _toolchain import SM90_RESERVED_SHARED, Usage, cubin_usage, only_kernel

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

# ---------------------------------------------------------------------------- the kernels

#: (dtype, threads, items, scan algorithm, tile I/O) of the explicit configurations
EXPLICIT = [
    ("int32", 256, 4, "raking", "vectorize"),
    ("int32", 256, 4, "raking", "warp_transpose"),
    ("float32", 256, 4, "raking", "vectorize"),
    ("float32", 256, 4, "raking", "warp_transpose"),
    ("int32", 256, 4, "warp_scans", "warp_transpose"),
    ("float32", 256, 4, "warp_scans", "warp_transpose"),
    ("int32", 512, 4, "warp_scans", "warp_transpose"),
    ("int32", 512, 4, "warp_scans", "vectorize"),
    ("float32", 512, 4, "warp_scans", "warp_transpose"),
    ("float32", 512, 4, "warp_scans", "vectorize"),
    ("int32", 128, 8, "raking", "warp_transpose"),
    ("float32", 128, 8, "raking", "warp_transpose"),
    ("int32", 128, 16, "warp_scans", "warp_transpose"),
    ("float32", 128, 16, "warp_scans", "warp_transpose"),
    ("float64", 256, 4, "raking", "warp_transpose"),
    ("float64", 256, 4, "warp_scans", "warp_transpose"),
]
#: (dtype, threads, items) of the default kernels, under numba-cuda and numba-cuda-mlir
DEFAULTS = [
    ("int32", 256, 4),
    ("float32", 256, 4),
    ("int32", 512, 4),
    ("float32", 512, 4),
    ("int32", 512, 16),
    ("float32", 512, 16),
    ("float64", 256, 4),
]
MLIR_VARIANTS = ("mlir", "mlir_no_bounds", "mlir_own_units", "mlir_launch_bounds")
#: (scan algorithm, threads, items) of ``OWN_PLUS`` (``scan._primitives.block_scan._unit``):
#: int32 with ``warp_transpose``, compiled with ``+`` as ``plus<>`` and as the unit's functor
PLUS_SHAPES = [("raking", 512, 4), ("raking", 512, 8), ("warp_scans", 256, 16)]


def _fmt(u: Usage | None, error: str = "") -> str:
    if u is None:
        return f"- | - | - | - | {error}"
    regs = "?" if u.regs is None else str(u.regs)
    local = "?" if u.local is None else str(u.local)
    own = max(0, u.shared - SM90_RESERVED_SHARED)
    return f"{regs} | {u.shared} | {own} | {local} |"


def _compile_project(kernel: Any, dtype: str, threads: int, mlir: bool = False) -> bytes:
    import scan

    if mlir:
        from numba_cuda_mlir.numba_cuda import types
    else:
        from numba import types
    arr = types.Array(getattr(types, dtype), 2, "C")
    cubin = scan.compile(kernel, (arr, arr), cc=(9, 0), block=threads)
    assert isinstance(cubin, bytes)
    return cubin


def project_rows() -> list[str]:
    import _matrix_kernels as mk

    rows = []
    for dtype, threads, items, algo, io in EXPLICIT:
        kernel = mk.make_explicit_kernel(dtype, threads, items, algo, io)
        u = only_kernel(_compile_project(kernel, dtype, threads))
        rows.append(f"| project | {dtype} | {threads} x {items} | {algo} / {io} | {_fmt(u)}")
    for dtype, threads, items in DEFAULTS:
        kernel = mk.make_default_kernel(dtype, threads, items)
        u = only_kernel(_compile_project(kernel, dtype, threads))
        rows.append(f"| project_default | {dtype} | {threads} x {items} | defaults | {_fmt(u)}")
    return rows


def mlir_rows() -> list[str]:
    try:
        import numba_cuda_mlir  # noqa: F401
    except ImportError:
        return ["numba-cuda-mlir does not import here: no numba-cuda-mlir rows"]
    from _ablations import mlir_kernel, mlir_variant

    rows = []
    for name in MLIR_VARIANTS:
        for dtype, threads, items in DEFAULTS:
            kernel = mlir_kernel(name, dtype, threads, items)
            try:
                with mlir_variant(name):
                    u = only_kernel(_compile_project(kernel, dtype, threads, mlir=True))
                cell = _fmt(u)
            except Exception as exc:
                found = re.search(r"uses too much [^|\n]*", str(exc))
                reason = found.group(0) if found else type(exc).__name__
                cell = _fmt(None, f"does not compile: {reason}")
            rows.append(f"| {name} | {dtype} | {threads} x {items} | defaults | {cell}")
    return rows


def plus_rows() -> list[str]:
    """``bench/codegen_ablation.py --toggle plus``'s two builds at ``OWN_PLUS``'s shapes."""
    import _matrix_kernels as mk
    from _ablations import plus

    rows = []
    for algo, threads, items in PLUS_SHAPES:
        for enabled, label in ((True, "plus<>"), (False, "functor")):
            kernel = mk.make_explicit_kernel("int32", threads, items, algo, "warp_transpose")
            with plus(enabled):
                u = only_kernel(_compile_project(kernel, "int32", threads))
            rows.append(
                f"| project, + as {label} | int32 | {threads} x {items} "
                f"| {algo} / warp_transpose | {_fmt(u)}"
            )
    return rows


PTXAS_FUNC = re.compile(r"Compiling entry function '(\w+)'|Function properties for (\w+)")
PTXAS_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")
PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame")


def parse_ptxas(text: str) -> dict[str, tuple[int, int, int]]:
    """(registers, shared bytes, stack frame bytes) per kernel from ``ptxas -v`` output."""
    out: dict[str, tuple[int, int, int]] = {}
    current, frame = None, 0
    for line in text.splitlines():
        found = PTXAS_FUNC.search(line)
        if found:
            current = found.group(1) or found.group(2)
            continue
        found = PTXAS_FRAME.search(line)
        if found and current:
            frame = int(found.group(1))
        found = PTXAS_USED.search(line)
        if found and current:
            out[current] = (int(found.group(1)), int(found.group(2) or 0), frame)
            current, frame = None, 0
    return out


def _cub_version(nvcc: str, includes: list[str], folder: Path) -> str:
    """CUB_VERSION and the header it came from, as nvcc preprocesses with these includes."""
    probe = folder / "cub_version.cu"
    probe.write_text("#include <cub/version.cuh>\nint cub_version_is = CUB_VERSION;\n")
    argv = [nvcc, "-E", "-std=c++17", "-arch=sm_90", *includes, str(probe)]
    text = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    value = re.search(r"cub_version_is =(?:\s|#[^\n]*\n)*(\d+)", text)
    header = re.search(r'^# \d+ "([^"]*cub/version\.cuh)"', text, re.M)
    return (
        f"CUB_VERSION {value.group(1) if value else '?'}"
        f" ({Path(header.group(1)).resolve() if header else 'header not found'})"
    )


def cub_rows(folder: Path) -> tuple[list[str], list[str]]:
    """Rows of the CUB kernels and the lines describing the toolchain."""
    from _cub_rowscan import CubSpec, cub_source, nvcc_argv

    specs = [CubSpec(d, t, i, a, io) for d, t, i, a, io in EXPLICIT]
    source = folder / "cub_resource_usage.cu"
    source.write_text(cub_source(specs))
    cubin = folder / "cub_resource_usage.cubin"
    argv = nvcc_argv(source, cubin, "sm_90")
    if argv is None:
        return ["nvcc not found: no CUB rows"], []
    argv = [*argv[:-3], "-Xptxas", "-v", *argv[-3:]]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"nvcc failed:\n{proc.stderr[-3000:]}")
    version = subprocess.run([argv[0], "--version"], capture_output=True, text=True).stdout
    info = [
        "nvcc: " + " / ".join(version.strip().splitlines()[-2:]),
        "nvcc's CUB: " + _cub_version(argv[0], [a for a in argv if a.startswith("-I")], folder),
        "nvcc command: "
        + " ".join(
            Path(a).name if a in (argv[0], str(source), str(cubin)) else a for a in argv
        ).replace(str(BENCH.parent) + "/", ""),
    ]
    reported = parse_ptxas(proc.stdout + proc.stderr)
    usage = cubin_usage(cubin.read_bytes())
    rows = []
    for spec in specs:
        u = usage[spec.name]
        pt = reported.get(spec.name)
        own = max(0, u.shared - SM90_RESERVED_SHARED)
        agree = pt is not None and pt == (u.regs, own, u.local)
        rows.append(
            f"| cub_cpp | {spec.dtype} | {spec.threads} x {spec.items} | {spec.algo} / {spec.io} "
            f"| {_fmt(u)} ptxas -v: {pt[0] if pt else '?'} regs, {pt[1] if pt else '?'} B smem, "
            f"{pt[2] if pt else '?'} B stack frame ({'agrees' if agree else 'DIFFERS'})"
        )
        if not agree:
            raise SystemExit(f"ELF reader and ptxas disagree on {spec.name}: {u} against {pt}")
    return rows, info


def _short(path: Path) -> str:
    """*path* from its ``site-packages`` folder on (no machine-specific prefix)."""
    parts = path.parts
    if "site-packages" in parts:
        return str(Path(*parts[parts.index("site-packages") :]))
    return path.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", help="the library's cache folder (default: a fresh one)")
    parser.add_argument(
        "--mlir-only", action="store_true", help="only the numba-cuda-mlir rows (no nvcc needed)"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=Warning, module=r"numba.*")
    with tempfile.TemporaryDirectory(prefix="resource_usage_") as tmp:
        os.environ["STATEFN_SCAN_CACHE_DIR"] = args.cache or str(Path(tmp) / "cache")
        started = time.perf_counter()
        versions = []
        for dist in ("numba", "numba-cuda", "numba_cuda_mlir", "cuda-bindings", "nvidia-cuda-cccl"):
            try:
                versions.append(f"{dist} {importlib.metadata.version(dist)}")
            except importlib.metadata.PackageNotFoundError:
                versions.append(f"{dist} absent")
        from scan import _toolchain

        cub, info = ([], []) if args.mlir_only else cub_rows(Path(tmp))
        cccl = Path(_toolchain.cccl_include_dirs()[0])
        found = re.search(r"#define CUB_VERSION (\d+)", (cccl / "cub" / "version.cuh").read_text())
        library = (
            f"library: NVRTC {'.'.join(map(str, _toolchain.nvrtc_version()))}, nvJitLink "
            f"{'.'.join(map(str, _toolchain.nvjitlink_version()))}, CCCL headers "
            f"{_short(cccl)} "
            f"(CUB_VERSION {found.group(1) if found else '?'})"
        )
        project = [] if args.mlir_only else project_rows()
        mlir = mlir_rows()
        plus = [] if args.mlir_only else plus_rows()
        seconds = time.perf_counter() - started

    print("# Registers, shared and local memory of sm_90 cubins (no GPU)")
    print()
    print(f"Python {platform.python_version()}; " + ", ".join(versions))
    print("Project kernels: scan.compile(kernel, (array, array), cc=(9, 0), block=threads),")
    print("NVRTC, CCCL and nvJitLink from the pip wheels above; an empty library cache.")
    print(library)
    for line in info:
        print(line)
    print()
    print("regs: EIATTR_REGCOUNT; section B: size of .nv.shared.<kernel> (static shared memory,")
    print(f"with the {SM90_RESERVED_SHARED} bytes sm_90 cubins reserve in it); own B: the section")
    print("less that reserve, ptxas's 'bytes smem'; local: EIATTR_FRAME_SIZE (bytes a thread).")
    print("CUB rows: ptxas -v's own report beside, which must agree.")
    print("'+ as' rows: bench/codegen_ablation.py --toggle plus's two builds (OWN_PLUS shapes).")
    print("numba-cuda-mlir rows: bench/mlir_ablation.py's variants of the default kernel.")
    print()
    print(
        "| kernel | dtype | threads x items | scan / tile I/O | regs"
        " | shared section B | own B | local B | notes"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | ---")
    for row in [*project, *plus, *mlir, *cub]:
        print(row)
    print()
    print(f"({seconds:.0f} s)")


if __name__ == "__main__":
    main()
