# SPDX-License-Identifier: Apache-2.0
"""docs/errors.md says exactly what the library raises, and misses no message.

- every ``<!-- error-case: ID -->`` block is the exact ``Type: message`` that
  the trigger ``ID`` in error_cases.py raises, and every trigger is documented;
- every ``<!-- error-fragments: FILE [FILE ...] -->`` block's pieces (split
  at ``...``) are string constants of those files;
- every ``raise`` with a literal message in the user-facing modules is on the
  page (its longest literal piece appears there).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from doc_examples import error_cases

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "errors.md").read_text()

_CASE = re.compile(r"<!-- error-case: (\w+) -->\n```text\n(.*?)\n```", re.S)
_FRAGMENTS = re.compile(r"<!-- error-fragments: ([\w/. ]+?) -->\n```text\n(.*?)\n```", re.S)
_DOCUMENTED = dict(_CASE.findall(PAGE))

#: Modules whose raise sites users can reach; each message must be on the page.
CHECKED_MODULES = [
    "scan/_plan.py",
    "scan/_calls.py",
    "scan/_primitives/block_scan/__init__.py",
    "scan/_primitives/block_scan/_plan.py",
    "scan/_primitives/tile_io/__init__.py",
    "scan/_primitives/tile_io/_plan.py",
    "scan/_primitives/block_reduce/__init__.py",
    "scan/_primitives/_neighbours.py",
    "scan/_primitives/adjacent_difference/__init__.py",
    "scan/_primitives/flag_heads/__init__.py",
    "scan/_primitives/warp_scan/__init__.py",
    "scan/_primitives/warp_io/__init__.py",
    "scan/_build.py",
    "scan/block.py",
    "scan/warp.py",
    "scan/_tiles.py",
    "scan/_numba_loops.py",
    "scan/_compile.py",
    "scan/_tile_status.py",
    "scan/_numba_cuda/_launch.py",
    "scan/_numba_cuda/__init__.py",
    "scan/_numba_cuda/_typing.py",
    "scan/_numba_facts.py",
    "scan/_numba_cuda/_lowering.py",
    "scan/_numba_cuda/_linkcache.py",
    "statefn/_arity.py",
    "statefn/_dtypes.py",
    "statefn/_normalize.py",
    "statefn/_descriptors.py",
]
#: Raise sites that are not user-facing (internal invariants), by literal piece.
NOT_USER_FACING = {
    "role must be 'prefix' or 'scan_op'; got ",  # normalize(role=...) is typed as a Literal
    # required positional arguments: the signature binding refuses their absence first
    ": values is required",
    ": items is required",
    " must be an array",
    ": items must be a local array",
    # the build layer's own invariant: front ends always pass their callback compiler
    ": building user callbacks needs a callback compiler",
    # a front end's callback compiler that breaks the pointer ABI's naming (a bug)
    ", not the symbol of statefn.pointer_abi",
    # importing scan always installs a host backend
    "temp_storage: no compute capability given; pass cc=(major, minor)",
}


def test_every_case_is_documented_once():
    blocks = _CASE.findall(PAGE)
    assert len(blocks) == len(_DOCUMENTED), "a case is documented twice"
    triggers = set(error_cases.CASES) | set(error_cases.KERNEL_CASES)
    assert set(_DOCUMENTED) == triggers


@pytest.mark.parametrize("case", sorted(error_cases.CASES))
def test_host_message_is_exact(case):
    assert error_cases.message(case) == _DOCUMENTED[case]


@pytest.mark.parametrize("case", sorted(error_cases.KERNEL_CASES))
def test_kernel_message_is_exact(case):
    assert error_cases.kernel_message(case) == _DOCUMENTED[case]


def _literals(path: Path) -> list[str]:
    """Every string constant in *path*, f-string pieces included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


@pytest.mark.parametrize(("path", "block"), _FRAGMENTS.findall(PAGE))
def test_fragments_are_in_the_source(path, block):
    literals = [lit for one in path.split() for lit in _literals(ROOT / one)]
    for line in block.splitlines():
        text = re.sub(r"^\w+: ", "", line)  # the exception type
        for piece in (p.strip() for p in text.split("...")):
            if len(piece) < 3:
                continue
            assert any(piece in lit for lit in literals), f"{piece!r} not in {path}"


def _raise_messages(path: Path) -> list[str]:
    """The longest literal piece of each ``raise X(<message>, ...)`` in *path*."""
    pieces = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        if not node.exc.args:
            continue
        msg = node.exc.args[0]
        parts = [
            v.value
            for v in (msg.values if isinstance(msg, ast.JoinedStr) else [msg])
            if isinstance(v, ast.Constant) and isinstance(v.value, str)
        ]
        if isinstance(msg, ast.BinOp):  # "..." + "\n".join(...) + f"..."
            parts = [
                n.value
                for n in ast.walk(msg)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
        if parts:
            pieces.append(max(parts, key=len).split("\n")[0])
    return pieces


@pytest.mark.parametrize("path", CHECKED_MODULES)
def test_every_raise_is_on_the_page(path):
    missing = [
        piece
        for piece in _raise_messages(ROOT / path)
        if piece.strip() and piece not in NOT_USER_FACING and piece.strip() not in PAGE
    ]
    assert not missing, f"messages raised in {path} but not in docs/errors.md: {missing}"
