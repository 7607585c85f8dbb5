# SPDX-License-Identifier: Apache-2.0
"""Build the wheel, install it into a fresh environment outside the source tree,
and check there what a user gets: both packages import, ``py.typed`` markers,
the C++ templates and the typing stubs are present, every public name
resolves, ``python -m scan --version`` and ``python -m scan doctor`` work from
the installed package, ``scan.compile`` builds and links a kernel for sm_90,
and ``mypy --strict`` accepts a kernel with no
configuration. Source-tree tests alone would hide a file missing from the wheel.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECK = r"""
import importlib, importlib.metadata, importlib.util, pathlib, sys
here = pathlib.Path.cwd().resolve()
import statefn, scan, scan.block
for mod in (statefn, scan):
    path = pathlib.Path(mod.__file__).resolve()
    assert here not in path.parents, f"{mod.__name__} imported from the source tree: {path}"
    assert (path.parent / "py.typed").is_file(), f"{mod.__name__} has no py.typed"
    for name in mod.__all__:
        getattr(mod, name)
for name in scan.block.__all__:
    getattr(scan.block, name)
pkg = pathlib.Path(scan.__file__).parent
for name in ("scan.cuh.in", "tile_io.cuh.in"):
    assert (pkg / "_templates" / name).is_file(), f"template {name} missing"
assert (pkg / "block.pyi").is_file(), "scan/block.pyi missing"
spec = importlib.util.find_spec("numba")
site = pathlib.Path(spec.origin).parent.parent
stubs = site / "numba-stubs"
assert (stubs / "cuda" / "__init__.pyi").is_file(), "numba-stubs/cuda/__init__.pyi missing"
marker = (stubs / "py.typed").read_text().strip()
assert marker == "partial", "numba-stubs/py.typed must say partial"
assert (site / "ml_dtypes-stubs" / "__init__.pyi").is_file(), "ml_dtypes-stubs missing"
assert statefn.__version__ == scan.__version__ == importlib.metadata.version("statefn-scan")
print("wheel contents ok:", sorted(statefn.__all__)[:3], "...", sorted(scan.__all__))
"""


def check_cli(py: Path, work: Path, cache: Path) -> None:
    """``python -m scan --version`` and ``doctor`` run from the installed wheel."""
    env = {**os.environ, "STATEFN_SCAN_CACHE_DIR": str(cache)}
    version = subprocess.run(
        [py, "-m", "scan", "--version"], cwd=work, env=env, capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("statefn-scan "), version.stdout
    doctor = subprocess.run(
        [py, "-m", "scan", "doctor"], cwd=work, env=env, capture_output=True, text=True
    )
    print(doctor.stdout, end="")
    assert doctor.returncode == 0, f"doctor failed:\n{doctor.stdout}{doctor.stderr}"
    assert doctor.stdout.endswith("everything scan.block needs is installed\n")
    package_line = doctor.stdout.splitlines()[0]
    assert str(ROOT) not in package_line, f"doctor reports the source tree: {package_line}"


COMPILE = r"""
import numpy as np
from numba import cuda
import scan, statefn
from scan import block

@statefn.stateful(np.int64)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix

@cuda.jit
def row_cumsum(src, dst):
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    items = cuda.local.array(4, np.int32)
    for base in range(0, src.shape[1], 128 * 4):
        block.load(src[cuda.blockIdx.x], base, items, oob_default=0)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
        block.store(dst[cuda.blockIdx.x], base, items)

cubin = scan.compile(row_cumsum, "void(int32[:, ::1], int32[:, ::1])", cc=(9, 0), block=128)
assert cubin[:4] == b"\x7fELF" and b"row_cumsum" in cubin
print(f"scan.compile from the wheel: a {len(cubin)}-byte cubin for sm_90")
"""


def check_compile(py: Path, work: Path, cache: Path) -> None:
    """``scan.compile`` builds and links a kernel for sm_90 from the installed wheel."""
    env = {**os.environ, "STATEFN_SCAN_CACHE_DIR": str(cache), "NUMBA_ENABLE_CUDASIM": "0"}
    subprocess.run([py, "-c", COMPILE], check=True, cwd=work, env=env)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="wheel-check-") as tmp:
        dist = Path(tmp) / "dist"
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wheels = sorted(dist.glob("*.whl"))
        assert len(wheels) == 1, wheels
        env = Path(tmp) / "env"
        venv.create(env, with_pip=True)
        py = env / "bin" / "python"
        subprocess.run([py, "-m", "pip", "install", "-q", str(wheels[0])], check=True)
        work = Path(tmp) / "elsewhere"
        work.mkdir()
        subprocess.run([py, "-c", CHECK], check=True, cwd=work)
        check_cli(py, work, Path(tmp) / "cache")
        check_compile(py, work, Path(tmp) / "cache")
        # Installing the project is enough for mypy: a realistic kernel passes
        # --strict with no configuration, using the installed numba-stubs.
        subprocess.run([py, "-m", "pip", "install", "-q", "mypy"], check=True)
        kernel = work / "row_cumsum.py"
        kernel.write_text(
            (ROOT / "tests" / "typing" / "pass" / "row_cumsum.py").read_text(encoding="utf-8")
        )
        subprocess.run(
            [py, "-m", "mypy", "--strict", "--no-incremental", kernel.name], check=True, cwd=work
        )
        print(f"installed {wheels[0].name} into a fresh environment and checked it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
