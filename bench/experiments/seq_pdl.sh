#!/usr/bin/env bash
# seq_pdl.sh - where a dependent sequence's time goes on the GPU, with each
# MOX_CUDA_PDL setting: bench/seq_phases (construct, submit, wait, drop of
# sequences of 1, 2, 8 and 64 dependent tiny launches) in ROUNDS rounds of
# (off, end, start), each its own process, with MOX_CUDA_STATS=1; then
# cuda_overhead once (its idle lines: three seconds in a row).
#
# Usage (GPU machine, repository root, build carried):
#   OUT=dir [ROUNDS=3] bench/experiments/seq_pdl.sh [build-dir]
set -u
build=${1:-build-gpu}
OUT=${OUT:-$PWD/seq-pdl-out}
rounds=${ROUNDS:-3}
mkdir -p "$OUT"
log=$OUT/seq-pdl.txt
. "$(dirname "$0")/carried_build.sh" seq_pdl.sh
for r in $(seq 1 "$rounds"); do
    for pdl in off end start; do
        echo "## round $r, MOX_CUDA_PDL=$pdl" >>"$log"
        MOX_CUDA_PDL=$pdl MOX_CUDA_STATS=1 timeout 120 "$build/bench/seq_phases" 400 >>"$log" 2>&1
        echo "rc=$?" >>"$log"
    done
done
echo "## cuda_overhead" >>"$log"
(cd "$build/bench" && timeout 240 ./cuda_overhead "$OUT/cuda_overhead.json") >>"$log" 2>&1
echo "rc=$?" >>"$log"
