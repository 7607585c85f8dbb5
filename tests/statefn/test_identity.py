# SPDX-License-Identifier: Apache-2.0
"""Keys: stable across processes and hash seeds, sensitive to every input that matters."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import statefn
from statefn import ScanOperator, StatefulFunction, StatelessFunction
from statefn._identity import _KEY_SCHEMA_VERSION, descriptor_key, loaded_globals

ROOT = Path(__file__).resolve().parents[2]


def build(source: str, name: str = "op", **namespace: Any) -> Any:
    """Exec *source* in a fresh module-like namespace and return *name* from it."""
    scope: dict[str, Any] = {"__name__": "keymod", "np": np, **namespace}
    exec(textwrap.dedent(source), scope)
    return scope[name]


def stateful_key(source: str, dtype: Any = np.int64, **namespace: Any) -> str:
    return StatefulFunction(build(source, **namespace), dtype).key


BASE = """
def op(state, agg):
    return state[0] + agg * 3
"""


# -------------------------------------------------------------- across processes

MODULE = """
import numpy as np
from numba import cuda
import statefn

LIMIT = 1.5
TABLE = {"b": 2, "a": 1, "c": (3.25, None, b"x")}
WORDS = frozenset({"alpha", "beta", "gamma", "delta"})

def helper(x):
    return x * 2

@cuda.jit(device=True)
def device_helper(x):
    return x + 7

def make(k):
    def inner(state, agg):
        return state[0] + k
    return inner

@statefn.stateful(np.int64, name="carry")
def carry(state, agg):
    prefix = state[0]
    if agg in {"x", "y", "z"} or agg > LIMIT:
        state[0] = prefix + helper(agg) + TABLE["a"] + device_helper(agg)
    return prefix

KEYS = [
    carry.key,
    statefn.stateful("f4")(make(3)).key,
    statefn.stateless(lambda agg: agg in WORDS).key,
    statefn.scan_op(lambda a, b: max(a, b)).key,
    statefn.normalize("min", role="scan_op").key,
    statefn.normalize(device_helper, role="prefix").key,
]
"""


def test_keys_identical_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    (tmp_path / "keysmod.py").write_text(MODULE)
    outputs = []
    for seed in ("0", "12345"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        }
        out = subprocess.run(
            [sys.executable, "-c", "import keysmod; print(*keysmod.KEYS)"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(out.stdout.split())
    assert outputs[0] == outputs[1]
    assert len(set(outputs[0])) == len(outputs[0]) == 6


# ------------------------------------------------------------ what changes a key


def test_same_source_same_key() -> None:
    assert stateful_key(BASE) == stateful_key(BASE)


def test_line_numbers_and_comments_do_not_matter() -> None:
    moved = "\n\n# a comment\n\n" + BASE
    assert stateful_key(moved) == stateful_key(BASE)


def test_bytecode_change() -> None:
    assert stateful_key(BASE) != stateful_key(BASE.replace("+ agg", "- agg"))


def test_constant_change() -> None:
    assert stateful_key(BASE) != stateful_key(BASE.replace("* 3", "* 4"))
    assert stateful_key(BASE.replace("3", "0.5")) != stateful_key(BASE.replace("3", "0.25"))


def test_nested_code_object_constant_change() -> None:
    src = """
    def op(state, agg):
        f = lambda x: x + {c}
        return f(agg)
    """
    assert stateful_key(src.format(c=1)) != stateful_key(src.format(c=2))


GLOBAL_SRC = """
def op(state, agg):
    return state[0] + agg * K
"""


def test_referenced_global_value_change() -> None:
    assert stateful_key(GLOBAL_SRC, K=2) != stateful_key(GLOBAL_SRC, K=3)
    assert stateful_key(GLOBAL_SRC, K=2) != stateful_key(GLOBAL_SRC, K=2.0)
    assert stateful_key(GLOBAL_SRC, K=np.int32(2)) != stateful_key(GLOBAL_SRC, K=np.int64(2))


def test_unreferenced_global_does_not_matter() -> None:
    assert stateful_key(GLOBAL_SRC, K=2, OTHER=1) == stateful_key(GLOBAL_SRC, K=2, OTHER=2)


def test_global_array_by_value() -> None:
    a = stateful_key(GLOBAL_SRC, K=np.arange(3))
    assert a == stateful_key(GLOBAL_SRC, K=np.arange(3))
    assert a != stateful_key(GLOBAL_SRC, K=np.arange(4))


def test_global_dict_order_does_not_matter() -> None:
    assert stateful_key(GLOBAL_SRC, K={"a": 1, "b": 2}) == stateful_key(
        GLOBAL_SRC, K={"b": 2, "a": 1}
    )


HELPER_SRC = """
def op(state, agg):
    return state[0] + helper(agg)
"""


def test_nested_plain_helper_change() -> None:
    h1 = build("def helper(x):\n    return x + 1\n", "helper")
    h2 = build("def helper(x):\n    return x + 2\n", "helper")
    assert stateful_key(HELPER_SRC, helper=h1) != stateful_key(HELPER_SRC, helper=h2)
    assert stateful_key(HELPER_SRC, helper=h1) == stateful_key(
        HELPER_SRC, helper=build("def helper(x):\n    return x + 1\n", "helper")
    )


def test_nested_helper_global_change_is_seen_through_the_helper() -> None:
    src = "def helper(x):\n    return x + C\n"
    h1 = build(src, "helper", C=1)
    h2 = build(src, "helper", C=2)
    assert stateful_key(HELPER_SRC, helper=h1) != stateful_key(HELPER_SRC, helper=h2)


def test_nested_numba_device_helper_change() -> None:
    from numba import cuda

    d1 = cuda.jit(device=True)(build("def helper(x):\n    return x + 1\n", "helper"))
    d2 = cuda.jit(device=True)(build("def helper(x):\n    return x + 2\n", "helper"))
    d1_again = cuda.jit(device=True)(build("def helper(x):\n    return x + 1\n", "helper"))
    k1 = stateful_key(HELPER_SRC, helper=d1)
    assert k1 != stateful_key(HELPER_SRC, helper=d2)
    assert k1 == stateful_key(HELPER_SRC, helper=d1_again)
    # a dispatcher is not the same thing as calling the plain function
    assert k1 != stateful_key(HELPER_SRC, helper=d1.py_func)


def test_recursive_helpers_terminate() -> None:
    src = """
    def op(state, agg):
        return ping(agg)
    def ping(x):
        return pong(x - 1) if x > 0 else 0
    def pong(x):
        return ping(x)
    """
    assert stateful_key(src) == stateful_key(src)


def test_closure_cell_change() -> None:
    src = """
    def make(k):
        def op(state, agg):
            return state[0] + k
        return op
    """
    make = build(src, "make")
    assert StatefulFunction(make(1), np.int64) != StatefulFunction(make(2), np.int64)
    assert StatefulFunction(make(1), np.int64) == StatefulFunction(make(1), np.int64)


def test_default_change() -> None:
    src = "def op(state, agg, k={k}):\n    return state[0] + k\n"
    assert stateful_key(src.format(k=1)) != stateful_key(src.format(k=2))
    kw = "def op(state, agg, *, k={k}):\n    return state[0] + k\n"
    assert stateful_key(kw.format(k=1)) != stateful_key(kw.format(k=2))


def test_state_dtype_change() -> None:
    assert stateful_key(BASE, np.int64) != stateful_key(BASE, np.int32)


def test_name_is_part_of_the_key() -> None:
    fn = build(BASE)
    assert StatefulFunction(fn, np.int64, "a").key != StatefulFunction(fn, np.int64, "b").key


def test_kind_is_part_of_the_key() -> None:
    fn = build("def op(a, b=0):\n    return a\n")
    one = build("def op(a):\n    return a\n")
    assert StatelessFunction(one).key != StatelessFunction(fn).key
    assert ScanOperator(op=build(BASE)).key != StatefulFunction(build(BASE), np.int64).key


def test_other_objects_are_refused_with_their_name_and_type() -> None:
    class Box:
        def __init__(self, value: int) -> None:
            self.value = value

    # two Boxes could not be told apart: refused instead of sharing a key
    with pytest.raises(statefn.UnkeyableValueError, match=r"global 'K' .*of type .*Box"):
        stateful_key(GLOBAL_SRC, K=Box(1))
    source = "def make(box):\n    def op(state, agg):\n        return box\n    return op\n"
    boxed = StatefulFunction(build(source, name="make")(Box(1)), np.int64)
    with pytest.raises(statefn.UnkeyableValueError, match=r"closure variable 'box'"):
        boxed.key
    with pytest.raises(statefn.UnkeyableValueError, match="object dtype"):
        stateful_key(GLOBAL_SRC, K=np.array([None, 1], dtype=object))


def test_modules_by_name() -> None:
    import math

    src = "def op(state, agg):\n    return M.floor(agg)\n"
    assert stateful_key(src, M=math) != stateful_key(src, M=np)


def test_schema_version_is_mixed_in() -> None:
    assert isinstance(_KEY_SCHEMA_VERSION, int)
    builtin = descriptor_key("scan_op", builtin="+")
    assert builtin == ScanOperator(builtin="+").key
    assert builtin != descriptor_key("scan_op", builtin="*")


def test_key_follows_globals_until_pinned() -> None:
    namespace: dict[str, Any] = {"__name__": "keymod", "CAP": 1000}
    exec("def op(state, agg):\n    return min(state[0] + agg, CAP)\n", namespace)
    f = statefn.stateful(np.int64)(namespace["op"])
    before = f.key
    pinned = f.pinned()
    assert pinned.is_pinned
    assert not f.is_pinned
    assert pinned.pinned() is pinned
    namespace["CAP"] = 200
    # read again, the key describes the value the callback reads now
    assert f.key != before
    # the pinned copy keeps the key of the moment it was made
    assert pinned.key == before
    assert pinned != f
    assert f.with_name("x").is_pinned is False


# ---------------------------------------------------------------- properties

OPERATORS = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]
constants = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)


def generated(op: str, const: float) -> Any:
    return build(f"def op(state, agg):\n    return state[0] {op} ({const!r})\n")


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(OPERATORS), const=constants)
def test_generated_functions_key_deterministically(op: str, const: float) -> None:
    a = StatefulFunction(generated(op, const), np.int64)
    b = StatefulFunction(generated(op, const), np.int64)
    assert a.key == b.key
    assert a == b


@settings(max_examples=60, deadline=None)
@given(
    first=st.tuples(st.sampled_from(OPERATORS), constants),
    second=st.tuples(st.sampled_from(OPERATORS), constants),
)
def test_distinct_generated_functions_get_distinct_keys(
    first: tuple[str, float], second: tuple[str, float]
) -> None:
    assume(repr(first) != repr(second))
    a = StatefulFunction(generated(*first), np.int64)
    b = StatefulFunction(generated(*second), np.int64)
    assert a.key != b.key


@pytest.mark.parametrize("dtype", statefn.STATE_DTYPES, ids=str)
def test_every_state_dtype_gives_its_own_key(dtype: np.dtype[Any]) -> None:
    fn = build(BASE)
    others = {StatefulFunction(fn, other).key for other in statefn.STATE_DTYPES if other != dtype}
    assert StatefulFunction(fn, dtype).key not in others


# ------------------------------------------------- the globals a function loads


class _Unhashable(np.ndarray):  # type: ignore[type-arg]
    """An array that fails the test if anything reads its data or copies it."""

    def _touched(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the key read an array the callback never loads")

    reshape = view = tobytes = copy = __array__ = _touched  # type: ignore[assignment]


def _huge(name: str) -> Any:
    # 400 MB of address space, never touched unless something reads it
    return np.empty(100_000_000, dtype=np.float32).view(_Unhashable)


RECORD_SRC = """
def op(state, agg):
    prefix = state[0]
    state[0].a = prefix.a * agg.a
    state[0].b = agg.a * prefix.b + agg.b
    return (prefix.a, prefix.shape, x.real)
"""


def test_attribute_and_method_names_are_not_globals() -> None:
    pair = np.dtype([("a", np.float32), ("b", np.float32)])
    fn = build(RECORD_SRC, x=1.5)
    plain = StatefulFunction(fn, pair).key
    # globals named like the attributes the callback reads, holding 400 MB arrays
    for name in ("a", "b", "shape", "real"):
        fn.__globals__[name] = _huge(name)
    assert StatefulFunction(fn, pair).key == plain
    fn.__globals__["a"] = 3
    assert StatefulFunction(fn, pair).key == plain
    # x is loaded as a global: its value is part of the key
    fn.__globals__["x"] = 2.5
    assert StatefulFunction(fn, pair).key != plain


def test_loaded_globals_are_load_global_only() -> None:
    fn = build(RECORD_SRC, x=1.5)
    names = {name for name, _ in loaded_globals(fn.__code__)}
    assert names == {"x"}
    nested = build(
        "def op(state, agg):\n"
        "    g = lambda v: v * SCALE\n"
        "    return sum(g(v) for v in (agg, agg)) + cfg.LIMIT\n"
    )
    found = dict(loaded_globals(nested.__code__))
    assert {"SCALE", "sum", "cfg"} <= set(found)
    assert found["cfg"] == ("LIMIT",)


def test_module_attribute_values_are_keyed() -> None:
    import types as pytypes

    cfg = pytypes.ModuleType("cfg")
    cfg.LIMIT = 10  # type: ignore[attr-defined]
    fn = build("def op(state, agg):\n    return min(state[0] + agg, cfg.LIMIT)\n", cfg=cfg)
    before = StatefulFunction(fn, np.int64).key
    cfg.LIMIT = 20  # type: ignore[attr-defined]
    assert StatefulFunction(fn, np.int64).key != before
    cfg.UNUSED = np.zeros(10)  # type: ignore[attr-defined]
    cfg.LIMIT = 10  # type: ignore[attr-defined]
    assert StatefulFunction(fn, np.int64).key == before


def test_global_table_in_place_change_changes_the_key() -> None:
    table = np.arange(1000, dtype=np.int32)
    fn = build("def op(state, agg):\n    return state[0] + TABLE[agg % 1000]\n", TABLE=table)
    before = StatefulFunction(fn, np.int64).key
    table[17] = -1
    assert StatefulFunction(fn, np.int64).key != before
    # the same data, not contiguous, gives the key of its contiguous copy
    strided = np.repeat(table, 2)[::2]
    assert (
        StatefulFunction(
            build("def op(state, agg):\n    return state[0] + TABLE[agg % 1000]\n", TABLE=strided),
            np.int64,
        ).key
        == StatefulFunction(fn, np.int64).key
    )


def test_each_object_is_hashed_once_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from statefn import _identity

    table = np.arange(4096, dtype=np.float64)
    src = """
def helper(v):
    return v + TABLE[1]

def op(state, agg):
    return helper(agg) + TABLE[0] + helper(agg * 2)
"""
    fn = build(src, TABLE=table)
    seen: list[int] = []
    original = _identity._Fingerprinter._array

    def counting(self: Any, arr: Any, where: str) -> bytes:
        seen.append(id(arr))
        return original(self, arr, where)

    monkeypatch.setattr(_identity._Fingerprinter, "_array", counting)
    StatefulFunction(fn, np.int64).key
    assert seen == [id(table)]
