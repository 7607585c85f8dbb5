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
int32 kernels at ``scan._codegen.OWN_PLUS``'s shapes built both ways of
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
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

#: EIATTR codes of the cubin's ``.nv.info`` sections
EIATTR_FRAME_SIZE = 0x11
EIATTR_REGCOUNT = 0x2F
#: bytes of an sm_90 kernel's ``.nv.shared`` section that are not its own data
SM90_RESERVED_SHARED = 1024
#: EIFMT codes: no value, byte, half word, sized block
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4


@dataclass
class Usage:
    """One kernel's resources, as the cubin states them."""

    regs: int | None
    shared: int
    local: int | None


def _sections(data: bytes) -> list[tuple[str, int, int, int, int, int]]:
    """(name, type, offset, size, link, info) of every section of a 64-bit ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian 64-bit ELF file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]

    def name(offset: int) -> str:
        start = names_at + offset
        return data[start : data.index(b"\0", start)].decode()

    return [(name(s[0]), s[1], s[4], s[5], s[6], s[7]) for s in raw]


def _symbols(data: bytes, sections: list[tuple[str, int, int, int, int, int]]) -> list[str]:
    """Names of the symbol table's entries, by index."""
    symtab = next(s for s in sections if s[0] == ".symtab")
    strtab = sections[symtab[4]]
    out = []
    for off in range(symtab[2], symtab[2] + symtab[3], 24):
        st_name = struct.unpack_from("<I", data, off)[0]
        start = strtab[2] + st_name
        out.append(data[start : data.index(b"\0", start)].decode())
    return out


def _attributes(block: bytes) -> list[tuple[int, bytes]]:
    """(attribute, value) of one ``.nv.info`` section."""
    out, i = [], 0
    while i + 4 <= len(block):
        fmt, attr = block[i], block[i + 1]
        if fmt == EIFMT_SVAL:
            size = struct.unpack_from("<H", block, i + 2)[0]
            out.append((attr, block[i + 4 : i + 4 + size]))
            i += 4 + size
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            out.append((attr, block[i + 2 : i + 4]))
            i += 4
        else:
            raise ValueError(f"unknown .nv.info format {fmt:#x}")
    return out


def cubin_usage(data: bytes) -> dict[str, Usage]:
    """Per kernel (the name of its ``.text.`` section): registers, shared and local bytes."""
    sections = _sections(data)
    symbols = _symbols(data, sections)
    regs: dict[str, int] = {}
    frame: dict[str, int] = {}
    for name, _, offset, size, _, _ in sections:
        if name != ".nv.info":
            continue
        for attr, value in _attributes(data[offset : offset + size]):
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and len(value) == 8:
                sym, count = struct.unpack("<II", value)
                (regs if attr == EIATTR_REGCOUNT else frame)[symbols[sym]] = count
    shared = {
        name[len(".nv.shared.") :]: size
        for name, _, _, size, _, _ in sections
        if name.startswith(".nv.shared.") and not name.startswith(".nv.shared.reserved")
    }
    kernels = [name[len(".text.") :] for name, *_ in sections if name.startswith(".text.")]
    return {k: Usage(regs.get(k), shared.get(k, 0), frame.get(k)) for k in kernels}


def only_kernel(data: bytes) -> Usage:
    """The usage of a cubin's one entry point (a project kernel's cubin has one ``.text``)."""
    usage = cubin_usage(data)
    entries = {k: u for k, u in usage.items() if u.regs is not None}
    if len(entries) != 1:
        raise ValueError(f"expected one kernel with a register count, found {sorted(entries)}")
    return next(iter(entries.values()))


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
#: (scan algorithm, threads, items) of ``scan._codegen.OWN_PLUS``: int32 with
#: ``warp_transpose``, compiled with ``+`` as ``plus<>`` and as the unit's functor
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
    import mlir_ablation

    rows = []
    for name in MLIR_VARIANTS:
        for dtype, threads, items in DEFAULTS:
            kernel = mlir_ablation.make_kernel(name, dtype, threads, items)
            try:
                with mlir_ablation.variant(name):
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
    import codegen_ablation

    rows = []
    for algo, threads, items in PLUS_SHAPES:
        for enabled, label in ((True, "plus<>"), (False, "functor")):
            kernel = mk.make_explicit_kernel("int32", threads, items, algo, "warp_transpose")
            with codegen_ablation.plus(enabled):
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
    import matrix

    specs = [matrix.CubSpec(d, t, i, a, io) for d, t, i, a, io in EXPLICIT]
    source = folder / "cub_resource_usage.cu"
    source.write_text(matrix.cub_source(specs))
    cubin = folder / "cub_resource_usage.cubin"
    argv = matrix.nvcc_argv(source, cubin, "sm_90")
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
