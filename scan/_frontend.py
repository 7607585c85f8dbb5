# SPDX-License-Identifier: Apache-2.0
"""The contract between a Numba front end and the layers every front end shares.

A front end (``scan._numba_cuda``, ``scan._numba_cuda_mlir``) is the glue
between one Numba compiler and the neutral layers: it registers the typing
and lowering of :mod:`scan.block` calls with its compiler, says which kernels
are its own, compiles them for :func:`scan.compile`, and compiles user
callbacks for the build layer. Each front end's package exposes one object
that implements :class:`FrontEnd` (``FRONT_END``); :mod:`scan` dispatches to
those objects, and mypy checks that both implement the whole protocol.

What a front end supplies below this level is described by the shared layers
themselves: its Numba copy's IR and type modules
(:class:`scan._numba_facts.IRFacts`, :class:`scan._numba_facts.NumbaFacts`),
the primitive emitters of the operands of a provider's entry point
(:class:`scan._operands.OperandEmitter`), and its callback compiler
(:class:`scan._build.CallbackCompiler`).

Nothing here imports Numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from ._build import CallbackCompiler

__all__ = ["FrontEnd", "Output"]

#: What :func:`scan.compile` returns: a linked cubin, or every LTO-IR object.
Output = Literal["cubin", "ltoir"]


@runtime_checkable
class FrontEnd(Protocol):
    """One Numba compiler's glue, as :mod:`scan` and the build layer use it.

    Implementations must not import their Numba compiler before
    :meth:`install` asks for it where that compiler is optional
    (numba-cuda-mlir): importing :mod:`scan` never imports it.
    """

    @property
    def name(self) -> str:
        """The compiler's distribution name (``"numba-cuda"``, ``"numba-cuda-mlir"``)."""

    def install(self) -> None:
        """Register the typing and lowering of :mod:`scan.block` calls with the compiler.

        Called once, when :mod:`scan` is imported. A front end whose compiler
        is optional registers when that compiler is first imported.
        """

    def owns(self, kernel: object) -> bool:
        """Whether `kernel` (a ``cuda.jit`` dispatcher or a function) is compiled here."""

    def compile_kernel(
        self,
        kernel: Callable[..., Any],
        signature: Any,
        *,
        cc: tuple[int, int],
        output: Output = "cubin",
        block: int | tuple[int, ...] | None = None,
    ) -> bytes | list[bytes]:
        """:func:`scan.compile` for a kernel this front end owns."""

    def callbacks(self) -> CallbackCompiler:
        """The compiler of user callbacks the build layer calls for this front end's kernels."""
