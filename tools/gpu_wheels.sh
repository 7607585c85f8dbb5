#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Fetch, on a machine with PyPI, what a GPU machine without network lacks for
# tools/gpu_suite.sh and tools/gpu_suite_mlir.sh, into git-ignored folders the
# two scripts read:
#
#   tools/gpu_wheels.sh          .whl/: numpy 2.4 for CPython 3.12 (numba 0.68
#                                fails with numpy 2.5)
#   tools/gpu_wheels.sh peers    .whl/ also: accelerated-scan and fla-core, the
#                                peers of bench/recurrence_bench.py
#   tools/gpu_wheels.sh mlir     .mlir/mlir.tar.xz: numba-cuda-mlir's wheel
#                                unpacked and packed with xz (47.6 MB for
#                                0.6.0, against 71 MB for the wheel)
#
# Each folder travels with the run that names it; a run carries at most 64
# MiB, so .whl with the peers and .mlir go in separate runs.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
NUMPY=${NUMPY:-numpy>=2.4,<2.5}
PEERS=(${PEERS:-accelerated-scan==0.3.1 fla-core==0.6.0})
MLIR=${MLIR:-numba-cuda-mlir==0.6.0}

download() {
    local dest=$1
    shift
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 \
        --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$dest" "$@"
}

mkdir -p .whl
download .whl "$NUMPY"
case "${1:-}" in
"") ;;
peers)
    download .whl "${PEERS[@]}"
    ;;
mlir)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    download "$tmp" "$MLIR"
    mkdir -p "$tmp/x" .mlir
    (cd "$tmp/x" && unzip -q "$tmp"/*.whl)
    tar -C "$tmp/x" -cf - . | xz -9 -T2 >.mlir/mlir.tar.xz
    ;;
*)
    echo "usage: tools/gpu_wheels.sh [peers | mlir]" >&2
    exit 2
    ;;
esac
du -sh .whl .mlir 2>/dev/null || true
