# SPDX-License-Identifier: Apache-2.0
"""`scan`, `scan.block` and `scan.warp` export exactly what they document, and their
functions' signatures are the call table's."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import scan
from scan import _vocab, block, warp
from scan._calls import host_backend
from scan._primitives import module_calls

ROOT = Path(__file__).resolve().parents[2]
API = (ROOT / "docs" / "api.md").read_text()
STUB = (ROOT / "scan" / "block.pyi").read_text()


@pytest.mark.parametrize("module", [scan, block, warp])
def test_all_resolves_is_public_and_documented(module):
    names = module.__all__
    assert len(set(names)) == len(names)
    for name in names:
        assert not name.startswith("_")
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            assert f"automodule:: {obj.__name__}" in API, name
        else:
            assert obj.__doc__, name
            assert re.search(rf"auto\w+:: {re.escape(module.__name__)}\.{name}\b", API), name


def test_block_functions_take_the_call_tables_signatures():
    for name, entry in module_calls("block").items():
        assert inspect.signature(getattr(block, name)) == entry.signature, name
    for name, entry in module_calls("warp").items():
        assert inspect.signature(getattr(warp, name)) == entry.signature, name


@pytest.mark.parametrize("module", ["block", "warp"])
def test_stub_declares_every_entry_point_and_its_keywords(module):
    stub = (ROOT / "scan" / f"{module}.pyi").read_text()
    for name, entry in module_calls(module).items():
        assert re.search(rf"^def {name}\(", stub, re.M), name
        for param in entry.params:
            assert re.search(rf"\b{param.name}\b", stub), (name, param.name)


def test_stub_literals_match_the_vocabulary():
    literals = {
        text: set(re.findall(r'"(\w+)"', body))
        for text, body in re.findall(r"^(\w+): TypeAlias = Literal\[(.*?)\]", STUB, re.M | re.S)
    }
    found = {frozenset(v) for v in literals.values()}
    assert frozenset(_vocab.SCAN_ALGORITHMS) in found
    assert frozenset(_vocab.IO_ALGORITHMS) in found
    assert frozenset(_vocab.MODES) in found


@pytest.mark.parametrize("typevar", ["StateT", "ValueT"])
def test_stub_value_types_match_the_vocabulary(typevar):
    # the scalar types the stubs accept are the runtime's value dtypes
    body = re.search(rf'^{typevar} = TypeVar\(\n?\s*"{typevar}",(.*?)\)', STUB, re.M | re.S)
    assert body is not None, f"block.pyi declares {typevar}"
    names = set(re.findall(r"np\.(\w+)", body.group(1)))
    assert names == {dt.name for dt in _vocab.VALUE_DTYPES}


@pytest.mark.skipif(host_backend() is None, reason="no front end installed")
def test_host_call_without_the_simulator_says_how_to_turn_it_on():
    from scan._numba_cuda import SIMULATOR

    if SIMULATOR:
        pytest.skip("the simulator's message is tested in tests/sim")
    with pytest.raises(RuntimeError) as info:
        block.load(None, 0, None)
    assert str(info.value) == (
        "scan.block.load() runs inside @cuda.jit kernels only (all threads of a block "
        "call it); to run kernels without a GPU set NUMBA_ENABLE_CUDASIM=1 before importing numba"
    )
