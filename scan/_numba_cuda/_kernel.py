# SPDX-License-Identifier: Apache-2.0
"""``scan.compile``: a kernel that calls :mod:`scan.block`, compiled and linked without a GPU.

numba-cuda's ``cuda.compile``/``compile_ptx`` return the kernel's own code
only; the CUB providers and callbacks a :mod:`scan.block` call needs are link
inputs they leave out. :func:`compile_kernel` compiles the kernel with every
one of them (``cuda.compile_all``) for an explicit compute capability and
links them with nvJitLink into a cubin, through the persistent cache; the
lowering refuses the incomplete paths with a pointer here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

import statefn

from .._errors import ScanError
from .._numba_facts import CompileRequest, compile_request
from . import _linkcache

__all__ = ["compile_kernel"]

_MEMO: dict[tuple[Any, ...], tuple[bytes, ...]] = {}
_lock = threading.Lock()
# the dispatcher options compile_all takes
_OPTIONS = ("debug", "lineinfo", "fastmath", "opt", "launch_bounds")


def compile_kernel(
    kernel: Callable[..., Any],
    signature: Any,
    *,
    cc: tuple[int, int],
    output: Literal["cubin", "ltoir"] = "cubin",
    block: int | tuple[int, ...] | None = None,
) -> bytes | list[bytes]:
    """Compile and link a kernel that uses :mod:`scan.block`, for `cc`, without a GPU.

    Parameters
    ----------
    kernel : @cuda.jit dispatcher or Python function
        The kernel (its options such as ``fastmath``, ``lineinfo`` and
        ``launch_bounds`` are honoured).
    signature : str, tuple of numba types or numba signature
        Its argument types, e.g. ``"void(int32[::1], int32[::1])"`` or
        ``(int32[::1], int32[::1])``.
    cc : tuple of int
        Target compute capability, e.g. ``(9, 0)``.
    output : {"cubin", "ltoir"}
        ``"cubin"``: the linked cubin (load it with ``cuda.core``'s
        ``ObjectCode.from_cubin``, ``cuobjdump`` or a driver module).
        ``"ltoir"``: every LTO-IR object instead, the kernel's first.
    block : int or tuple of int, optional
        The block shape the kernel will be launched with, for calls that take
        it from the launch (no ``threads=``).

    Returns
    -------
    bytes or list of bytes

    Raises
    ------
    PlanError, ScanTypeError, statefn.StatefnError
        A call the library refuses (named at its line in the kernel).
    ToolchainError
        NVRTC, nvJitLink, NVVM or the CCCL headers are missing.
    """
    from numba.core import config

    if config.ENABLE_CUDASIM:
        raise RuntimeError(
            "scan.compile builds GPU code with numba-cuda's compiler, which is not loaded under "
            "NUMBA_ENABLE_CUDASIM=1 (the simulator); run it without that variable"
        )
    from numba.cuda.core.sigutils import normalize_signature

    request = compile_request(
        kernel,
        signature,
        cc=cc,
        output=output,
        block=block,
        normalize_signature=normalize_signature,
        honoured=_OPTIONS,
    )
    # Like a dispatcher, compile a dispatcher (or a function) once per signature
    # and target in a process (numba numbers functions as it compiles them: a
    # second compile would give other symbol names, and so other bytes).
    memo_key = request.memo_key
    try:
        objects = _MEMO.get(memo_key)
        memoised = True
    except TypeError:  # an unhashable option
        objects, memoised = None, False
    if objects is None:
        objects = _objects(request)
        if memoised:
            with _lock:
                _MEMO[memo_key] = objects
    if output == "ltoir":
        return list(objects)
    name = getattr(request.pyfunc, "__qualname__", "")
    return _linkcache.link_objects(objects, request.cc, name)


def _objects(request: CompileRequest) -> tuple[bytes, ...]:
    from numba import cuda

    from ._typing import assume_block  # registers the typing: not under the simulator

    try:
        bounds = dict(request.options).get("launch_bounds")
        with assume_block(request.block, launch_bounds=bounds):
            codes, _ = cuda.compile_all(
                request.pyfunc,
                request.args,
                device=False,
                abi="numba",
                output="ltoir",
                cc=request.cc,
                **dict(request.options),
            )
    except (ScanError, statefn.StatefnError) as exc:  # named at the call: no numba frames
        raise exc.with_traceback(None) from None
    return tuple(_bytes(code) for code in codes)


def _bytes(code: Any) -> bytes:
    # numba-cuda's LTOIR objects hold .data; cuda.core's ObjectCode (numba-cuda's
    # C++ helper functions, compiled for the kernel) holds .code
    data = getattr(code, "data", None)
    if data is None:
        data = getattr(code, "code", code)
    return data.encode() if isinstance(data, str) else bytes(data)
