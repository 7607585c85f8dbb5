#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# On a machine with an NVIDIA GPU: the numba-cuda-mlir front end's tests and
# benchmark rows, with a summary in $OUT (default: results/).
#
#   tools/gpu_suite_mlir.sh
#
# numba-cuda-mlir comes from .mlir/mlir.tar.xz when present (its wheel unpacked
# and recompressed: the wheel itself is too large to carry; see
# docs/frontends.md), unpacked into /tmp/mlir, else from the environment.
# Wheels in .whl/ (numpy 2.4 for numba-cuda) go to /tmp/site as in gpu_suite.sh.
#
# Steps, one summary line each:
#   tests   tests/gpu/test_mlir_gpu.py (row scans with the launch's block shape,
#           the block-semantics cases compiled by numba-cuda-mlir),
#           tests/gpu/test_mlir_records_gpu.py (the record programs and cases
#           against their NumPy references), tests/gpu/test_mlir_reduce_gpu.py
#           (block reduce against NumPy), tests/gpu/test_mlir_reverse_gpu.py and
#           tests/gpu/test_mlir_warp_gpu.py and tests/gpu/test_mlir_lookback_gpu.py and
#           tests/gpu/test_mlir_neighbours_gpu.py (differences and run heads)
#           (the reverse, warp and cross-block scans' docs programs against
#           NumPy) and the compile suites (on the device)
#   sanitizers  the record, block-reduce, warp-scan and cross-block (the tests
#           marked sanitize) GPU tests under
#           compute-sanitizer memcheck, racecheck, synccheck and initcheck, the
#           four tools at once (sanitizer_mlir_<tool>.log)
#   bench   bench/mlir_rowscan.py: GB/s per shape and configuration, LDL/STL
#           in SASS, warm first launch against a plain numba-cuda-mlir kernel
#
# Knobs: OUT, SKIP_BENCH=1, BENCH_ARGS (e.g. --quick), MLIR_TEST_TIMEOUT (300),
# MLIR_BENCH_TIMEOUT (200), SANITIZE=0 (skip the sanitizers),
# MLIR_SANITIZER_TIMEOUT (300, each tool).

set -uo pipefail
export PYTHONUNBUFFERED=1
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 2
OUT=${OUT:-$REPO/results}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
SUMMARY=$OUT/summary_mlir.txt
: >"$SUMMARY"
say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

PATHS=$REPO
shopt -s nullglob
wheels=(.whl/*.whl)
archives=(.whl/*.tar.xz)
shopt -u nullglob
if [ ${#wheels[@]} -gt 0 ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "${wheels[@]}" && PATHS=/tmp/site:$PATHS
fi
for archive in "${archives[@]}"; do
    # an installed site-packages tree, packed (smaller than its wheel)
    mkdir -p /tmp/site && tar -xJf "$archive" -C /tmp/site && PATHS=/tmp/site:$PATHS
done
if [ -f .mlir/mlir.tar.xz ]; then
    mkdir -p /tmp/mlir && tar -xJf .mlir/mlir.tar.xz -C /tmp/mlir && PATHS=$PATHS:/tmp/mlir
fi
export PYTHONPATH="$PATHS${PYTHONPATH:+:$PYTHONPATH}"
STATEFN_SCAN_CACHE_DIR=$(mktemp -d /tmp/statefn-scan-cache.XXXXXX)
export STATEFN_SCAN_CACHE_DIR

{
    nvidia-smi -L 2>&1
    "$PY" --version
    "$PY" -c 'import numba_cuda_mlir, numpy; print("numba-cuda-mlir", numba_cuda_mlir.__version__, "numpy", numpy.__version__)'
    "$PY" -c 'import numba_cuda; print("numba-cuda", numba_cuda.__version__)' 2>&1 | tail -n 1
} 2>&1 | tee "$OUT/mlir_versions.log"

WARN='ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning'
t0=$(date +%s)
timeout "${MLIR_TEST_TIMEOUT:-300}" "$PY" -m pytest -q -p no:cacheprovider -W "$WARN" \
    tests/gpu/test_mlir_gpu.py tests/gpu/test_mlir_records_gpu.py tests/gpu/test_mlir_reduce_gpu.py \
    tests/gpu/test_mlir_reverse_gpu.py tests/gpu/test_mlir_warp_gpu.py \
    tests/gpu/test_mlir_lookback_gpu.py tests/gpu/test_mlir_half_complex_gpu.py \
    tests/gpu/test_mlir_neighbours_gpu.py \
    tests/scan/test_mlir_compile.py \
    tests/scan/test_mlir_reduce.py tests/scan/test_mlir_reverse.py tests/scan/test_mlir_warp.py \
    tests/scan/test_mlir_lookback.py \
    --junitxml="$OUT/mlir_tests.xml" >"$OUT/mlir_tests.log" 2>&1
rc=$?
line=$(grep -E '[0-9]+ (passed|failed)' "$OUT/mlir_tests.log" | tail -n 1)
say "tests (numba-cuda-mlir): rc=$rc ${line:-no pytest summary} in $(($(date +%s) - t0))s (mlir_tests.log)"
if [ "${SANITIZE:-1}" != 0 ]; then
    if ! command -v compute-sanitizer >/dev/null; then
        say "sanitizers (numba-cuda-mlir): skipped, no compute-sanitizer"
        rc=1
    else
        declare -A pids
        for tool in memcheck racecheck synccheck initcheck; do
            timeout -k 10 "${MLIR_SANITIZER_TIMEOUT:-300}" compute-sanitizer --tool "$tool" \
                --error-exitcode 86 --print-limit 50 \
                "$PY" -m pytest -q -p no:cacheprovider -W "$WARN" \
                tests/gpu/test_mlir_records_gpu.py tests/gpu/test_mlir_reduce_gpu.py \
                tests/gpu/test_mlir_warp_gpu.py tests/gpu/test_mlir_lookback_gpu.py \
                tests/gpu/test_mlir_neighbours_gpu.py \
                >"$OUT/sanitizer_mlir_$tool.log" 2>&1 &
            pids[$tool]=$!
        done
        for tool in memcheck racecheck synccheck initcheck; do
            wait "${pids[$tool]}"
            trc=$?
            report=$(grep -E '(ERROR|RACECHECK|SYNCCHECK|INITCHECK) SUMMARY' \
                "$OUT/sanitizer_mlir_$tool.log" | tail -n 1 | sed 's/^=* *//')
            ran=$(grep -E '[0-9]+ (passed|failed)' "$OUT/sanitizer_mlir_$tool.log" | tail -n 1)
            say "sanitizer $tool (numba-cuda-mlir): rc=$trc ${report:-no summary}; ${ran:-no pytest line}"
            [ "$trc" = 0 ] || rc=1
        done
    fi
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
    t0=$(date +%s)
    timeout "${MLIR_BENCH_TIMEOUT:-200}" "$PY" bench/mlir_rowscan.py --out "$OUT" ${BENCH_ARGS:-} \
        >"$OUT/bench_mlir.log" 2>&1
    brc=$?
    say "bench (numba-cuda-mlir): rc=$brc in $(($(date +%s) - t0))s (bench_mlir.md, bench_mlir.log)"
    [ -f "$OUT/bench_mlir.md" ] && tee -a "$SUMMARY" <"$OUT/bench_mlir.md" >/dev/null
fi
exit "$rc"
