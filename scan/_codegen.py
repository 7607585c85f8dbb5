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

from ._plan import plan_fields
from ._vocab import (
    c_type,
    is_bfloat16,
    is_complex,
)

__all__ = [
    "GENERATOR_VERSION",
    "CallbackDecl",
    "complex_decl",
    "cub_plus_dtype",
    "functor_calling",
    "group_storage",
    "operator_functor",
    "prefix_functor",
    "render_group",
    "render_unit",
    "temp_decl",
    "template",
    "unit_summary",
    "value_decl",
    "value_includes",
]

#: Bumped whenever the generated text changes; part of every cache key.
GENERATOR_VERSION = "18"

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


def template(name: str) -> string.Template:
    text = resources.files("scan").joinpath("_templates", name).read_text(encoding="utf-8")
    return string.Template(text)


def unit_summary(plan: Any) -> str:
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


def temp_decl(mode: str, storage: str | None = None) -> str:
    if mode == "implicit" and storage is not None:
        # the buffer its unit's sharing providers overlay (render_group)
        return f"  temp_storage_t& temp_storage = *static_cast<temp_storage_t*>({storage}());"
    if mode == "implicit":
        return (
            "  __shared__ temp_storage_t library_temp_storage;\n"
            "  temp_storage_t& temp_storage = library_temp_storage;"
        )
    return "  temp_storage_t& temp_storage = *static_cast<temp_storage_t*>(temp);"


_CUB_PLUS_DTYPES = frozenset({"int32", "uint32", "int64", "uint64", "float32", "float64"})


def cub_plus_dtype(dtype: np.dtype) -> bool:
    """Whether CUB's warp-level steps specialise ``::cuda::std::plus<>`` for `dtype`."""
    return dtype.name in _CUB_PLUS_DTYPES


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
        As in :func:`scan._primitives.block_scan._unit.scan_unit`.
    params : str
        The entry point's C++ parameter list (:func:`scan._spec.c_parameters`).
    comment : str
        One line on what the entry point does with its operands.
    body : str
        The entry point's statements after ``temp_storage`` is declared.
    value_dtypes : sequence of numpy.dtype
        Further dtypes of the unit's values (whose headers it includes).
    """
    return template("unit.cuh.in").substitute(
        generator_version=GENERATOR_VERSION,
        plan_key=plan.key,
        summary=unit_summary(plan),
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
        temp_decl=temp_decl(plan.temp_storage, storage),
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
        Each provider's unit (the families' renderers)
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
