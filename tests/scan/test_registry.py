# SPDX-License-Identifier: Apache-2.0
"""The registry knows a call by its module and name: modules may share function names."""

from __future__ import annotations

import inspect

import pytest

import scan
from scan import block, warp
from scan._calls import CALLS, kernel_only, public_functions
from scan._primitives import PRIMITIVES, for_call, module_calls
from scan._spec import EntryPoint, Param


def test_block_functions_are_keyed_by_their_name() -> None:
    entries = module_calls("block")
    assert set(entries) == {
        e.name for spec in PRIMITIVES for e in spec.calls if e.module == "block"
    }
    for name, entry in entries.items():
        assert entry.key == name
        assert CALLS[name] is entry
        assert entry.qualified_name == f"scan.block.{name}"


def test_warp_functions_share_the_block_scans_names_under_keys_of_their_own() -> None:
    entries = module_calls("warp")
    scans = {"scan", "inclusive_sum", "exclusive_sum", "inclusive_scan", "exclusive_scan"}
    assert set(entries) == scans | {"load", "store"}
    assert set(warp.__all__) == set(entries) | {"tile_size", "tiles"}  # and its tile-loop helpers
    for name, entry in entries.items():
        assert entry.key == f"warp.{name}"
        assert CALLS[f"warp.{name}"] is entry
        assert CALLS[name] is not entry  # scan.block's function of that name (all have one)
        assert entry.qualified_name == f"scan.warp.{name}"


def test_the_public_functions_are_the_modules_own() -> None:
    functions = public_functions()
    assert set(functions) == set(CALLS)
    modules = {"block": block, "warp": warp}
    for key, function in functions.items():
        entry = CALLS[key]
        assert function is getattr(modules[entry.module], entry.name)
        assert function.__module__ == f"scan.{entry.module}"
        assert inspect.signature(function) == entry.signature
        assert function.__doc__ == for_call(key).docs[entry.name]


def test_another_modules_call_of_the_same_name_has_a_key_of_its_own() -> None:
    entry = EntryPoint(name="inclusive_sum", kind="scan", params=(Param("values", "operand"),))
    assert entry.key == "inclusive_sum"
    other = EntryPoint(
        name="inclusive_sum",
        kind="scan",
        params=(Param("values", "operand"),),
        module="warp",  # type: ignore[arg-type]
    )
    assert other.key == "warp.inclusive_sum"
    assert other.qualified_name == "scan.warp.inclusive_sum"
    assert entry != other


def test_host_calls_name_their_module() -> None:
    with pytest.raises(RuntimeError, match=r"^scan\.block\.inclusive_sum\(\) runs inside"):
        raise kernel_only("inclusive_sum")
    with pytest.raises(RuntimeError, match=r"^scan\.warp\.inclusive_sum\(\) runs inside"):
        raise kernel_only("warp.inclusive_sum")
    assert scan.block.inclusive_sum.__name__ == "inclusive_sum"
