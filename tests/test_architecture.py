# SPDX-License-Identifier: Apache-2.0
"""The import graph of the two packages: one-way layers, no cycles, a Numba-free core.

The graph is read from the source (every ``import`` statement, including the
ones inside functions), so a lazy import cannot hide an arrow. Run this module
as a script to print the graph.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("statefn", "scan")

#: The layers, lowest first. A module imports only modules of lower layers
#: (plus the standard library and third-party packages).
LAYERS: list[tuple[str, ...]] = [
    ("statefn._errors",),
    ("statefn._dtypes", "statefn._arity"),
    ("statefn._identity",),
    ("statefn._descriptors",),
    ("statefn._normalize",),
    ("statefn._abi",),
    ("statefn",),
    ("scan._primitives._stubs_common",),
    (
        "scan._primitives.block_scan._stubs",
        "scan._primitives.tile_io._stubs",
        "scan._primitives.block_reduce._stubs",
        "scan._primitives.adjacent_difference._stubs",
        "scan._primitives.flag_heads._stubs",
    ),
    ("scan._errors", "scan._shape_table", "scan._lookback"),
    ("scan._vocab", "scan._target", "scan._spec", "scan._shapes"),
    ("scan._plan", "scan._toolchain"),
    ("scan._primitives.block_scan._plan", "scan._primitives.tile_io._plan"),
    ("scan._codegen", "scan._keys", "scan._pch", "scan._primitives._sim_common"),
    (
        "scan._primitives.tile_io._unit",
        "scan._primitives.block_scan._unit",
        "scan._primitives.tile_io._sim",
        "scan._primitives.block_scan._sim",
    ),
    (
        "scan._primitives.block_scan",
        "scan._primitives._neighbours",
        "scan._primitives.warp_scan._sim",
        "scan._primitives.warp_io._sim",
    ),
    (
        "scan._primitives.tile_io",
        "scan._primitives.block_reduce",
        "scan._primitives.warp_scan",
        "scan._primitives.adjacent_difference",
        "scan._primitives.flag_heads",
    ),
    ("scan._primitives.warp_io",),
    ("scan._primitives",),
    ("scan._tiles",),
    ("scan._calls",),
    ("scan._cache",),
    ("scan._compile",),
    ("scan._build",),
    ("scan.block", "scan.warp", "scan._numba_facts", "scan._tile_status"),
    ("scan._frontend", "scan._operands"),
    ("scan._numba_cuda._compat",),
    ("scan._numba_loops",),
    (
        "scan._numba_cuda._unfilled",
        "scan._numba_cuda._strides",
        "scan._numba_cuda._thread_zero",
        "scan._numba_cuda._tile_order",
        "scan._numba_cuda._callbacks",
    ),
    ("scan._numba_cuda._linkcache", "scan._numba_cuda._sim"),
    ("scan._numba_cuda._typing",),
    ("scan._numba_cuda._lowering", "scan._numba_cuda._kernel", "scan._numba_cuda._launch"),
    ("scan._numba_cuda",),
    ("scan._numba_cuda_mlir._target",),
    ("scan._numba_cuda_mlir._typing", "scan._numba_cuda_mlir._callbacks"),
    ("scan._numba_cuda_mlir._lowering",),
    ("scan._numba_cuda_mlir._kernel",),
    ("scan._numba_cuda_mlir",),
    ("scan",),
    ("scan._cli", "scan.demo", "scan._stubgen"),
    ("scan.__main__",),
]
RANK = {module: i for i, layer in enumerate(LAYERS) for module in layer}

#: The front ends: the only modules that may import numba, numba_cuda, numba_cuda_mlir or
#: llvmlite (``scan._numba_cuda`` and ``scan._numba_cuda_mlir`` side by side). They
#: compile callbacks; statefn only describes them (descriptors, keys, the pointer ABI).
FRONT_END = {m for m in RANK if m.startswith("scan._numba_cuda")} | {"scan.demo"}
NUMBA = ("numba", "numba_cuda", "numba_cuda_mlir", "llvmlite")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> Iterator[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import in `module`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    yield f"{base}.{alias.name}", None
                else:
                    yield base, alias.name


def _project(target: str) -> str | None:
    """The project module `target` names (itself or its closest project ancestor)."""
    while target:
        if target in MODULES:
            return target
        target = target.rpartition(".")[0]
    return None


def edges() -> set[tuple[str, str]]:
    """Every (importer, imported) pair between project modules."""
    found = set()
    for module, path in MODULES.items():
        for target, _ in _imports(module, path):
            dest = _project(target)
            if dest is not None and dest != module and not module.startswith(dest + "."):
                found.add((module, dest))
    return found


def test_every_module_has_a_layer():
    assert set(MODULES) == set(RANK)


def test_no_cycles():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for src, dst in edges():
        graph[src].add(dst)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_no_upward_arrow():
    upward = sorted((s, d) for s, d in edges() if RANK[d] >= RANK[s])
    assert not upward, f"imports that do not go down the layers: {upward}"


def test_core_imports_no_numba():
    for module, path in MODULES.items():
        if module in FRONT_END:
            continue
        for target, _ in _imports(module, path):
            assert target.split(".")[0] not in NUMBA, (
                f"{module} imports {target}: only the front end may import Numba"
            )


def test_statefn_imports_no_numba():
    """statefn is pure: no module of it imports Numba, not even lazily inside a function.

    Compiling callbacks belongs to the front ends (``scan._numba_cuda._callbacks``,
    ``scan._numba_cuda_mlir._callbacks``).
    """
    statefn_modules = [m for m in MODULES if m.split(".")[0] == "statefn"]
    assert statefn_modules
    assert not FRONT_END & set(statefn_modules)
    for module in statefn_modules:
        for target, _ in _imports(module, MODULES[module]):
            assert target.split(".")[0] not in NUMBA, f"{module} imports {target}"


def test_only_the_front_ends_read_numbas_private_state():
    """The build layer and the core see no Numba internals.

    Which kernel a typed call belongs to comes from the typing context's call
    stack; the front ends' shared core reads it (``scan._numba_facts.typing_root``)
    and hands the build layer an opaque object.
    """
    allowed = FRONT_END | {"scan._numba_facts"}
    for module, path in MODULES.items():
        if module in allowed:
            continue
        text = path.read_text()
        for attribute in ("callstack", "._stack", "active_code_library", "typing_context"):
            assert attribute not in text, f"{module} reads Numba's {attribute}"


#: The simulator's modules: they may read frames (to name the user's line, to
#: follow unfilled items through kernel code).
SIMULATOR = ("scan._numba_cuda._sim", "scan._numba_cuda._unfilled")
#: Where frames are read outside the simulator: the one numba-cuda compat module
#: (``cuda.compile`` has no public hook), and the cache's warnings (their stack level).
FRAME_READERS = ("scan._numba_cuda._compat", "scan._cache")


def test_no_frame_walking_outside_the_simulator():
    for module, path in MODULES.items():
        if module in SIMULATOR or module in FRAME_READERS:
            continue
        text = path.read_text()
        for word in ("_getframe", "f_back", "currentframe", "inspect.stack"):
            assert word not in text, f"{module} reads Python frames ({word})"


def test_the_simulator_modules_serve_the_simulator_only():
    importers = {s for s, d in edges() if d in SIMULATOR}
    assert importers <= {"scan._numba_cuda", *SIMULATOR}, importers


def test_private_numba_cuda_state_is_read_in_the_compat_module():
    """Private attributes of numba-cuda objects named in ``scan._numba_cuda._compat`` only."""
    for module, path in MODULES.items():
        if module == "scan._numba_cuda._compat":
            continue
        text = path.read_text()
        for attribute in (
            "._can_compile",
            "._codelibrary",
            "callstack._stack",
            "._nvvm_options",
            "._definitions",
            "._getvalue(",
        ):
            assert attribute not in text, f"{module} reads numba-cuda's {attribute}"


def test_packages_meet_through_facades():
    """One package uses the other only through its facade: no private module, no friends."""
    for module, path in MODULES.items():
        for target, _ in _imports(module, path):
            dest = _project(target)
            if dest is None or dest.split(".")[0] == module.split(".")[0]:
                continue
            assert not dest.rpartition(".")[2].startswith("_"), f"{module} imports private {dest}"


def test_no_private_names_across_modules():
    for module, path in MODULES.items():
        for target, name in _imports(module, path):
            if name is None or _project(target) is None or name == "__version__":
                continue
            assert not name.startswith("_"), f"{module} imports private {target}.{name}"


def test_imported_names_are_exported():
    """What one module takes from another is in that module's ``__all__``."""
    for module, path in MODULES.items():
        for target, name in _imports(module, path):
            dest = _project(target)
            if name is None or dest != target or name == "__version__":
                continue
            exported = _all_of(MODULES[dest])
            assert name in exported, f"{module} imports {dest}.{name}, missing from its __all__"


def _all_of(path: Path) -> set[str]:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


if __name__ == "__main__":
    for layer in reversed(LAYERS):
        print("  ".join(layer))
        for module in layer:
            below = sorted(d for s, d in edges() if s == module)
            if below:
                print(f"    {module} -> {', '.join(below)}")
    sys.exit(0)


#: The primitive families' folders (``scan/_primitives/<family>/``): each
#: family's plan class, planner, calls and simulation live in its own.
FAMILY_PACKAGES = (
    "scan._primitives.block_scan",
    "scan._primitives.tile_io",
    "scan._primitives.block_reduce",
    "scan._primitives.warp_scan",
    "scan._primitives.warp_io",
    "scan._primitives.adjacent_difference",
    "scan._primitives.flag_heads",
)


def _in_family(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FAMILY_PACKAGES)


#: Every module of scan outside the family folders handles every primitive
#: family alike, through its spec (scan._primitives): none of them names a
#: family's plan class or entry points. The shared planner (scan._plan) holds
#: what several families use; each family's plan class and planner live in its
#: own folder.
FAMILY_NEUTRAL = tuple(m for m in MODULES if m.split(".")[0] == "scan" and not _in_family(m))
PLAN_CLASSES = (
    "ScanPlan",
    "TileIOPlan",
    "ReducePlan",
    "AdjacentDifferencePlan",
    "FlagHeadsPlan",
    "WarpScanPlan",
    "WarpIOPlan",
)


def test_every_family_folder_is_listed():
    folders = {
        f"scan._primitives.{path.name}"
        for path in (ROOT / "scan" / "_primitives").iterdir()
        if (path / "__init__.py").is_file()
    }
    assert folders == set(FAMILY_PACKAGES)
    # the shared layers, the registry and both kernel-side modules are covered
    assert {"scan._primitives", "scan._spec", "scan.block", "scan.warp"} <= set(FAMILY_NEUTRAL)


def test_family_neutral_layers_look_plans_up_in_the_registry():
    """Adding a family touches its own spec module, not the planner, build layer or lowerings."""
    for module in FAMILY_NEUTRAL:
        text = MODULES[module].read_text()
        for name in PLAN_CLASSES:
            assert name not in text, f"{module} names {name}: look the plan's spec up instead"
        for name in ("IO_CALLS", "SCAN_CALLS", '"load"', '"inclusive_sum"', '"reduce"'):
            assert name not in text, f"{module} switches on a family's calls ({name})"
