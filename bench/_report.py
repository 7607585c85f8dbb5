# SPDX-License-Identifier: Apache-2.0
"""Formatting the benchmarks' Markdown reports: numbers and tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def fmt(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, or ``-`` for NaN."""
    return "-" if value != value else f"{value:.{digits}f}"


def md_table(head: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table's lines: the head, the rule, one line a row."""
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out
