# SPDX-License-Identifier: Apache-2.0
"""The machine code of a cubin, without names: to compare two kernels' SASS without a disassembler.

A cubin is an ELF file; each kernel's instructions are the bytes of its
``.text.<mangled name>`` section. Two kernels that differ only in their names
(and in the Python source that compiled to the same loop) have byte-identical
sections.
"""

from __future__ import annotations

import struct


def sections(cubin: bytes) -> dict[str, bytes]:
    """Every section of an ELF64 little-endian file, by name."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not an ELF64 file")
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [
        struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)
    ]
    names = headers[shstrndx]

    def name(offset: int) -> str:
        start = names[4] + offset
        return cubin[start : cubin.index(b"\0", start)].decode()

    return {name(h[0]): cubin[h[4] : h[4] + h[5]] for h in headers}


def machine_code(cubin: bytes) -> list[bytes]:
    """The instructions of each function of a cubin (its ``.text.*`` sections), sorted."""
    return sorted(data for name, data in sections(cubin).items() if name.startswith(".text."))
