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
from statefn._identity import _KEY_SCHEMA_VERSION, descriptor_key

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


def test_other_objects_are_known_by_type_only() -> None:
    class Box:
        def __init__(self, value: int) -> None:
            self.value = value

    # documented limit: instances of one class are not told apart
    assert stateful_key(GLOBAL_SRC, K=Box(1)) == stateful_key(GLOBAL_SRC, K=Box(2))


def test_modules_by_name() -> None:
    import math

    src = "def op(state, agg):\n    return M.floor(agg)\n"
    assert stateful_key(src, M=math) != stateful_key(src, M=np)


def test_schema_version_is_mixed_in() -> None:
    assert isinstance(_KEY_SCHEMA_VERSION, int)
    builtin = descriptor_key("scan_op", builtin="+")
    assert builtin == ScanOperator(builtin="+").key
    assert builtin != descriptor_key("scan_op", builtin="*")


def test_key_is_cached() -> None:
    f = statefn.stateful(np.int64)(build(BASE))
    assert f.key is f.key


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
