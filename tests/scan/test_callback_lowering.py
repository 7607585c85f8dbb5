# SPDX-License-Identifier: Apache-2.0
"""numba-cuda lowering of callbacks to the pointer ABI with the real toolchain (no GPU needed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import statefn
from scan._numba_cuda._callbacks import lower
from statefn import CallbackCompileError, LoweredCallback, RoleError, StateDtypeError

CC = (9, 0)
ROOT = Path(__file__).resolve().parents[2]
DTYPES = statefn.STATE_DTYPES


def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


def running_max(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    if block_aggregate > prefix:
        state[0] = block_aggregate
    return prefix


STATEFUL = {dt: statefn.stateful(dt)(running_total) for dt in DTYPES}
# a running total returns its state: complex for complex states, which real values cannot hold
PAIRS = [(s, v) for s in DTYPES for v in DTYPES if (s.kind == "c") == (v.kind == "c")]


@pytest.mark.parametrize(
    ("state_dtype", "value_dtype"), PAIRS, ids=[f"{s}-{v}" for s, v in PAIRS]
)
def test_stateful_lowers_for_every_dtype_pair(
    state_dtype: np.dtype[Any], value_dtype: np.dtype[Any]
) -> None:
    lowered = lower(STATEFUL[state_dtype], value_dtype, cc=CC)
    assert isinstance(lowered, LoweredCallback)
    assert lowered.kind == "stateful"
    assert lowered.value_dtype == value_dtype
    assert lowered.state_dtype == state_dtype
    assert isinstance(lowered.ltoir, bytes)
    assert len(lowered.ltoir) > 100
    code = f"{value_dtype.kind}{value_dtype.itemsize}_{state_dtype.kind}{state_dtype.itemsize}"
    assert lowered.symbol.endswith(code)


def test_symbol_and_declaration_text() -> None:
    f = statefn.stateful(np.int64)(running_total)
    lowered = lower(f, np.int32, cc=CC)
    assert lowered.symbol == f"statefn_stateful_{f.key[:20]}_i4_i8"
    assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", lowered.symbol)
    assert lowered.c_decl == (
        f'extern "C" __device__ int {lowered.symbol}'
        "(void* result, void* state, const void* aggregate);"
    )
    assert lowered.ltoir_name == f"{lowered.symbol}.ltoir"
    assert "bytes>" in repr(lowered)


@pytest.mark.parametrize("value_dtype", ["i1", "u4", "i8", "f4", "f8"])
def test_stateless_lowering(value_dtype: str) -> None:
    d = statefn.stateless(lambda agg: agg * 2)
    lowered = lower(d, value_dtype, cc=CC)
    assert lowered.kind == "stateless"
    assert lowered.state_dtype is None
    assert lowered.symbol.endswith(f"_{value_dtype}_none")
    assert lowered.c_decl.endswith(f"{lowered.symbol}(void* result, const void* aggregate);")
    assert lowered.ltoir


@pytest.mark.parametrize("value_dtype", ["i4", "u8", "f4", "f8"])
def test_scan_op_lowering(value_dtype: str) -> None:
    d = statefn.scan_op(lambda a, b: a if a > b else b)
    lowered = lower(d, value_dtype, cc=CC)
    assert lowered.kind == "scan_op"
    assert lowered.symbol.startswith("statefn_scan_op_")
    assert lowered.c_decl.endswith(
        f"{lowered.symbol}(void* result, const void* lhs, const void* rhs);"
    )


def test_extra_defaults_are_compiled_in() -> None:
    d = statefn.stateful(np.int32)(lambda state, agg, scale=3, *, shift=1: state[0] * scale + shift)
    assert lower(d, np.int32, cc=CC).ltoir


def test_dispatcher_op_lowers_through_py_func() -> None:
    from numba import cuda

    d = statefn.stateful(np.int64)(cuda.jit(device=True)(running_max))
    assert lower(d, np.int64, cc=CC).ltoir


def test_same_request_returns_same_object() -> None:
    a = lower(statefn.stateful(np.int64)(running_max), np.int16, cc=CC)
    b = lower(statefn.stateful("i8")(running_max), "int16", cc=CC)
    assert a is b


def test_different_callbacks_get_different_symbols() -> None:
    total = lower(statefn.stateful(np.int64)(running_total), np.int64, cc=CC)
    maximum = lower(statefn.stateful(np.int64)(running_max), np.int64, cc=CC)
    named = lower(statefn.stateful(np.int64, name="other")(running_total), np.int64, cc=CC)
    assert len({total.symbol, maximum.symbol, named.symbol}) == 3


def test_value_and_state_dtypes_are_part_of_the_symbol() -> None:
    f = statefn.stateful(np.int64)(running_total)
    symbols = {lower(f, v, cc=CC).symbol for v in ("i4", "i8")}
    symbols.add(lower(f.with_state_dtype("u8"), "i4", cc=CC).symbol)
    assert len(symbols) == 3


def test_builtin_operator_is_not_lowered() -> None:
    with pytest.raises(
        RoleError,
        match=r"^built-in scan operator '\+' has no device function to lower; expected a user "
        r"callback\. The C\+\+ side uses CUB's functor for it: check ScanOperator\.is_builtin "
        r"before lowering\.$",
    ):
        lower(statefn.normalize("add", role="scan_op"), np.int32, cc=CC)


def test_unsupported_value_dtype() -> None:
    with pytest.raises(StateDtypeError, match=r"^value dtype bool is not supported; expected"):
        lower(statefn.stateless(lambda agg: agg), bool, cc=CC)


def test_cc_must_be_explicit_pair() -> None:
    with pytest.raises(TypeError, match=r"^cc must be a \(major, minor\) tuple of ints"):
        lower(statefn.stateless(lambda agg: agg), np.int32, cc="sm_90")  # type: ignore[arg-type]


def test_compile_error_names_callback_dtypes_and_numba_message() -> None:
    def broken(state: Any, agg: Any) -> Any:
        return state.no_such_attribute + agg

    d = statefn.stateful(np.int64, name="broken_carry")(broken)
    with pytest.raises(
        CallbackCompileError,
        match=r"(?s)^could not compile stateful callback 'broken_carry' for value dtype int32, "
        r"state dtype int64 \(cc 9\.0\): TypingError: .*Unknown attribute 'no_such_attribute'.*"
        r"Check that the function compiles in a CUDA kernel",
    ) as info:
        lower(d, np.int32, cc=CC)
    assert info.value.__cause__ is not None


def test_nested_device_function_compiles_without_a_gpu() -> None:
    from numba import cuda

    helper = cuda.jit(device=True)(lambda x: x + 1)
    scope = {"helper": helper}
    exec("def uses_helper(agg):\n    return helper(agg)\n", scope)
    d = statefn.stateless(scope["uses_helper"])
    assert lower(d, np.int32, cc=CC).ltoir
    assert not helper.overloads  # compiled as a copy for cc 9.0, not for a device


def test_python_implemented_numpy_function_needs_a_gpu() -> None:
    from numba import cuda

    d = statefn.stateless(lambda agg: np.clip(agg, 0, 9))
    if cuda.is_available():  # pragma: no cover - only on a GPU machine
        assert lower(d, np.int32, cc=CC).ltoir
        return
    with pytest.raises(
        CallbackCompileError,
        match=r"(?s)CudaSupportError: .*The callback calls a function that numba-cuda "
        r"compiles for the current device, which needs a GPU.*np\.clip",
    ):
        lower(d, np.int32, cc=CC)


# ------------------------------------------------------------------ link tests


def _link(objects: list[Any], target: str) -> Any:
    from cuda.core import Linker, LinkerOptions

    options = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=target == "ptx")
    return Linker(*objects, options=options).link(target)


def _caller_ltoir(source: str) -> Any:
    from cuda.core import Program, ProgramOptions

    options = ProgramOptions(
        arch="sm_90", relocatable_device_code=True, link_time_optimization=True, std="c++17"
    )
    return Program(source, "c++", options=options).compile("ltoir")


@pytest.mark.nvrtc
def test_declaration_links_with_definition() -> None:
    from cuda.core import ObjectCode

    lowered = lower(statefn.stateful(np.int64)(running_total), np.int32, cc=CC)
    source = lowered.c_decl + textwrap.dedent(
        f"""
        extern "C" __global__ void caller(int* out, long long* state, const int* agg) {{
            int status = {lowered.symbol}(out + threadIdx.x, state + threadIdx.x, agg);
            if (status != 0) {{ out[threadIdx.x] = -1; }}
        }}
        """
    )
    callback = ObjectCode.from_ltoir(lowered.ltoir, name=lowered.ltoir_name)
    cubin = _link([_caller_ltoir(source), callback], "cubin")
    assert cubin.code[:4] == b"\x7fELF"


GENERATOR = """
import sys
import numpy as np
import statefn
from scan._numba_cuda._callbacks import lower

def make(k):
    def scaled(state, agg):
        prefix = state[0]
        state[0] = prefix + agg * k
        return prefix
    return scaled

lowered = lower(statefn.stateful(np.int64)(make(int(sys.argv[1]))), np.int64, cc=(9, 0))
open(sys.argv[2], "wb").write(lowered.ltoir)
print(lowered.symbol)
"""


@pytest.mark.nvrtc
def test_callbacks_from_different_processes_link_without_merging(tmp_path: Path) -> None:
    # Same qualname, same code, first compile in each process: Numba's internal
    # function names would coincide; each body must still survive the link.
    from cuda.core import ObjectCode

    script = tmp_path / "gen.py"
    script.write_text(GENERATOR)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    symbols, objects = [], []
    for k in (1234567, 7654321):
        path = tmp_path / f"cb{k}.ltoir"
        out = subprocess.run(
            [sys.executable, str(script), str(k), str(path)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        symbols.append(out.stdout.strip())
        objects.append(ObjectCode.from_ltoir(path.read_bytes(), name=path.name))
    assert symbols[0] != symbols[1]
    decls = "\n".join(
        f'extern "C" __device__ int {s}(void* result, void* state, const void* aggregate);'
        for s in symbols
    )
    source = decls + textwrap.dedent(
        f"""
        extern "C" __global__ void caller(long long* out, long long* st, const long long* agg) {{
            {symbols[0]}(out, st, agg);
            {symbols[1]}(out + 1, st + 1, agg);
        }}
        """
    )
    ptx = _link([_caller_ltoir(source), *objects], "ptx").code
    text = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
    assert "1234567" in text
    assert "7654321" in text
