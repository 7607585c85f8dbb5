# SPDX-License-Identifier: Apache-2.0
"""The generated operators and callback glue, compiled for the host and run against NumPy.

Golden files pin the generated text and the compile tests check that NVRTC
accepts it; neither notices a ``min`` that computes a maximum, or a prefix
functor that hands the callback its operands in the wrong order. Here the
functors of real generated units (:func:`scan._primitives.block_scan.render_scan`; the part
inside the unit's anonymous namespace: ``value_t``, ``scan_op_t`` and
``prefix_op_t``) are compiled by the host's C++ compiler, with a small shim
for the CUDA keywords and the CUB names they mention, and run on seeded random
operands:

* every built-in operator on every value dtype it is defined for, against
  NumPy (integers wrap, floats round to the value dtype); ``+`` also in a
  configuration where it stays the unit's own functor rather than CUB's
  ``::cuda::std::plus<>``;
* the glue that calls a lowered callback through the pointer ABI, declared as
  :func:`statefn.pointer_abi` declares it: a stateful prefix callback
  (result, state, aggregate), a stateless one (result, aggregate) and a user
  scan operator (result, lhs, rhs), with numeric and record values. The
  callbacks are host stand-ins with the pointer ABI's signature whose results
  depend on which operand is which, so a swap shows.

All cases build in one compiler run. Integer arithmetic is compiled with
``-fwrapv`` (two's-complement wraparound, which the device code gets from
NVVM and NumPy gives arrays) and floating point with ``-ffp-contract=off``
(each operation rounded on its own, as NumPy does). Without a host C++
compiler (``$CXX``, ``g++``, ``c++`` or ``clang++``) the tests skip and say so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from helpers.plans import scan_plan

import statefn
from scan._codegen import CallbackDecl
from scan._plan import ArrayFact
from scan._primitives.block_scan import render_scan
from scan._primitives.block_scan._plan import ScanPlan
from scan._primitives.block_scan._unit import OWN_PLUS, cub_plus

N = 512  # operand pairs (or aggregates) per case
SEED = 20261204
PAIR = np.dtype([("a", np.float32), ("b", np.float32)], align=True)
BITWISE = ("&", "|", "^")

# Defines away the CUDA keywords and declares the CUB names the functors'
# namespace mentions; ``plus<>`` is CUB's (a + b). Nothing of CUB runs here.
SHIM = r"""
#include <cstdio>
#include <cstdlib>
#define __device__
#define __host__
#define __forceinline__ inline
namespace cub {
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };
template <class T, int X, BlockScanAlgorithm A, int Y, int Z>
struct BlockScan { struct TempStorage { char unused; }; };
}
namespace cuda { namespace std {
template <class T = void> struct plus;
template <> struct plus<void> {
  template <class A, class B> auto operator()(const A& a, const B& b) const { return a + b; }
};
} }
static void load(const char* dir, int i, const char* what, void* data, size_t bytes) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/%d.%s", dir, i, what);
  FILE* f = std::fopen(path, "rb");
  if (!f || std::fread(data, 1, bytes, f) != bytes) { std::perror(path); std::exit(2); }
  std::fclose(f);
}
static void save(const char* dir, int i, const char* what, const void* data, size_t bytes) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/%d.%s", dir, i, what);
  FILE* f = std::fopen(path, "wb");
  if (!f || std::fwrite(data, 1, bytes, f) != bytes) { std::perror(path); std::exit(2); }
  std::fclose(f);
}
"""

# scan_op_t on operand pairs: inputs ``in0`` (a) and ``in1`` (b), output ``out0``
BINARY_RUN = """
  static value_t a[{n}], b[{n}], r[{n}];
  load(dir, i, "in0", a, sizeof a);
  load(dir, i, "in1", b, sizeof b);
  for (int k = 0; k < {n}; ++k) r[k] = scan_op_t{{}}(a[k], b[k]);
  save(dir, i, "out0", r, sizeof r);
"""

# prefix_op_t called once per aggregate, as CUB calls it once per tile: inputs
# ``in0`` (the state) and ``in1`` (aggregates), outputs ``out0`` (the prefixes)
# and ``out1`` (the final state)
PREFIX_RUN = """
  static value_t agg[{n}], r[{n}];
  static unsigned char state[{state_bytes}];
  load(dir, i, "in0", state, sizeof state);
  load(dir, i, "in1", agg, sizeof agg);
  prefix_op_t prefix_op{{{state}}};
  for (int k = 0; k < {n}; ++k) r[k] = prefix_op(agg[k]);
  save(dir, i, "out0", r, sizeof r);
  save(dir, i, "out1", state, sizeof state);
"""

# The reference, spelled out here rather than taken from the library's own table
# (statefn._descriptors._HOST_UFUNCS): a wrong entry there must not hide here.
NUMPY_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "+": np.add,
    "*": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
}


@dataclass
class Case:
    """One generated unit's functors, what to run them on, and what NumPy expects."""

    name: str
    unit: str  # render_scan's text
    run: str  # C++ statements of ``run(dir, i)`` inside the case's namespace
    inputs: tuple[np.ndarray, ...]
    expected: list[np.ndarray]
    callbacks: list[str] = field(default_factory=list)  # host definitions


# ---------------------------------------------------------------- built-in operators


def operands(dtype: np.dtype[Any], rng: np.random.Generator) -> np.ndarray:
    """Random operands of `dtype`, extremes and repeated values included."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=N, dtype=dtype, endpoint=True)
        edges = [info.min, info.max, 0, 1, info.max // 2]
        if dtype.kind == "i":
            edges += [-1, info.min + 1]
    elif dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        values = operands(part, rng) + 1j * rng.permutation(operands(part, rng))
        return values.astype(dtype)
    else:
        top = 8 if dtype.itemsize == 4 else 40
        values = (rng.standard_normal(N) * 10.0 ** rng.integers(-top, top, size=N)).astype(dtype)
        big = float(np.finfo(dtype).max)
        edges = [big, -big, 1.0, -1.0, 0.5, 3.0]
    values[: len(edges)] = edges
    values[len(edges) : 2 * len(edges)] = rng.permutation(np.array(edges, dtype=dtype))
    return values


def builtin_case(name: str, plan: ScanPlan, rng: np.random.Generator) -> Case:
    dtype = plan.value_dtype
    a, b = operands(dtype, rng), operands(dtype, rng)
    rng.shuffle(b)
    with np.errstate(all="ignore"):
        expected = NUMPY_OPS[str(plan.scan_op.builtin)](a, b).astype(dtype)
        if dtype.kind == "c" and plan.scan_op.builtin == "*":
            # the textbook product, each operation rounded (NumPy's may fuse a multiply-add)
            re = a.real * b.real - a.imag * b.imag
            im = a.real * b.imag + a.imag * b.real
            expected = np.empty(len(a), dtype)
            expected.real, expected.imag = re, im
    return Case(name, render_scan(plan), BINARY_RUN.format(n=N), (a, b), [expected])


def host_case(op: str, dtype: np.dtype[Any]) -> bool:
    """Whether `op` on `dtype` is a case here: one the plan takes, in a type the host has."""
    if (dtype.kind in "fc" and op in BITWISE) or (dtype.kind == "c" and op in ("min", "max")):
        return False  # refused by the plan
    return dtype != np.float16  # __half is CUDA's (the compile tests compile it)


def builtin_cases(rng: np.random.Generator) -> list[Case]:
    cases = []
    for op in NUMPY_OPS:
        for dtype in statefn.STATE_DTYPES:
            if not host_case(op, dtype):
                continue
            plan = scan_plan(function="inclusive_scan", scan_op=op, values=ArrayFact(dtype, 1, 4))
            cases.append(builtin_case(f"{op} {dtype.name}", plan, rng))
            if cub_plus(plan):
                algorithm, threads, items = sorted(OWN_PLUS)[0]
                own = scan_plan(
                    function="inclusive_scan",
                    scan_op=op,
                    values=ArrayFact(dtype, 1, items),
                    algorithm=algorithm,
                    block=(threads, 1, 1),
                )
                assert not cub_plus(own)
                cases.append(builtin_case(f"{op} {dtype.name} (own functor)", own, rng))
    return cases


# ---------------------------------------------------------------- callback glue


def decl(descriptor: Any, dtype: np.dtype[Any]) -> CallbackDecl:
    symbol, c_decl = statefn.pointer_abi(descriptor, dtype)
    return CallbackDecl(symbol=symbol, c_decl=c_decl)


def definition(callback: CallbackDecl, body: str) -> str:
    """A host definition of `callback` with the declaration's own parameter list."""
    head = callback.c_decl.replace("__device__ ", "").rstrip(";")
    return f"{head} {{\n{body}\n  return 0;\n}}\n"


def compose(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The affine maps ``x`` then ``y`` (records of ``PAIR``), in float32."""
    r = np.zeros(len(x), dtype=PAIR)
    r["a"] = x["a"] * y["a"]
    r["b"] = y["a"] * x["b"] + y["b"]
    return r


def _op(a: Any, b: Any) -> Any:
    return a  # never compiled: the host stand-ins define what each callback computes


#: a record scan operator, and its host stand-in: the affine maps lhs then rhs
COMPOSE_OP = statefn.scan_op(_op, name="compose")
COMPOSE = """
  const float* x = static_cast<const float*>(lhs);
  const float* y = static_cast<const float*>(rhs);
  float* r = static_cast<float*>(result);
  r[0] = x[0] * y[0];
  r[1] = y[0] * x[1] + y[1];"""


def pairs(rng: np.random.Generator, scale: float) -> np.ndarray:
    p = np.zeros(N, dtype=PAIR)
    p["a"] = rng.choice([-1.0, 1.0, 0.5, 2.0, 0.75], size=N)
    p["b"] = rng.integers(-50, 50, size=N) * scale
    return p


def prefix_case(
    name: str,
    descriptor: Any,
    value: np.dtype[Any],
    state0: np.ndarray | None,
    aggregates: np.ndarray,
    body: str,
    expected: list[np.ndarray],
) -> Case:
    stateful = isinstance(descriptor, statefn.StatefulFunction)
    record = value.names is not None
    plan = scan_plan(
        function="inclusive_scan",
        scan_op=COMPOSE_OP if record else "max",
        values=ArrayFact(value, 1, 4),
        prefix_op=descriptor,
        prefix_state=ArrayFact(descriptor.state_dtype, 1, 1) if stateful else None,
    )
    callback = decl(descriptor, value)
    callbacks = [definition(callback, body)]
    op_callback = decl(COMPOSE_OP, value) if record else None
    if op_callback is not None:
        callbacks.append(definition(op_callback, COMPOSE))
    state = state0 if state0 is not None else np.zeros(1, np.uint8)
    unit = render_scan(plan, prefix_callback=callback, scan_callback=op_callback)
    run = PREFIX_RUN.format(n=N, state_bytes=state.nbytes, state="state" if stateful else "nullptr")
    return Case(name, unit, run, (state, aggregates), expected, callbacks)


def callback_cases(rng: np.random.Generator) -> list[Case]:
    cases = []

    # stateful, int32 values, an int64 state: returns the state, then adds the aggregate
    agg = rng.integers(-(2**31), 2**31, size=N).astype(np.int32)
    s0 = np.array([2**40 + 12345], dtype=np.int64)
    totals = s0[0] + np.concatenate([[0], np.cumsum(agg, dtype=np.int64)])
    cases.append(
        prefix_case(
            "stateful int32, int64 state",
            statefn.stateful(np.int64, name="running_total")(_op),
            np.dtype(np.int32),
            s0,
            agg,
            "  long long* s = static_cast<long long*>(state);\n"
            "  const int agg = *static_cast<const int*>(aggregate);\n"
            "  *static_cast<int*>(result) = static_cast<int>(s[0]);\n"
            "  s[0] += agg;",
            [totals[:-1].astype(np.int32), totals[-1:]],
        )
    )

    # stateful, float64: the state halves before the aggregate is added
    agg64 = rng.standard_normal(N)
    s = 0.75
    prefixes = []
    for x in agg64.tolist():
        prefixes.append(s)
        s = s * 0.5 + x
    cases.append(
        prefix_case(
            "stateful float64",
            statefn.stateful(np.float64, name="decay")(_op),
            np.dtype(np.float64),
            np.array([0.75]),
            agg64,
            "  double* s = static_cast<double*>(state);\n"
            "  const double agg = *static_cast<const double*>(aggregate);\n"
            "  *static_cast<double*>(result) = s[0];\n"
            "  s[0] = s[0] * 0.5 + agg;",
            [np.array(prefixes), np.array([s])],
        )
    )

    # stateless, int16: 3 * aggregate + 1, wrapping
    agg16 = operands(np.dtype(np.int16), rng)
    cases.append(
        prefix_case(
            "stateless int16",
            statefn.stateless(lambda block_aggregate: block_aggregate, name="affine"),
            np.dtype(np.int16),
            None,
            agg16,
            "  const short agg = *static_cast<const short*>(aggregate);\n"
            "  *static_cast<short*>(result) = static_cast<short>(agg * 3 + 1);",
            [agg16 * np.int16(3) + np.int16(1)],
        )
    )

    # stateful, records: the state composes the affine maps seen so far
    aggp = pairs(rng, 1.0)
    p0 = np.array([(1.0, 3.0)], dtype=PAIR)
    running = [p0]
    for k in range(N):
        running.append(compose(running[-1], aggp[k : k + 1]))
    cases.append(
        prefix_case(
            "stateful record",
            statefn.stateful(PAIR, name="carry_map")(_op),
            PAIR,
            p0,
            aggp,
            "  float* s = static_cast<float*>(state);\n"
            "  const float* y = static_cast<const float*>(aggregate);\n"
            "  float* r = static_cast<float*>(result);\n"
            "  r[0] = s[0]; r[1] = s[1];\n"
            "  s[1] = y[0] * s[1] + y[1];\n"
            "  s[0] = s[0] * y[0];",
            [np.concatenate(running[:-1]), running[-1]],
        )
    )

    # user scan operators: lhs - 2 * rhs on int32, affine composition on records
    a32, b32 = operands(np.dtype(np.int32), rng), operands(np.dtype(np.int32), rng)
    ap, bp = pairs(rng, 0.25), pairs(rng, 0.5)
    for name, value, body, a, b, expected in [
        (
            "scan_op int32",
            np.dtype(np.int32),
            "  const int x = *static_cast<const int*>(lhs), y = *static_cast<const int*>(rhs);\n"
            "  *static_cast<int*>(result) = x - 2 * y;",
            a32,
            b32,
            a32 - np.int32(2) * b32,
        ),
        (
            "scan_op record",
            PAIR,
            COMPOSE,
            ap,
            bp,
            compose(ap, bp),
        ),
    ]:
        descriptor = COMPOSE_OP if value.names else statefn.scan_op(_op, name="twice")
        callback = decl(descriptor, value)
        plan = scan_plan(
            function="inclusive_scan", scan_op=descriptor, values=ArrayFact(value, 1, 4)
        )
        cases.append(
            Case(
                name,
                render_scan(plan, scan_callback=callback),
                BINARY_RUN.format(n=N),
                (a, b),
                [expected],
                [definition(callback, body)],
            )
        )
    return cases


# ---------------------------------------------------------------- the harness


def functors(unit: str) -> tuple[list[str], str]:
    """The callback declarations and the anonymous namespace of a generated unit."""
    head, sep, rest = unit.partition("\nnamespace {\n")
    body, sep2, _ = rest.partition("\n} // namespace\n")
    assert sep, "the generated unit's layout changed: update functors()"
    assert sep2, "the generated unit's layout changed: update functors()"
    decls = [line for line in head.splitlines() if line.startswith('extern "C"')]
    return decls, body


def harness(cases: list[Case]) -> str:
    """One C++ program running every case: ``harness DIR`` reads and writes ``DIR/<i>.*``."""
    decls: list[str] = []
    namespaces = []
    for i, case in enumerate(cases):
        case_decls, body = functors(case.unit)
        decls += [d for d in case_decls if d not in decls]
        namespaces.append(
            f"// {case.name}\nnamespace case{i} {{\nnamespace {{\n{body}\n}}\n"
            f"void run(const char* dir, int i) {{{case.run}}}\n}}\n"
        )
    definitions = list(dict.fromkeys(d for case in cases for d in case.callbacks))
    calls = "".join(f"  case{i}::run(argv[1], {i});\n" for i in range(len(cases)))
    main = (
        f"int main(int argc, char** argv) {{\n  if (argc != 2) return 2;\n{calls}  return 0;\n}}\n"
    )
    return "\n".join([SHIM, *decls, *namespaces, *definitions, main])


def host_compiler() -> str | None:
    for name in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        path = shutil.which(name) if name else None
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Case, list[np.ndarray]]]:
    """Every case compiled in one program, run once: each case with its outputs."""
    cxx = host_compiler()
    if cxx is None:
        pytest.skip(
            "!!!!! no host C++ compiler ($CXX, g++, c++ or clang++): the semantics of the "
            "generated operators and callback glue are NOT tested"
        )
    rng = np.random.default_rng(SEED)
    cases = builtin_cases(rng) + callback_cases(rng)
    work = tmp_path_factory.mktemp("operators")
    source = work / "harness.cpp"
    source.write_text(harness(cases))
    exe = work / "harness"
    flags = ["-std=c++17", "-O1", "-fwrapv", "-ffp-contract=off", "-w"]
    built = subprocess.run(
        [cxx, *flags, "-o", str(exe), str(source)], capture_output=True, text=True
    )
    assert built.returncode == 0, f"{source} does not compile:\n{built.stderr[-6000:]}"
    for i, case in enumerate(cases):
        for k, data in enumerate(case.inputs):
            (work / f"{i}.in{k}").write_bytes(data.tobytes())
    ran = subprocess.run([str(exe), str(work)], capture_output=True, text=True)
    assert ran.returncode == 0, f"{exe} failed with {ran.returncode}: {ran.stderr[-2000:]}"
    return [
        (
            case,
            [
                np.fromfile(work / f"{i}.out{k}", dtype=want.dtype)
                for k, want in enumerate(case.expected)
            ],
        )
        for i, case in enumerate(cases)
    ]


def mismatches(results: list[tuple[Case, list[np.ndarray]]], callbacks: bool) -> list[str]:
    wrong = []
    for case, found in results:
        if bool(case.callbacks) != callbacks:
            continue
        for k, (got, want) in enumerate(zip(found, case.expected, strict=True)):
            if got.dtype.names is not None:
                got, want = got.view(np.float32), want.view(np.float32)
            bad = np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))
            if len(got) != len(want) or len(bad):
                j = bad[0] if len(bad) else 0
                wrong.append(
                    f"{case.name}, output {k}: {len(bad)} of {len(want)} differ; first at {j}: "
                    f"got {got[j]!r}, NumPy {want[j]!r}"
                )
    return wrong


def test_builtin_operators_match_numpy(results: list[tuple[Case, list[np.ndarray]]]) -> None:
    wrong = mismatches(results, callbacks=False)
    assert not wrong, "generated operators disagree with NumPy:\n" + "\n".join(wrong)


def test_every_builtin_operator_and_dtype_ran(
    results: list[tuple[Case, list[np.ndarray]]],
) -> None:
    names = {case.name for case, _ in results}
    for op in NUMPY_OPS:
        for dtype in statefn.STATE_DTYPES:
            if host_case(op, dtype):
                assert f"{op} {dtype.name}" in names
    plus = [case.unit for case, _ in results if case.name.startswith("+ ")]
    # both spellings of "+": CUB's plus<> and the unit's own functor
    assert any("using scan_op_t = ::cuda::std::plus<>;" in u for u in plus)
    assert any("{ return a + b; }" in u for u in plus)


def test_callback_glue_passes_operands_in_abi_order(
    results: list[tuple[Case, list[np.ndarray]]],
) -> None:
    wrong = mismatches(results, callbacks=True)
    assert not wrong, "callback glue gives wrong results:\n" + "\n".join(wrong)
