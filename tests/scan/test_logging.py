# SPDX-License-Identifier: Apache-2.0
"""Cold builds are logged at INFO (what, for which target, how long), hits at DEBUG;
nothing is printed by default."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scan import _cache, block

pytestmark = pytest.mark.nvrtc

ROOT = Path(__file__).resolve().parents[2]


def test_builds_and_hits_go_to_the_scan_logger(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(tmp_path))
    _cache._reset_default_cache()
    try:
        caplog.set_level(logging.DEBUG, logger="scan")
        block.temp_storage("store", np.int16, 96, 3, algorithm="transpose", cc=(9, 0))
        built = [r for r in caplog.records if r.name == "scan.build" and r.levelno == logging.INFO]
        # the provider's unit, then its temp-storage layout read from it
        assert [m.getMessage().split()[1] for m in built] == ["provider", "layout"]
        for record, kind in zip(built, ("provider", "layout"), strict=True):
            message = record.getMessage()
            assert message.startswith(f"built {kind} statefn_scan_store_")
            assert "(store of int16, 96 threads x 3 items, transpose) for sm_90 in " in message
        caplog.clear()
        _cache._reset_default_cache()  # a new process: the entry comes from disk
        block.temp_storage("store", np.int16, 96, 3, algorithm="transpose", cc=(9, 0))
        hits = [r.getMessage() for r in caplog.records if r.name == "scan.build"]
        assert len(hits) == 1  # the layout alone: the unit is not read again
        assert hits[0].startswith("cache hit: layout statefn_scan_store_")
        assert caplog.records[-1].levelno == logging.DEBUG
    finally:
        _cache._reset_default_cache()


def test_nothing_is_printed_by_default(tmp_path: Path) -> None:
    code = (
        "import numpy as np\n"
        "from scan import block\n"
        "block.temp_storage('load', np.int16, 96, 3, algorithm='transpose', cc=(9, 0))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**_env(), "STATEFN_SCAN_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == ""
    assert out.stderr == ""


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
