# SPDX-License-Identifier: Apache-2.0
"""``scan.compile`` for numba-cuda-mlir kernels: compiled and linked without a GPU.

numba-cuda-mlir links a kernel's external objects itself when it builds the
cubin (``compile_cubin``); :func:`compile_kernel` compiles a fresh dispatcher
of the kernel's function with its options for an explicit compute capability
(:func:`~scan._numba_cuda_mlir._target.offline_target` where no GPU answers)
and returns that cubin, or the kernel's LTO-IR followed by every provider's
and callback's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

import statefn

from .._errors import ScanError
from .._numba_facts import compile_request
from ._lowering import collect_link_inputs
from ._target import offline_target
from ._typing import assume_block

__all__ = ["compile_kernel"]

_OPTIONS = ("debug", "lineinfo", "fastmath", "launch_bounds", "max_registers", "opt_level")
_MEMO: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def compile_kernel(
    kernel: Callable[..., Any],
    signature: Any,
    *,
    cc: tuple[int, int],
    output: Literal["cubin", "ltoir"] = "cubin",
    block: int | tuple[int, ...] | None = None,
) -> bytes | list[bytes]:
    """Compile and link a numba-cuda-mlir kernel using :mod:`scan.block` (see ``scan.compile``)."""
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda.core.sigutils import normalize_signature

    request = compile_request(
        kernel,
        signature,
        cc=cc,
        output=output,
        block=block,
        normalize_signature=normalize_signature,
        honoured=_OPTIONS,
    )
    pyfunc, args, target, shape = request.pyfunc, request.args, request.cc, request.block
    chosen = dict(request.options)
    memo_key = (*request.memo_key, output)
    with _lock:
        found = _MEMO.get(memo_key)
    if found is not None:
        return list(found) if output == "ltoir" else found
    try:
        with offline_target(target), assume_block(shape), collect_link_inputs() as inputs:
            if output == "ltoir":
                code, _ = cuda.compile(
                    pyfunc,
                    tuple(args),
                    device=False,
                    abi="numba",
                    output="ltoir",
                    cc=target,
                    **{
                        k: v
                        for k, v in chosen.items()
                        if k in ("debug", "lineinfo", "fastmath", "launch_bounds")
                    },
                )
                result: Any = (bytes(code), *inputs)
            else:
                dispatcher = cuda.jit(cc=target, lto=True, **chosen)(pyfunc)
                result = bytes(cuda.compile_cubin(dispatcher, tuple(args)))
    except (ScanError, statefn.StatefnError) as exc:  # named at the call: no compiler frames
        raise exc.with_traceback(None) from None
    with _lock:
        _MEMO[memo_key] = result
    return list(result) if output == "ltoir" else result
