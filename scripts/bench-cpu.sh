#!/usr/bin/env bash
# scripts/bench-cpu.sh - the benchmark run on this machine's CPU
# (docs/performance.md): builds mox_bench, runs the CPU suite (mox's CPU
# backend vs plain C at 1..all threads), the runtime overhead and the
# pipeline cases on MOX_BACKEND=cpu, and draws the charts.
#
# Usage: scripts/bench-cpu.sh [build-dir] [mox_bench arguments...]
#   build-dir  default build-bench (configured here if it does not exist)
# Results: bench/results/<date>-cpu.json, <date>-cpu.md and
# bench/results/<date>-cpu-plots/*.png (RESULTS=dir to put them elsewhere).
set -u
build=${1:-build-bench}
shift || true
root=$PWD
results=${RESULTS:-$root/bench/results}
tag="$(date -u +%Y-%m-%d)-cpu"
mkdir -p "$results"

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release || exit 1
fi
cmake --build "$build" --target mox_bench -j"${JOBS:-2}" || exit 1

status=0
echo "== mox_bench (MOX_BACKEND=cpu) $*"
MOX_BACKEND=cpu "$build/bench/mox_bench" --suite cpu,overhead,pipeline --json "$results/$tag.json" \
    --md "$results/$tag.md" "$@" || status=1
if [ -f "$results/$tag.json" ] && command -v python3 >/dev/null; then
    echo "== plot.py"
    python3 "$root/bench/plot.py" --check --out "$results/$tag-plots" "$results/$tag.json"
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
fi
echo "bench-cpu: status=$status; results in $results/$tag.*"
exit $status
