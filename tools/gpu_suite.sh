#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# On a machine with an NVIDIA GPU: run the GPU tests, the differential fuzzer,
# the sanitizer runs, then every benchmark, and leave logs and reports in $OUT
# (default: results/). The project is used from the source tree (PYTHONPATH),
# not installed.
#
#   tools/gpu_suite.sh                 # everything
#   SKIP_BENCH=1 tools/gpu_suite.sh    # tests, fuzzer and sanitizers (about 5 minutes)
#   SKIP_TESTS=1 FUZZ=0 SANITIZE=0 BENCH_ARGS="--parts reduce" tools/gpu_suite.sh
#                                      # one benchmark part alone (parts: bench/run_all.py,
#                                      # e.g. "--parts warp": per-warp scans vs CUB WarpScan,
#                                      # "--parts lookback": look-back scans vs CUB DeviceScan)
#
# Steps, each with one summary line (in summary.txt too):
#   tests       pytest -m '(gpu or sim) and not fuzz' (the GPU tests and the
#               simulator's block-semantics tests, run on the device)
#   fuzz        tests/fuzz on the GPU in FUZZ_SHARDS processes at once, each
#               drawing FUZZ_EXAMPLES cases with its own seed; every case must be
#               refused as docs/errors.md says or equal NumPy bit for bit
#   sanitizers  the tests marked 'sanitize' under compute-sanitizer memcheck,
#               racecheck, synccheck and initcheck, the four tools at once
#   replay      at the same time, the fuzz cases that ran on the GPU replayed in
#               the simulator (its outputs must equal the GPU's byte for byte)
#
# Files written to $OUT:
#   gpu_tests.log   versions + the GPU tests' output
#   fuzz/           shard-<i>.log, shard-<i>.jsonl (one line per case: the case,
#                   its outcome, a digest of its outputs), failures.txt (failing
#                   cases, the last of each shard the smallest; add them to
#                   REGRESSIONS in tests/fuzz/test_fuzz.py), replay-<i>.log
#   sanitizer_<tool>.log   compute-sanitizer's report and the tests' output
#   bench.log       everything bench/run_all.py printed
#   bench.md        report tables (speed, block reduce vs CUB, reverse scans vs CUB and
#                   Triton, per-warp scans vs CUB, look-back scans vs CUB DeviceScan,
#                   callback cost, first launch, SASS)
#   bench.csv       every timing with its ratios
#   bench.png       bar chart
#   sass.txt        SASS statistics and the headline kernels' SASS
#   summary.txt     short summary (benchmark lines, then the suite's own line)
#
# Environment knobs:
#   OUT                where to write (default: <repo>/results)
#   GPU_PYTEST_ARGS    extra pytest arguments (e.g. "-k scan")
#   GPU_TEST_TIMEOUT   seconds allowed for the tests (default 300)
#   GPU_TEST_WORKERS   pytest-xdist workers when xdist is installed (default 8); without
#                      it the property tests run in a second process beside the rest
#   FUZZ=0             skip the fuzzer (and the replay)
#   FUZZ_SEED          base seed (default: the current time; printed, reuse it to repeat a run)
#   SCAN_HYPOTHESIS_SEED  the property tests' seed (default: FUZZ_SEED; CI runs them
#                      derandomised instead: tests/conftest.py)
#   FUZZ_SHARDS        fuzzer processes (default 12)
#   FUZZ_EXAMPLES      cases drawn per process (default 55: about 560 run on the GPU,
#                      the rest refused); FUZZ_MIN_CASES (default 500) warns below it
#   FUZZ_TIMEOUT       seconds for the fuzzer (default 240)
#   FUZZ_REPLAY        GPU cases replayed in the simulator (default all), in
#                      FUZZ_REPLAY_PROCS processes (default 6)
#   SANITIZE=0         skip the sanitizer runs
#   SANITIZER_TOOLS    default "memcheck racecheck synccheck initcheck"
#   SANITIZER_TIMEOUT  seconds for each tool (default 240; the four run at once)
#   SANITIZER_PYTEST_ARGS  extra pytest arguments for the sanitized tests
#   BENCH_ARGS         extra bench/run_all.py arguments (e.g. "--quick", "--parts cub,triton")
#   SUITE_BUDGET_S     seconds for the whole script (default 570); the benchmark
#                      gets what the tests leave, at most BENCH_BUDGET_S (default 420)
#   SKIP_TESTS=1       skip the pytest step (the fuzzer and the sanitizers have
#                      their own switches, FUZZ=0 and SANITIZE=0)
#   SKIP_BENCH=1       skip the benchmark
#   PACK_LOGS=1        at the end, move the per-step logs and folders (gpu_tests.log,
#                      sanitizer_*.log, fuzz/, sass.txt, bench.png) into logs.tar.gz,
#                      leaving the summaries and the benchmark's report beside it
#
# Wheels in .whl/ (e.g. a numpy 2.4.x that numba needs ahead of a newer system
# numpy) are installed into /tmp/site, which goes first on PYTHONPATH; .tar.xz
# archives there (an installed site-packages tree) are unpacked into it.

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
archives=(.whl/*.tar.xz)
shopt -u nullglob
if [ ${#wheels[@]} -gt 0 ] || [ ${#archives[@]} -gt 0 ]; then
    mkdir -p "$SITE"
    if [ ${#wheels[@]} -gt 0 ]; then
        log "== installing ${#wheels[@]} carried wheel(s) into $SITE: ${wheels[*]}"
        if ! "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$SITE" "${wheels[@]}"; then
            loud "installing the carried wheels failed; continuing with the system packages"
        fi
    fi
    for archive in "${archives[@]}"; do
        # an installed site-packages tree, packed (smaller than its wheels)
        log "== unpacking $archive into $SITE"
        tar -xJf "$archive" -C "$SITE" || loud "unpacking $archive failed"
    done
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
    if command -v compute-sanitizer >/dev/null; then
        compute-sanitizer --version | tail -n 1
    else
        loud "no compute-sanitizer: the sanitizer runs will be skipped"
    fi
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
GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-300}
PYTEST=("$PY" -m pytest -q -p no:cacheprovider -p no:benchmark)
PROPERTIES="tests/sim/test_sim_properties.py"
# the property tests draw other examples each run, seeded as the fuzzer is
FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
export SCAN_HYPOTHESIS_SEED=${SCAN_HYPOTHESIS_SEED:-$FUZZ_SEED}
tests_rc=skipped
tests_line="tests skipped"
if [ "${SKIP_TESTS:-0}" != "1" ]; then
    log "== GPU tests (limit ${GPU_TEST_TIMEOUT}s; property tests: repeat with" \
        "SCAN_HYPOTHESIS_SEED=$SCAN_HYPOTHESIS_SEED)" | tee -a "$OUT/gpu_tests.log"
    # The GPU-only tests plus the block-semantics cases the simulator suite
    # runs (SCAN_TESTS_BACKEND=gpu), spread over workers: most of the time is
    # compiling kernels, which the shared disk cache lets processes share.
    # The fuzzer has a step of its own.
    if "$PY" -c "import xdist" 2>/dev/null; then
        # shellcheck disable=SC2086  # GPU_PYTEST_ARGS is split on purpose
        SCAN_TESTS_BACKEND=gpu timeout -k 10 "$GPU_TEST_TIMEOUT" "${PYTEST[@]}" tests \
            -m "(gpu or sim) and not fuzz" -n "${GPU_TEST_WORKERS:-8}" \
            ${GPU_PYTEST_ARGS:-} 2>&1 | tee -a "$OUT/gpu_tests.log"
        tests_rc=${PIPESTATUS[0]}
    else
        log "no pytest-xdist: the property tests run in a process of their own" | tee -a "$OUT/gpu_tests.log"
        # shellcheck disable=SC2086
        SCAN_TESTS_BACKEND=gpu timeout -k 10 "$GPU_TEST_TIMEOUT" "${PYTEST[@]}" "$PROPERTIES" \
            -m "sim" ${GPU_PYTEST_ARGS:-} >"$OUT/gpu_properties.log" 2>&1 &
        prop_pid=$!
        # shellcheck disable=SC2086
        SCAN_TESTS_BACKEND=gpu timeout -k 10 "$GPU_TEST_TIMEOUT" "${PYTEST[@]}" tests \
            -m "(gpu or sim) and not fuzz" --deselect "$PROPERTIES" \
            ${GPU_PYTEST_ARGS:-} 2>&1 | tee -a "$OUT/gpu_tests.log"
        tests_rc=${PIPESTATUS[0]}
        wait "$prop_pid"
        prop_rc=$?
        [ "$prop_rc" = 5 ] && prop_rc=0  # GPU_PYTEST_ARGS deselected them all
        { log "== property tests (second process, rc=$prop_rc)"; cat "$OUT/gpu_properties.log"; } \
            | tee -a "$OUT/gpu_tests.log"
        [ "$tests_rc" = 0 ] && [ "$prop_rc" != 0 ] && tests_rc=$prop_rc
    fi
    tests_line=$(grep -E '(passed|failed|error|no tests ran|skipped)' "$OUT/gpu_tests.log" | tail -n 1)
    case "$tests_rc" in
    0) ;;
    124 | 137) loud "GPU tests stopped after ${GPU_TEST_TIMEOUT}s" ;;
    5) loud "pytest collected no GPU tests" ;;
    *) loud "GPU tests failed (rc=$tests_rc); going on" ;;
    esac
fi
steps_failed=0
[ "$tests_rc" = 0 ] || [ "$tests_rc" = skipped ] || steps_failed=1

# ---------------------------------------------------------------- fuzzer
FUZZ_DIR="$OUT/fuzz"
fuzz_line="fuzz skipped"
if [ "${FUZZ:-1}" != "0" ]; then
    FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
    FUZZ_SHARDS=${FUZZ_SHARDS:-12}
    FUZZ_EXAMPLES=${FUZZ_EXAMPLES:-55}
    FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-240}
    rm -rf "$FUZZ_DIR" && mkdir -p "$FUZZ_DIR"
    log "== fuzzer: seed $FUZZ_SEED, $FUZZ_SHARDS shards x $FUZZ_EXAMPLES cases (limit ${FUZZ_TIMEOUT}s);" \
        "repeat with FUZZ_SEED=$FUZZ_SEED" | tee -a "$OUT/gpu_tests.log"
    fuzz_start=$(date +%s)
    pids=()
    for ((i = 0; i < FUZZ_SHARDS; i++)); do
        SCAN_TESTS_BACKEND=gpu SCAN_FUZZ_SEED=$FUZZ_SEED SCAN_FUZZ_SHARD=$i \
            SCAN_FUZZ_EXAMPLES=$FUZZ_EXAMPLES SCAN_FUZZ_RECORD="$FUZZ_DIR" \
            timeout -k 10 "$FUZZ_TIMEOUT" "${PYTEST[@]}" tests/fuzz -m "sim and fuzz" \
            -k test_fuzz_case >"$FUZZ_DIR/shard-$i.log" 2>&1 &
        pids+=($!)
    done
    fuzz_failed=0
    for pid in "${pids[@]}"; do wait "$pid" || fuzz_failed=$((fuzz_failed + 1)); done
    fuzz_line=$("$PY" - "$FUZZ_DIR" "$FUZZ_SEED" "$fuzz_failed" "$FUZZ_SHARDS" "$(($(date +%s) - fuzz_start))" "${FUZZ_MIN_CASES:-500}" <<'PY'
import json, pathlib, sys
folder, seed, failed, shards, secs, least = sys.argv[1:]
entries = [json.loads(line) for p in sorted(pathlib.Path(folder).glob("shard-*.jsonl"))
           for line in p.read_text().splitlines()]
ran = sum(e["outcome"] == "ran" for e in entries)
refused = sum(e["outcome"] == "refused" for e in entries)
failures = pathlib.Path(folder, "failures.txt")
bad = len(failures.read_text().splitlines()) if failures.exists() else 0
line = (f"fuzz: seed {seed}: {ran} cases ran on the GPU and equal NumPy, {refused} refused as "
        f"documented, {bad} failing (shrinking steps included), {failed} of {shards} shards "
        f"failed; {secs}s")
if ran < int(least):
    line += f"; !!!!! fewer than {least} GPU cases: raise FUZZ_EXAMPLES or FUZZ_TIMEOUT"
print(line)
PY
)
    log "$fuzz_line" | tee -a "$OUT/gpu_tests.log"
    if [ "$fuzz_failed" != 0 ]; then
        loud "fuzzer failures (see $FUZZ_DIR/shard-*.log; smallest cases last in failures.txt):"
        tail -n 5 "$FUZZ_DIR/failures.txt" 2>/dev/null
        steps_failed=1
    fi
fi

# ---------------------------------------------------------------- sanitizers and replay
sanitizer_lines=()
replay_line="replay skipped"
replay_pids=()
if [ "${FUZZ:-1}" != "0" ] && [ "${FUZZ_REPLAY:-all}" != "0" ]; then
    procs=${FUZZ_REPLAY_PROCS:-6}
    limit=${FUZZ_REPLAY:-all}
    [ "$limit" = all ] && limit=1000000
    per_proc=$(((limit + procs - 1) / procs))
    log "== replaying the GPU's fuzz cases in the simulator ($procs processes)"
    for ((i = 0; i < procs; i++)); do
        NUMBA_ENABLE_CUDASIM=1 SCAN_FUZZ_REPLAY="$FUZZ_DIR" SCAN_FUZZ_REPLAY_SHARD="$i/$procs" \
            SCAN_FUZZ_REPLAY_LIMIT=$per_proc timeout -k 10 "${FUZZ_TIMEOUT:-240}" "${PYTEST[@]}" \
            -s tests/fuzz -k test_replay_gpu_record >"$FUZZ_DIR/replay-$i.log" 2>&1 &
        replay_pids+=($!)
    done
fi

sanitizer_failed=0
if [ "${SANITIZE:-1}" != "0" ]; then
    if ! command -v compute-sanitizer >/dev/null; then
        loud "compute-sanitizer not found (CUDA_HOME=${CUDA_HOME:-unset}): sanitizer runs skipped"
        sanitizer_lines+=("sanitizers: skipped, no compute-sanitizer")
        sanitizer_failed=1
    else
        SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-240}
        tools=${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}
        log "== compute-sanitizer: $tools (at once, limit ${SANITIZER_TIMEOUT}s each)"
        declare -A tool_pid
        for tool in $tools; do
            # memcheck also reports host API calls that return an error: under torch's
            # autograd (the linear-recurrence example) cuda-bindings' cuGetProcAddress_v2
            # probes return CUDA_ERROR_INVALID_VALUE, which is no memory error
            api=()
            [ "$tool" = memcheck ] && api=(--report-api-errors no)
            # shellcheck disable=SC2086  # SANITIZER_PYTEST_ARGS is split on purpose
            SCAN_TESTS_BACKEND=gpu timeout -k 10 "$SANITIZER_TIMEOUT" compute-sanitizer \
                --tool "$tool" ${api[@]+"${api[@]}"} --error-exitcode 86 --print-limit 50 \
                "${PYTEST[@]}" tests -m "sanitize" ${SANITIZER_PYTEST_ARGS:-} \
                >"$OUT/sanitizer_$tool.log" 2>&1 &
            tool_pid[$tool]=$!
        done
        for tool in $tools; do
            wait "${tool_pid[$tool]}"
            rc=$?
            report=$(grep -E '(ERROR|RACECHECK|SYNCCHECK|INITCHECK) SUMMARY' "$OUT/sanitizer_$tool.log" | tail -n 1 | sed 's/^=* *//')
            ran=$(grep -E '^[0-9]+ (passed|failed|errors?|skipped)|no tests ran' "$OUT/sanitizer_$tool.log" | tail -n 1)
            case "$rc" in
            0) verdict=ok ;;
            86) verdict="ERRORS FOUND" ;;
            124 | 137) verdict="stopped after ${SANITIZER_TIMEOUT}s" ;;
            *) verdict="tests failed" ;;
            esac
            sanitizer_lines+=("sanitizer $tool: $verdict (rc=$rc): ${report:-no summary}; ${ran:-no pytest line}")
            [ "$rc" = 0 ] || sanitizer_failed=1
        done
    fi
    for line in "${sanitizer_lines[@]}"; do log "$line"; done | tee -a "$OUT/gpu_tests.log"
    [ "$sanitizer_failed" = 0 ] || { loud "sanitizer runs reported problems"; steps_failed=1; }
fi

if [ ${#replay_pids[@]} -gt 0 ]; then
    replay_failed=0
    for pid in "${replay_pids[@]}"; do wait "$pid" || replay_failed=$((replay_failed + 1)); done
    replayed=$(sed -n 's/.*replayed \([0-9]*\) GPU cases.*/\1/p' "$FUZZ_DIR"/replay-*.log | awk '{n += $1} END {print n + 0}')
    replay_line="replay: $replayed GPU cases rerun in the simulator, equal to the GPU byte for byte (float products: to rounding); ${replay_failed} of ${#replay_pids[@]} processes failed"
    log "$replay_line" | tee -a "$OUT/gpu_tests.log"
    [ "$replay_failed" = 0 ] || { loud "the simulator disagrees with the GPU: see $FUZZ_DIR/replay-*.log"; steps_failed=1; }
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
{
    log "$fuzz_line"
    for l in "${sanitizer_lines[@]}"; do log "$l"; done
    log "$replay_line"
    log "$line"
} >"$OUT/summary_steps.txt"
if [ "$bench_rc" = skipped ]; then
    tee "$OUT/summary.txt" <"$OUT/summary_steps.txt"
else
    tee -a "$OUT/summary.txt" <"$OUT/summary_steps.txt"
fi
rm -f "$OUT/summary_steps.txt"
rm -rf "$STATEFN_SCAN_CACHE_DIR"
if [ "${PACK_LOGS:-0}" = "1" ]; then
    (
        cd "$OUT" || exit 0
        packed=()
        for f in gpu_tests.log sanitizer_*.log fuzz sass.txt bench.png; do
            [ -e "$f" ] && packed+=("$f")
        done
        if [ "${#packed[@]}" -gt 0 ] && tar -czf logs.tar.gz "${packed[@]}"; then
            rm -rf "${packed[@]}"
        fi
    )
fi
[ "$steps_failed" = 0 ] || exit 1
[ "$bench_rc" = 0 ] || [ "$bench_rc" = skipped ] || exit 1
exit 0
