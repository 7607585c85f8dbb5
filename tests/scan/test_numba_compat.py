# SPDX-License-Identifier: Apache-2.0
"""What the front ends read from Numba without a public hook, against the installed versions.

:mod:`scan._numba_cuda._compat` holds numba-cuda's private state and frame
reads; each function is tested here against the installed numba-cuda, whose
version must be one of :data:`scan._numba_cuda._compat.SUPPORTED`: a new
numba-cuda fails first here, by name, and the functions are checked again
before the version is added. The typing root (:func:`scan._numba_facts.typing_root`)
reads the typing context's call stack through its public sequence interface,
checked here against both front ends' Numba copies.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import scan
from scan import block
from scan._numba_facts import typing_root

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="compiles real kernels"
)

CC = (9, 0)


def _numba_cuda_version() -> tuple[int, int]:
    import numba_cuda

    major, minor = numba_cuda.__version__.split(".")[:2]
    return int(major), int(minor)


def test_the_installed_numba_cuda_is_a_supported_one() -> None:
    import numba_cuda

    from scan._numba_cuda._compat import SUPPORTED

    assert _numba_cuda_version() in SUPPORTED, (
        f"numba-cuda {numba_cuda.__version__} is not among the versions scan._numba_cuda._compat "
        f"was checked against ({', '.join(f'{v[0]}.{v[1]}' for v in SUPPORTED)}): run this module, "
        "check each function still reads what it should, then add the version to SUPPORTED"
    )


# ---------------------------------------------------------------------------
# inside_compile: cuda.compile's frame


def _probe() -> tuple[Any, list[bool]]:
    """A kernel calling a function whose typing records :func:`inside_compile`."""
    from numba.cuda import types
    from numba.cuda.extending import type_callable

    from scan._numba_cuda._compat import inside_compile

    seen: list[bool] = []

    def probe() -> None:  # typed only
        raise NotImplementedError

    @type_callable(probe)
    def _typer(context: Any) -> Any:
        def typer() -> Any:
            seen.append(inside_compile())
            return types.none

        return typer

    def kernel(a: Any) -> None:
        probe()

    return kernel, seen


def _compile_until_lowering(compile_it: Any) -> list[bool]:
    from numba.cuda import types

    kernel, seen = _probe()
    with pytest.raises(Exception):  # noqa: B017 - probe has no lowering
        compile_it(kernel, (types.int32[::1],))
    return seen


def test_inside_compile_sees_cuda_compile() -> None:
    from numba import cuda

    seen = _compile_until_lowering(
        lambda k, sig: cuda.compile(k, sig, device=False, abi="numba", output="ltoir", cc=CC)
    )
    assert seen
    assert all(seen)
    seen = _compile_until_lowering(lambda k, sig: cuda.compile_ptx(k, sig, device=False, cc=CC))
    assert seen
    assert all(seen)


def test_inside_compile_is_false_elsewhere() -> None:
    from numba import cuda

    from scan._numba_cuda._compat import inside_compile

    assert not inside_compile()
    seen = _compile_until_lowering(
        lambda k, sig: cuda.compile_all(k, sig, device=False, abi="numba", output="ltoir", cc=CC)
    )
    assert seen
    assert not any(seen)


@pytest.mark.nvrtc
def test_kernels_without_lto_are_refused_and_compile_all_is_not() -> None:
    """The flags decide lto (``lto=False``); ``compile_all`` keeps every link input."""
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda

    def _load_store(src: Any, dst: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items, threads=128)
        block.store(dst, 0, items, threads=128)

    arr = types.int32[::1]
    with pytest.raises(scan.PlanError, match=r"@cuda\.jit\(lto=False\) or debug=True"):
        compile_cuda(_load_store, types.void, (arr, arr), nvvm_options={"opt": 3}, cc=CC, lto=False)
    codes, _ = cuda.compile_all(
        _load_store, (arr, arr), device=False, abi="numba", output="ltoir", cc=CC
    )
    assert len(codes) > 1  # the kernel and its provider


# ---------------------------------------------------------------------------
# declared_signatures_only: a dispatcher closed to new signatures


def test_declared_signatures_only() -> None:
    from numba import cuda
    from numba.cuda import types

    from scan._numba_cuda._callbacks import _offline_dispatcher
    from scan._numba_cuda._compat import declared_signatures_only

    def twice(x: Any) -> Any:
        return 2 * x

    assert not declared_signatures_only(cuda.jit(device=True)(twice))
    cls = _offline_dispatcher()
    closed = cls.__new__(cls)
    closed.cc = CC
    cls.__init__(closed, twice, {"device": True})
    closed.compile_device((types.int32,), types.int32)
    assert not declared_signatures_only(closed)
    closed.disable_compile()
    assert declared_signatures_only(closed)


# ---------------------------------------------------------------------------
# typing_root: the outermost function being typed, through the public CallStack


def _call_stacks() -> list[Any]:
    from numba.cuda.typing.context import CallStack

    stacks = [CallStack]
    try:
        from numba_cuda_mlir.numba_cuda.typing.context import CallStack as MlirCallStack
    except ImportError:
        pass
    else:
        stacks.append(MlirCallStack)
    return stacks


@pytest.mark.parametrize("call_stack", _call_stacks(), ids=lambda c: c.__module__.split(".")[0])
def test_typing_root_is_the_outermost_frame(call_stack: type) -> None:
    def outer() -> None: ...

    def inner() -> None: ...

    stack = call_stack()
    context = SimpleNamespace(callstack=stack)
    assert typing_root(context) is None
    with stack.register("cuda", None, SimpleNamespace(func=outer), ()):
        with stack.register("cuda", None, SimpleNamespace(func=inner), ()):
            root = typing_root(context)
            assert root.func_id.func is outer
            assert stack[0].func_id.func is inner  # item 0 is the innermost
        assert typing_root(context) is root
    assert typing_root(context) is None


# ---------------------------------------------------------------------------
# set_definition and struct_value: Numba IR's definitions table, a struct proxy's value


def test_set_definition_is_what_get_definition_reads() -> None:
    from numba.cuda.compiler import run_frontend
    from numba.cuda.core import ir

    from scan._numba_cuda._compat import set_definition

    def f(a: Any) -> Any:
        b = a + 1
        return b

    func_ir = run_frontend(f)
    assert isinstance(func_ir.get_definition("b"), ir.Expr)
    value = ir.Const(7, func_ir.loc)
    set_definition(func_ir, "b", value)
    assert func_ir.get_definition("b") is value


def test_struct_value_is_the_proxys_llvm_value() -> None:
    from llvmlite import ir as llvm
    from numba.cuda import types
    from numba.cuda.descriptor import cuda_target

    from scan._numba_cuda._compat import struct_value

    context = cuda_target.target_context
    module = llvm.Module()
    fn = llvm.Function(module, llvm.FunctionType(llvm.VoidType(), []), "f")
    builder = llvm.IRBuilder(fn.append_basic_block())
    arr = types.Array(types.int64, 1, "C")
    proxy = context.make_array(arr)(context, builder)
    value = struct_value(proxy)
    assert isinstance(value, llvm.Value)
    assert value.type == context.get_value_type(arr)
