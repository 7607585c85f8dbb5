# SPDX-License-Identifier: Apache-2.0
"""Host execution tests: the session's harness builder, or a skip naming why there is none."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from hostexec.toolchain import Builder, find_compiler, missing_reason


@pytest.fixture(scope="session")
def builder() -> Iterator[Builder]:
    """Builds harnesses with the host compiler (cached by content in the session)."""
    compiler = find_compiler()
    if compiler is None:
        pytest.skip(f"host execution of the generated code: {missing_reason()}")
    built = Builder.create(compiler)
    yield built
    built.close()


if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
    # the simulator's process runs only the three-way comparisons
    collect_ignore = [
        "test_hostexec_coverage.py",
        "test_hostexec_families.py",
        "test_hostexec_runtime.py",
        "test_hostexec_scan.py",
    ]
