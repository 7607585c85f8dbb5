# SPDX-License-Identifier: Apache-2.0
"""Whether block primitives run in the CUDA simulator, and the hand-off to it.

numba chooses the simulator once, from ``NUMBA_ENABLE_CUDASIM``, when it is
first imported; this module reads the same setting. In the simulator the public
functions of :mod:`scan.block` are plain Python calls made by every simulated
thread, and :mod:`scan._sim` reproduces CUB's observable semantics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numba.core import config as _numba_config

__all__ = ["ACTIVE", "call", "call_io"]

#: True when kernels run in numba's CUDA simulator.
ACTIVE: bool = bool(_numba_config.ENABLE_CUDASIM)


def call(function: str, values: Any, out: Any, arguments: Mapping[str, Any]) -> Any:
    """Run a scan entry point in the simulator."""
    from . import _sim

    options = {k: v for k, v in arguments.items() if k not in ("values", "out", "unexpected")}
    options.update(arguments.get("unexpected", {}))
    return _sim.scan_call(function, values, out, options)


def call_io(
    function: str, array: Any, offset: Any, items: Any, arguments: Mapping[str, Any]
) -> None:
    """Run ``load``/``store`` in the simulator."""
    from . import _sim

    skip = ("src", "dst", "offset", "items", "unexpected")
    options = {k: v for k, v in arguments.items() if k not in skip}
    options.update(arguments.get("unexpected", {}))
    _sim.tile_io_call(function, array, offset, items, options)
