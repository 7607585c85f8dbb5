# SPDX-License-Identifier: Apache-2.0
"""Golden files of generated text that change only when someone confirms the change.

:func:`check_golden` compares generated text with its golden file. When they
differ, the test fails with the unified diff and a confirmation value for
exactly that change (a digest of the file's name, its old and its new text).
Running again with ``STATEFN_SCAN_UPDATE_GOLDEN=<value>`` (several values
separated by commas or spaces) rewrites the files whose change has one of
those values and no other: setting the variable to anything else rewrites
nothing, and a value stops matching once the text changes again. A new
golden file is a change from empty text.

Golden files pin the text; what the text computes is checked by running it
(tests/hostexec).
"""

from __future__ import annotations

import difflib
import hashlib
import os
from pathlib import Path

import pytest

__all__ = ["ENV", "check_golden", "confirmation"]

ENV = "STATEFN_SCAN_UPDATE_GOLDEN"


def confirmation(path: Path, old: str, new: str) -> str:
    """The value that confirms changing `path` from `old` to `new`."""
    h = hashlib.sha256()
    for part in (path.name, old, new):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def check_golden(path: Path, text: str) -> None:
    """Pass when `text` equals `path`'s; rewrite it only with this change's confirmation value."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if text == old:
        return
    value = confirmation(path, old, text)
    if value in os.environ.get(ENV, "").replace(",", " ").split():
        path.write_text(text, encoding="utf-8")
        return
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"{path.name} (golden)",
            f"{path.name} (generated)",
        )
    )
    pytest.fail(
        f"{path} differs from the generated text:\n{diff}\n"
        f"If this change is intended, confirm it: rerun with {ENV}={value} (the values of "
        "several files joined by commas); the golden file is then rewritten with exactly "
        "this text.",
        pytrace=False,
    )
