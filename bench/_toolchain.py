# SPDX-License-Identifier: Apache-2.0
"""The CUDA toolkit the benchmarks build with, and what its cubins say about their kernels.

- :func:`find_cuda_home`, :func:`find_tool`, :func:`cccl_include`: the toolkit's
  root, one of its tools, its CCCL headers;
- :func:`cubin_usage`, :func:`only_kernel`: registers, shared and local memory of
  a cubin's kernels, read from its ELF (no disassembler):

  - registers: ``EIATTR_REGCOUNT`` in ``.nv.info``, keyed by the kernel's symbol;
  - shared memory: the size of the kernel's ``.nv.shared.<kernel>`` section
    (static shared memory). For sm_90 that section holds 1 KiB that the
    toolchain reserves in front of the kernel's own data
    (:data:`SM90_RESERVED_SHARED`): ptxas's ``bytes smem`` is the section less
    1024 bytes;
  - local memory: ``EIATTR_FRAME_SIZE`` (bytes a thread).
"""

from __future__ import annotations

import os
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path


def find_cuda_home() -> Path | None:
    """The CUDA toolkit root: ``$CUDA_HOME``, ``$CUDA_PATH``, nvcc's parent, /usr/local/cuda."""
    candidates: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]))
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent)
    candidates += [Path("/usr/local/cuda"), Path("/usr/local/cuda-13.0")]
    for root in candidates:
        if (root / "bin" / "nvcc").exists() or (root / "include" / "cuda_runtime.h").exists():
            return root
    return None


def find_tool(name: str) -> str | None:
    """A CUDA tool from PATH or the toolkit's ``bin``."""
    found = shutil.which(name)
    if found:
        return found
    home = find_cuda_home()
    if home is not None and (home / "bin" / name).exists():
        return str(home / "bin" / name)
    return None


def cccl_include() -> Path | None:
    """``$CUDA_HOME/include/cccl`` when the toolkit has it."""
    home = find_cuda_home()
    if home is not None and (home / "include" / "cccl").is_dir():
        return home / "include" / "cccl"
    return None


# ---------------------------------------------------------------------------- cubins

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
