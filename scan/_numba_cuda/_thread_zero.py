# SPDX-License-Identifier: Apache-2.0
"""The simulator's stand-in for a result defined in thread 0 only.

``block.sum(items, broadcast=False)`` (and ``block.reduce``) returns CUB's
result, which is defined in thread 0; on a GPU the other threads receive
CUB's partial results, numbers of the right type that look like a result.
The simulator gives those threads a value that cannot pass for one: NaN for
floats, and for every other dtype a :class:`NotInThisThread` object, which
refuses every use (arithmetic, comparisons, conversions, truth tests, record
fields) and every store (a NumPy array converting it calls ``__int__`` or
``__float__``) with a :class:`scan.StateContractError` at the kernel's line.
Passing it on, or dropping it, is allowed: only thread 0's value means
anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

__all__ = ["NotInThisThread", "thread_zero_only"]


class NotInThisThread:
    """A reduce's result in a thread other than thread 0 (``broadcast=False``)."""

    __slots__ = ("_dtype", "_function", "_refuse", "_thread")

    def __init__(
        self, function: str, thread: int, dtype: np.dtype[Any], refuse: Callable[[str], Exception]
    ) -> None:
        self._function = function
        self._thread = thread
        self._dtype = dtype
        self._refuse = refuse

    def _used(self, *_: Any, **__: Any) -> NoReturn:
        f = self._function
        raise self._refuse(
            f"{f}: thread {self._thread} uses the result of {f}(..., broadcast=False), which "
            "is defined in thread 0 only (on a GPU the other threads receive CUB's partial "
            f"results, which are not the block's {f}); use it in thread 0 only (if "
            f"cuda.threadIdx.x == 0: ...), or drop broadcast=False: then every thread "
            "receives it"
        )

    def __repr__(self) -> str:
        return f"<{self._function}(..., broadcast=False) result: thread 0 only>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._used()

    __getitem__ = __int__ = __index__ = __float__ = __complex__ = __bool__ = _used
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _used
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _used
    __pow__ = __rpow__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _used
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __divmod__ = _used
    __neg__ = __pos__ = __abs__ = __invert__ = __round__ = __trunc__ = _used
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _used
    __hash__ = None  # type: ignore[assignment]
    __array__ = __format__ = _used


def thread_zero_only(
    function: str, thread: int, dtype: np.dtype[Any], refuse: Callable[[str], Exception]
) -> Any:
    """What thread `thread` receives of a result defined in thread 0 only.

    NaN of the dtype for floats; a :class:`NotInThisThread` for integers and
    records. `refuse(message)` makes the exception raised where it is used.
    """
    if dtype.names is None and dtype.kind == "f":
        return dtype.type(np.nan)
    return NotInThisThread(function, thread, dtype, refuse)
