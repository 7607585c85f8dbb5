# SPDX-License-Identifier: Apache-2.0
"""What the front ends need from numba-cuda (and the Numba core it carries) with no public hook.

Each function here reads or writes private numba-cuda state, or reads the
interpreter's frames, and is the only place that does (outside the simulator, which reads
frames to name the user's line, and :mod:`._linkcache`, which fills the code
library's own cubin cache and steps aside when the attributes it needs are
missing). Each has a test against the installed numba-cuda
(``tests/scan/test_numba_compat.py``) that names the versions it was written
for, :data:`SUPPORTED`, so a numba-cuda that drops what it reads fails there
first, with the version in the message.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

__all__ = [
    "SUPPORTED",
    "declared_signatures_only",
    "inside_compile",
    "set_definition",
    "struct_value",
]

#: The numba-cuda releases (major, minor) these functions were checked against.
SUPPORTED: tuple[tuple[int, int], ...] = ((0, 30),)


def inside_compile() -> bool:
    """Whether the caller runs under numba-cuda's ``cuda.compile`` (or ``compile_ptx``).

    ``cuda.compile`` returns the kernel's own code without its link inputs,
    unlike ``compile_all``; both compile through the same internal function
    with the same flags and code library, so nothing a lowering sees tells
    them apart except ``compile``'s frame below it on the stack.
    """
    from numba.cuda import compiler

    compile_code = inspect.unwrap(compiler.compile).__code__  # under the compiler lock
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code is compile_code:
            return True
        frame = frame.f_back
    return False


def declared_signatures_only(dispatcher: Any) -> bool:
    """Whether a ``cuda.jit`` dispatcher compiles no new signatures at call time.

    A function declared with signatures (``@cuda.jit("int32(int32)", device=True)``)
    is compiled for those and then closed (``disable_compile()``); numba-cuda
    keeps that state in a private attribute only.
    """
    return not dispatcher._can_compile


def set_definition(func_ir: Any, name: str, value: Any) -> None:
    """Record `value` as the one definition of variable `name` in a function's IR.

    A rewrite that adds assignments to Numba IR must also add them to the
    IR's definitions table, which later passes read through
    ``func_ir.get_definition``; Numba writes that table through its private
    attribute only (both front ends' Numba IR, :mod:`scan._numba_loops`).
    """
    func_ir._definitions[name] = [value]


def struct_value(proxy: Any) -> Any:
    """The LLVM value of a Numba struct proxy (``context.make_array(ty)(context, builder)``).

    Numba's own lowering passes a populated array on as ``proxy._getvalue()``;
    the method has no public name.
    """
    return proxy._getvalue()
