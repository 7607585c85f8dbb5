# SPDX-License-Identifier: Apache-2.0
"""block.tile_size on a device: the quickstart's kernel stepped by it, at several block shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from doc_examples.examples.quickstart import row_cumsum
from numba import cuda

from scan import block

pytestmark = pytest.mark.gpu


@cuda.jit
def sizes(out: Any) -> None:
    items = cuda.local.array(6, np.float32)
    out[0] = block.tile_size(items)
    out[1] = block.tile_size(3)


@pytest.mark.parametrize("threads", [64, 128, 256])
def test_row_scan_stepped_by_tile_size(threads: int) -> None:
    rng = np.random.default_rng(threads)
    host = rng.integers(-3, 4, size=(3, 5000), dtype=np.int32)
    d_dst = cuda.device_array_like(host)
    row_cumsum[host.shape[0], threads](cuda.to_device(host), d_dst)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.cumsum(host, axis=1, dtype=np.int32))


def test_tile_size_values() -> None:
    out = cuda.to_device(np.zeros(2, np.int64))
    sizes[1, (16, 2)](out)
    assert list(out.copy_to_host()) == [192, 96]
