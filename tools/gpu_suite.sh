#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# On a machine with an NVIDIA GPU: run the GPU tests, then every benchmark, and
# leave logs and reports in $OUT (default: results/). The project is used from
# the source tree (PYTHONPATH), not installed.
#
#   tools/gpu_suite.sh
#
# Files written to $OUT:
#   gpu_tests.log   versions + the GPU tests' output (pytest -m 'gpu or sim')
#   bench.log       everything bench/run_all.py printed
#   bench.md        report tables (speed, callback cost, first launch, SASS)
#   bench.csv       every timing with its ratios
#   bench.png       bar chart
#   sass.txt        SASS statistics and the headline kernels' SASS
#   summary.txt     short summary (benchmark lines, then the suite's own line)
#
# Environment knobs:
#   OUT                where to write (default: <repo>/results)
#   GPU_PYTEST_ARGS    extra pytest arguments (e.g. "-k scan")
#   GPU_TEST_TIMEOUT   seconds allowed for the tests (default 240)
#   BENCH_ARGS         extra bench/run_all.py arguments (e.g. "--quick", "--parts cub,triton")
#   SUITE_BUDGET_S     seconds for the whole script (default 570); the benchmark
#                      gets what the tests leave, at most BENCH_BUDGET_S (default 420)
#   SKIP_TESTS=1 / SKIP_BENCH=1
#
# Wheels in .whl/ (e.g. a numpy 2.4.x that numba needs ahead of a newer system
# numpy) are installed into /tmp/site, which goes first on PYTHONPATH.

set -uo pipefail
export PYTHONUNBUFFERED=1

SUITE_START=$(date +%s)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 2
OUT=${OUT:-$REPO/results}
mkdir -p "$OUT"
PY=${PYTHON:-python3}

log() { printf '%s\n' "$*"; }
loud() { printf '!!!!! %s\n' "$*"; }
elapsed() { echo $(($(date +%s) - SUITE_START)); }

# ---------------------------------------------------------------- environment
SITE=/tmp/site
shopt -s nullglob
wheels=(.whl/*.whl)
shopt -u nullglob
if [ ${#wheels[@]} -gt 0 ]; then
    log "== installing ${#wheels[@]} carried wheel(s) into $SITE: ${wheels[*]}"
    if ! "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" "${wheels[@]}"; then
        loud "installing the carried wheels failed; continuing with the system packages"
    fi
    export PYTHONPATH="$SITE:$REPO${PYTHONPATH:+:$PYTHONPATH}"
else
    loud "no wheels in .whl/: numba may fail if the system numpy is newer than it supports"
    export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
fi

if [ -z "${CUDA_HOME:-}" ]; then
    if nvcc_path=$(command -v nvcc); then
        # nvcc may be a wrapper script outside the toolkit: ask it where it lives
        root=$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")
        if [ ! -e "$root/include/cuda_runtime.h" ]; then
            real=$(sed -n 's/^exec \([^ ]*nvcc\) .*/\1/p' "$nvcc_path" 2>/dev/null | head -n 1)
            [ -n "$real" ] && root=$(dirname "$(dirname "$real")")
        fi
        [ -e "$root/include/cuda_runtime.h" ] && export CUDA_HOME="$root"
    fi
    if [ -z "${CUDA_HOME:-}" ] && [ -e /usr/local/cuda/include/cuda_runtime.h ]; then
        export CUDA_HOME=/usr/local/cuda
    fi
fi
if [ -n "${CUDA_HOME:-}" ]; then
    export PATH="$PATH:$CUDA_HOME/bin"
else
    loud "CUDA toolkit not found (no nvcc on PATH, no /usr/local/cuda): the C++ benchmark will fail"
fi

STATEFN_SCAN_CACHE_DIR=$(mktemp -d /tmp/statefn-scan-cache.XXXXXX)
export STATEFN_SCAN_CACHE_DIR

# ---------------------------------------------------------------- versions
versions() {
    log "== versions ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
    nvidia-smi -L 2>&1 || loud "nvidia-smi failed"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
        --format=csv,noheader 2>&1 || true
    "$PY" --version 2>&1
    log "CUDA_HOME=${CUDA_HOME:-unset}"
    log "PYTHONPATH=$PYTHONPATH"
    log "STATEFN_SCAN_CACHE_DIR=$STATEFN_SCAN_CACHE_DIR"
    if command -v nvcc >/dev/null; then nvcc --version | tail -n 2; else loud "no nvcc"; fi
    command -v cuobjdump >/dev/null || loud "no cuobjdump: SASS statistics will be missing"
    "$PY" - <<'PY' 2>&1
import importlib
import importlib.metadata as md

for dist in ("numba", "numba-cuda", "numpy", "cuda-core", "cuda-bindings", "nvidia-cuda-nvrtc",
             "nvidia-nvjitlink", "torch", "triton", "cupy-cuda13x", "matplotlib", "pytest"):
    try:
        print(f"{dist} {md.version(dist)}")
    except md.PackageNotFoundError:
        print(f"{dist} (not installed)")
import numpy
print(f"numpy in use: {numpy.__version__} from {numpy.__file__}")
for mod in ("numba.cuda", "statefn", "scan.block"):
    try:
        importlib.import_module(mod)
        print(f"import {mod}: ok")
    except Exception as exc:  # report and go on: the tests will show the details
        print(f"!!!!! import {mod} failed: {type(exc).__name__}: {exc}")
PY
}

versions 2>&1 | tee "$OUT/gpu_tests.log"

# ---------------------------------------------------------------- tests
SUITE_BUDGET_S=${SUITE_BUDGET_S:-570}
GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-240}
tests_rc=skipped
tests_line="tests skipped"
if [ "${SKIP_TESTS:-0}" != "1" ]; then
    log "== GPU tests (limit ${GPU_TEST_TIMEOUT}s)" | tee -a "$OUT/gpu_tests.log"
    # shellcheck disable=SC2086  # GPU_PYTEST_ARGS is split on purpose
    # The GPU-only tests plus the block-semantics cases the simulator suite
    # runs (SCAN_TESTS_BACKEND=gpu), spread over workers: most of the time is
    # compiling kernels, which the shared disk cache lets workers share.
    workers=()
    if "$PY" -c "import xdist" 2>/dev/null; then workers=(-n "${GPU_TEST_WORKERS:-8}"); fi
    SCAN_TESTS_BACKEND=gpu timeout -k 10 "$GPU_TEST_TIMEOUT" "$PY" -m pytest tests \
        -m "gpu or sim" -q -p no:cacheprovider -p no:benchmark "${workers[@]}" \
        ${GPU_PYTEST_ARGS:-} 2>&1 | tee -a "$OUT/gpu_tests.log"
    tests_rc=${PIPESTATUS[0]}
    tests_line=$(grep -E '(passed|failed|error|no tests ran|skipped)' "$OUT/gpu_tests.log" | tail -n 1)
    case "$tests_rc" in
    0) ;;
    124 | 137) loud "GPU tests stopped after ${GPU_TEST_TIMEOUT}s" ;;
    5) loud "pytest collected no GPU tests" ;;
    *) loud "GPU tests failed (rc=$tests_rc); going on with the benchmark" ;;
    esac
fi

# ---------------------------------------------------------------- benchmark
bench_rc=skipped
if [ "${SKIP_BENCH:-0}" != "1" ]; then
    left=$((SUITE_BUDGET_S - $(elapsed) - 20))
    budget=$((left < ${BENCH_BUDGET_S:-420} ? left : ${BENCH_BUDGET_S:-420}))
    if [ "$budget" -lt 60 ]; then
        loud "only ${left}s left: running the benchmark in --quick mode"
        BENCH_ARGS="${BENCH_ARGS:-} --quick"
        budget=$((left > 30 ? left : 30))
    fi
    log "== benchmark (budget ${budget}s): bench/run_all.py --out $OUT ${BENCH_ARGS:-}"
    # shellcheck disable=SC2086  # BENCH_ARGS is split on purpose
    timeout -k 10 $((budget + 15)) "$PY" bench/run_all.py --out "$OUT" --budget-s "$budget" \
        ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
    bench_rc=${PIPESTATUS[0]}
    [ "$bench_rc" = 0 ] || loud "benchmark reported problems (rc=$bench_rc): see bench.md 'Problems'"
fi

# ---------------------------------------------------------------- summary
line="gpu_suite: tests rc=$tests_rc ($tests_line); bench rc=$bench_rc; $(elapsed)s"
if [ "$bench_rc" = skipped ]; then
    log "$line" | tee "$OUT/summary.txt"
else
    log "$line" | tee -a "$OUT/summary.txt"
fi
rm -rf "$STATEFN_SCAN_CACHE_DIR"
[ "$tests_rc" = 0 ] || [ "$tests_rc" = skipped ] || exit 1
[ "$bench_rc" = 0 ] || [ "$bench_rc" = skipped ] || exit 1
exit 0
