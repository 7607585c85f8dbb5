# SPDX-License-Identifier: Apache-2.0
"""Shared test configuration.

Markers: ``gpu`` (needs a CUDA device: skipped elsewhere), ``nvrtc`` (compiles
CUB with NVRTC: slow), ``sim`` (block semantics: run under
``NUMBA_ENABLE_CUDASIM=1`` in their own pytest process, see tools/check.py, and
on a GPU with ``SCAN_TESTS_BACKEND=gpu``), ``sim_only`` (the simulator's own
behaviour), ``fuzz`` (the differential fuzzer; its seed is in the header),
``sanitize`` (GPU tests run under compute-sanitizer). Compiles without a GPU
always name the target explicitly: :data:`CC`.

Property tests (hypothesis) draw the same examples on every run: the ``scan``
profile derandomises them and keeps no example database, so CI is
reproducible. ``SCAN_HYPOTHESIS_SEED=<int>`` draws other examples, seeded by
that number (tools/gpu_suite.sh passes its fuzzer seed; run again with the
same value to repeat); ``--hypothesis-seed`` given to pytest takes precedence.
The fuzzer's tests carry their own ``@seed`` (``SCAN_FUZZ_SEED``).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

#: The compute capability CPU-side compile tests target (the H200's).
CC = (9, 0)

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
#: Set on a GPU machine to run the shared block-semantics tests (marked ``sim``)
#: on the device instead of in the simulator.
GPU_BACKEND = os.environ.get("SCAN_TESTS_BACKEND") == "gpu"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Derandomised property tests, or seeded by ``--hypothesis-seed``/``SCAN_HYPOTHESIS_SEED``.

    Runs before hypothesis's pytest plugin reads the option, and before any
    test module is imported, so the profiles and ``@settings`` the tests
    declare later inherit the choice. A profile a conftest collected earlier
    has loaded (tests/sim/conftest.py's, when pytest is pointed at that
    folder) gets it too: it is re-registered with it, which hypothesis applies
    at once. (Not at import: test modules import this file again as
    ``conftest``.)
    """
    seed = config.getoption("hypothesis_seed", None) or os.environ.get("SCAN_HYPOTHESIS_SEED")
    if seed:
        config.option.hypothesis_seed = seed
    current = settings.get_current_profile_name()
    name = "scan" if current == "default" else current
    parent = settings.get_profile(current)
    settings.register_profile(name, parent, derandomize=not seed, database=None)
    settings.load_profile(name)


def _has_gpu() -> bool:
    if SIMULATOR:
        return False
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    from numba import cuda

    return bool(cuda.is_available())


def pytest_report_header(config: pytest.Config) -> list[str]:
    seed = config.getoption("hypothesis_seed", None)
    properties = "property tests: " + (
        f"seed {seed}" if seed is not None else "derandomised (SCAN_HYPOTHESIS_SEED picks a seed)"
    )
    try:
        from hostexec.toolchain import find_compiler, missing_reason

        compiler = find_compiler()
        host = (
            f"host execution: {compiler.path} ({compiler.version})"
            if compiler is not None
            else f"host execution: skipped: {missing_reason()}"
        )
    except Exception as exc:  # the tests that import it will report it properly
        host = f"host execution: unavailable ({type(exc).__name__}: {exc})"
    try:
        from cases import fuzz
    except Exception as exc:  # the tests that import it will report it properly
        return [f"scan fuzz: settings unavailable ({type(exc).__name__}: {exc})", properties, host]
    return [fuzz.describe(), properties, host]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    have_gpu = None
    for item in items:
        if "gpu" in item.keywords:
            if have_gpu is None:
                have_gpu = _has_gpu()
            if not have_gpu:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA device"))
        if "sim" in item.keywords and not (SIMULATOR or GPU_BACKEND):
            item.add_marker(
                pytest.mark.skip(reason="simulator tests run with NUMBA_ENABLE_CUDASIM=1")
            )
        if "sim_only" in item.keywords and not SIMULATOR:
            item.add_marker(pytest.mark.skip(reason="checks the simulator's own behaviour"))


#: The simulator's state-contract checks (scan._numba_cuda._sim.CONTRACT_ENV).
CONTRACT_ENV = "STATEFN_SCAN_SIM_CONTRACT"


@pytest.fixture(autouse=True)
def _state_contract(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator checks the state contract, except in tests that break it on purpose.

    The differential fuzzer draws per-thread initial states (``uniform=False``)
    to compare each lane's own state with the GPU's; tests marked
    ``breaks_state_contract`` do the same.
    """
    path = request.node.path.parts
    if "fuzz" in path or request.node.get_closest_marker("breaks_state_contract"):
        monkeypatch.setenv(CONTRACT_ENV, "off")
