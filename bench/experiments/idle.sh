#!/usr/bin/env bash
# idle.sh - the CPU an idle open device costs: bench/idle_cpu in a process of
# its own, the CUDA driver alone (raw) against mox, alternating, ROUNDS
# rounds of SECONDS seconds each (the first second of each is not counted).
# Prints every process's lines and, at the end, the summary lines.
#
# Usage (GPU machine, repository root, build carried):
#   OUT=dir [ROUNDS=3] [SECONDS_EACH=6] bench/experiments/idle.sh [build-dir]
set -u
build=${1:-build-gpu}
OUT=${OUT:-$PWD/idle-out}
rounds=${ROUNDS:-3}
secs=${SECONDS_EACH:-6}
mkdir -p "$OUT"
log=$OUT/idle.txt
. "$(dirname "$0")/carried_build.sh" idle.sh
for r in $(seq 1 "$rounds"); do
    for mode in raw mox; do
        echo "## round $r, $mode" >>"$log"
        timeout $((secs + 30)) "$build/bench/idle_cpu" "$mode" "$secs" >>"$log" 2>&1
        echo "rc=$?" >>"$log"
    done
done
echo "## summary" >>"$log"
grep '^idle ' "$log" | grep -v '^idle_cpu' >>"$log.tmp"
cat "$log.tmp" >>"$log" && rm -f "$log.tmp"
cat "$log"
