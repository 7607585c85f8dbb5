# SPDX-License-Identifier: Apache-2.0
"""Golden files change only with the confirmation value of the change (tests/helpers/golden.py)."""

from __future__ import annotations

import pytest
from helpers import golden


def test_equal_text_passes(tmp_path):
    path = tmp_path / "unit.cu"
    path.write_text("a\n")
    golden.check_golden(path, "a\n")


def test_a_change_fails_with_its_diff_and_confirmation(tmp_path, monkeypatch):
    path = tmp_path / "unit.cu"
    path.write_text("a\nb\n")
    monkeypatch.setenv(golden.ENV, "1")  # the old blanket switch rewrites nothing
    with pytest.raises(pytest.fail.Exception) as info:
        golden.check_golden(path, "a\nc\n")
    value = golden.confirmation(path, "a\nb\n", "a\nc\n")
    message = str(info.value)
    assert "-b\n+c\n" in message
    assert f"{golden.ENV}={value}" in message
    assert path.read_text() == "a\nb\n"


def test_the_confirmation_rewrites_exactly_that_change(tmp_path, monkeypatch):
    path = tmp_path / "unit.cu"
    path.write_text("a\nb\n")
    value = golden.confirmation(path, "a\nb\n", "a\nc\n")
    monkeypatch.setenv(golden.ENV, f"0123456789ab,{value}")
    with pytest.raises(pytest.fail.Exception):  # another change: not confirmed
        golden.check_golden(path, "a\nd\n")
    assert path.read_text() == "a\nb\n"
    golden.check_golden(path, "a\nc\n")
    assert path.read_text() == "a\nc\n"


def test_a_new_golden_file_needs_a_confirmation_too(tmp_path, monkeypatch):
    path = tmp_path / "new.cu"
    with pytest.raises(pytest.fail.Exception):
        golden.check_golden(path, "x\n")
    assert not path.exists()
    monkeypatch.setenv(golden.ENV, golden.confirmation(path, "", "x\n"))
    golden.check_golden(path, "x\n")
    assert path.read_text() == "x\n"
