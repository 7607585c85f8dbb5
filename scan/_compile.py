# SPDX-License-Identifier: Apache-2.0
"""Generated C++ to LTO-IR with NVRTC (through cuda.core), behind the cache.

Two products come out of here: a provider's LTO-IR, and the size/alignment of
its ``TempStorage``. The latter is read from the compiled code itself (the
provider exports them as constants; nvJitLink turns the LTO-IR into PTX where
they can be read), never from a table, because they vary with the CCCL version
and the target architecture.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from ._cache import Artifact, get_or_build
from ._codegen import GENERATOR_VERSION
from ._errors import CompileError, ToolchainError
from ._keys import compile_key
from ._pch import HEADERS
from ._target import arch
from ._toolchain import cccl_include_dirs, nvjitlink_version, nvrtc_archs, nvrtc_version
from ._vocab import TempStorageLayout

__all__ = [
    "DUMP_ENV",
    "Provider",
    "check_target",
    "compile_group",
    "compile_kernel_unit",
    "compile_provider",
    "nvrtc_flags",
    "nvrtc_options",
    "provider_layout",
]

#: Set to a folder to keep every generated unit, its options and NVRTC log there.
DUMP_ENV = "STATEFN_SCAN_DUMP_DIR"


@attrs.frozen
class Provider:
    """A compiled provider: its symbol and the LTO-IR of its unit."""

    symbol: str
    ltoir: bytes


def check_target(cc: tuple[int, int]) -> None:
    """Refuse a compute capability the loaded NVRTC cannot compile for, before any work.

    Raises
    ------
    ToolchainError
        NVRTC is missing, or does not support `cc`.
    """
    archs = nvrtc_archs()
    if cc[0] * 10 + cc[1] not in archs:
        major, minor = nvrtc_version()
        supported = ", ".join(f"sm_{a}" for a in archs)
        raise ToolchainError(
            f"NVRTC {major}.{minor} cannot compile for {arch(cc)} (compute capability "
            f"{cc[0]}.{cc[1]}); it supports {supported}. Target one of those (e.g. cc=(9, 0) "
            f"for an H100 or H200), or use a CUDA toolkit that still supports {arch(cc)}"
        )


def nvrtc_options(cc: tuple[int, int]) -> dict[str, Any]:
    """The NVRTC options of every provider, as :class:`cuda.core.ProgramOptions` fields.

    The one set of options: NVRTC is given these, and the cache key is made of
    them (:func:`nvrtc_flags`, without the include folders, for which the
    toolchain identity's header digest stands).
    """
    return {
        "arch": arch(cc),
        "std": "c++17",
        "relocatable_device_code": True,
        "link_time_optimization": True,
        "define_macro": list(_DEFINES),
        "include_path": list(include_dirs()),
    }


def nvrtc_flags(options: dict[str, Any], *, include_paths: bool = True) -> list[str]:
    """`options` as NVRTC command-line flags (for dumps, logs and the cache key)."""
    flags = [
        f"-arch={options['arch']}",
        f"-std={options['std']}",
        f"-rdc={str(options['relocatable_device_code']).lower()}",
    ]
    if options["link_time_optimization"]:
        flags.append("-dlto")
    flags += [f"-D{m}" for m in options["define_macro"]]
    if include_paths:
        flags += [f"-I{d}" for d in options["include_path"]]
    return flags


# CUB_DISABLE_CDP: units are compiled relocatable (-rdc) for linking, and CUB
# then reports errors of its host/device helpers (CubDebug, e.g. in
# ScanTileState::Init under CCCL 3.0) through the device runtime's
# cudaGetLastError, which nothing here links; no unit launches kernels from
# the device.
#
# bfloat16 is never scanned here. FP16 support stays on: with both disabled,
# CCCL 3.0.x's ThreadReduce picks its SIMD path for float sums on sm_80+ and
# hits a device-side assert (its enable_sm80_simd_reduction has no #else).
#
# CCCL unrolls its type-list metaprograms _CCCL_META_UNROLL_LIMIT steps at a
# time through preprocessor repetition: 10 under nvcc, 16 for other
# compilers, NVRTC among them, where expanding those macros took 0.75 of the
# 1.1 s an empty unit including CUB's block headers cost (CCCL 3.5, NVRTC
# 13); at 10 it takes 0.05 s. The limit changes how the compiler expands
# type lists, not what they compute.
_DEFINES = ("CCCL_DISABLE_BF16_SUPPORT", "_CCCL_META_UNROLL_LIMIT=10", "CUB_DISABLE_CDP")


def include_dirs() -> tuple[str, ...]:
    """CCCL's include folders plus the toolkit folder holding ``cuda_fp16.h``."""
    dirs = list(cccl_include_dirs())
    for d in cccl_include_dirs():
        parent = Path(d).parent
        if (parent / "cuda_fp16.h").is_file() and str(parent) not in dirs:
            dirs.append(str(parent))
    return tuple(dirs)


def _dump(name: str, source: str, options: Sequence[str], log: str) -> str | None:
    """Write the unit and its log under ``$STATEFN_SCAN_DUMP_DIR``; None when not asked."""
    folder = os.environ.get(DUMP_ENV)
    if not folder:
        return None
    try:
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        cu = path / f"{name}.cu"
        cu.write_text(source, encoding="utf-8")
        (path / f"{name}.log").write_text(
            "options: " + " ".join(options) + "\n\n" + log, encoding="utf-8"
        )
        return str(cu)
    except OSError:
        return None


def _nvrtc(name: str, source: str, cc: tuple[int, int]) -> bytes:
    from cuda.core import Program, ProgramOptions

    check_target(cc)  # NVRTC is there and supports the target: what fails now is the unit
    table = nvrtc_options(cc)
    flags = nvrtc_flags(table)
    try:
        with HEADERS.compiling(source, table) as pch:
            program = Program(source, "c++", options=ProgramOptions(name=name, **table, **pch))
            obj = program.compile("ltoir")
    except Exception as exc:
        log = str(exc)
        path = _dump(name, source, flags, log)
        where = (
            f"source written to {path}"
            if path
            else f"set {DUMP_ENV}=<folder> to keep the source and the log"
        )
        raise CompileError(
            f"NVRTC could not compile the generated unit {name} for {arch(cc)} ({where}); "
            "this is a bug in scan or a CCCL version it does not support: please report it "
            f"with the source and this log:\n{log}",
            log=log,
            source_path=path,
            source=source,
        ) from exc
    if os.environ.get(DUMP_ENV):
        _dump(name, source, flags, "compiled")
    return bytes(obj.code)


_CONST = re.compile(r"\.u32\s+(\w+)_temp_(bytes|align)\s*=\s*(\d+)\s*;")


def _read_layouts(
    name: str, symbols: Sequence[str], ltoir: bytes, cc: tuple[int, int]
) -> dict[str, TempStorageLayout]:
    """The temp-storage layout of every provider `symbols` names, from `ltoir`."""
    # PTX may call functions it does not define: the callbacks' code is not needed here
    from cuda.core import Linker, LinkerOptions, ObjectCode

    nvjitlink_version()  # a missing nvJitLink is a ToolchainError, not a link failure
    objs = [ObjectCode.from_ltoir(ltoir)]
    opts = LinkerOptions(arch=arch(cc), link_time_optimization=True, ptx=True)
    try:
        ptx = Linker(*objs, options=opts).link("ptx").code
    except Exception as exc:
        raise CompileError(
            f"nvJitLink could not link provider {name} to read its temp-storage layout:\n{exc}",
            log=str(exc),
        ) from exc
    text = ptx.decode() if isinstance(ptx, bytes | bytearray) else str(ptx)
    found: dict[str, dict[str, int]] = {}
    for symbol, kind, value in _CONST.findall(text):
        found.setdefault(symbol, {})[kind] = int(value)
    layouts = {}
    for symbol in symbols:
        got = found.get(symbol, {})
        if set(got) != {"bytes", "align"}:
            raise CompileError(
                f"the compiled provider {symbol} does not export its temp-storage layout "
                "constants; this is a bug in scan"
            )
        layouts[symbol] = TempStorageLayout(size=got["bytes"], alignment=got["align"])
    return layouts


def compile_provider(
    symbol: str,
    source: str,
    *,
    cc: tuple[int, int],
    what: str = "",
) -> Provider:
    """Compile (or fetch from the cache) one provider unit.

    Parameters
    ----------
    symbol : str
        The entry point the unit exports.
    source : str
        The unit's text (from :mod:`scan._codegen`).
    cc : tuple of int
        Target compute capability.
    what : str
        What the unit is, for the log.
    """
    return compile_group(symbol, [symbol], source, cc=cc, what=what)[symbol]


def compile_group(
    name: str,
    symbols: Sequence[str],
    source: str,
    *,
    cc: tuple[int, int],
    what: str = "",
) -> dict[str, Provider]:
    """Compile (or fetch) one unit holding several providers; each one's :class:`Provider`.

    Every provider shares the unit's LTO-IR (one object to link).

    Parameters
    ----------
    name : str
        The unit's name (for logs, dumps and the linker).
    symbols : sequence of str
        The entry points the unit exports (:func:`scan._codegen.render_group`).
    source : str
        The unit's text.
    cc : tuple of int
        Target compute capability.
    what : str
        What the unit is, for the log.
    """
    check_target(cc)
    key = compile_key("provider", _unit_parts(name, symbols, source, cc), cc)

    def build() -> Artifact:
        return Artifact(payload=_nvrtc(name, source, cc), meta={"symbol": name})

    # the cache builds each key once, even when threads or processes ask together
    art = get_or_build("provider", key, build, what=f"{what or name} for {arch(cc)}")
    return {symbol: Provider(symbol=symbol, ltoir=art.payload) for symbol in symbols}


def provider_layout(
    symbol: str, source: str, *, cc: tuple[int, int], what: str = ""
) -> TempStorageLayout:
    """Size and alignment of the ``TempStorage`` of the provider `source` exports.

    Read from the compiled unit (:func:`compile_provider`) by linking it to PTX,
    and cached on its own: a kernel's build never needs them (its unit
    declares the storage it uses), only ``block.temp_storage`` does, and the
    link costs 0.02-0.2 s.
    """
    key = compile_key("layout", _unit_parts(symbol, [symbol], source, cc), cc)

    def build() -> Artifact:
        ltoir = compile_provider(symbol, source, cc=cc, what=what).ltoir
        layout = _read_layouts(symbol, [symbol], ltoir, cc)[symbol]
        return Artifact(
            payload=b"", meta={"temp_bytes": layout.size, "temp_align": layout.alignment}
        )

    art = get_or_build("layout", key, build, what=f"{what or symbol} for {arch(cc)}")
    size, align = art.meta["temp_bytes"], art.meta["temp_align"]
    assert isinstance(size, int)
    assert isinstance(align, int)
    return TempStorageLayout(size, align)


def _unit_parts(
    name: str, symbols: Sequence[str], source: str, cc: tuple[int, int]
) -> dict[str, str]:
    """What identifies a compiled unit (its cache key's parts)."""
    return {
        "symbol": name,
        "symbols": " ".join(symbols),
        "source": source,
        "generator": GENERATOR_VERSION,
        # include folders are machine paths: the header digest in the
        # toolchain identity stands for them in the key
        "options": " ".join(nvrtc_flags(nvrtc_options(cc), include_paths=False)),
    }


_INT_CONST = re.compile(r"\.u(?:32|64)\s+(\w+)\s*=\s*(\d+)\s*;")


def compile_kernel_unit(
    name: str, source: str, *, cc: tuple[int, int], what: str = ""
) -> tuple[bytes, dict[str, int]]:
    """Compile (or fetch) a unit holding whole kernels the library launches itself.

    Returns the unit's cubin for `cc`, and the integer constants it exports
    (``extern "C" __device__ const`` unsigned 32- or 64-bit values, by name).
    NVRTC makes LTO-IR with the providers' options (so no driver is needed),
    and nvJitLink links it alone twice: to PTX, where the constants are read,
    and to the cubin.
    """
    check_target(cc)
    key = compile_key("kernel", _unit_parts(name, [name], source, cc), cc)

    def build() -> Artifact:
        from cuda.core import Linker, LinkerOptions, ObjectCode

        ltoir = _nvrtc(name, source, cc)
        nvjitlink_version()
        products = {}
        for output in ("ptx", "cubin"):
            opts = LinkerOptions(arch=arch(cc), link_time_optimization=True, ptx=output == "ptx")
            try:
                code = Linker(ObjectCode.from_ltoir(ltoir), options=opts).link(output).code
            except Exception as exc:
                raise CompileError(
                    f"nvJitLink could not link the library's kernel unit {name} to {output}:"
                    f"\n{exc}",
                    log=str(exc),
                ) from exc
            products[output] = bytes(code) if not isinstance(code, str) else code.encode()
        text = products["ptx"].decode()
        constants = {k: int(v) for k, v in _INT_CONST.findall(text)}
        return Artifact(payload=products["cubin"], meta=constants)

    art = get_or_build("kernel", key, build, what=f"{what or name} for {arch(cc)}")
    constants = {k: v for k, v in art.meta.items() if isinstance(v, int)}
    return art.payload, constants
