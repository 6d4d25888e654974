#!/usr/bin/env bash
# single_gap.sh - where does a single-shot run through mox lose time against
# the same kernels as one raw graph? mox_bench's single-shot workload cases
# (`workloads/<name>.single`), each setting its own process, ROUNDS rounds:
# default, MOX_CUDA_PDL=off, MOX_WAIT_SPIN_US=0 (the waiter blocks on its
# launch), MOX_CUDA_SPIN_US=0, MOX_CUDA_EVENTS=blocking. Prints each case's
# medians and raw-gen-graph / mox per setting.
#
# Usage (GPU machine, repository root, build carried):
#   OUT=dir [ROUNDS=2] [CASES=a,b] bench/experiments/single_gap.sh [build-dir]
set -u
build=${1:-build-gpu}
OUT=${OUT:-$PWD/single-gap-out}
rounds=${ROUNDS:-2}
cases=${CASES:-particle-update,matmul-f32,compaction,blackscholes,histogram,vec-add}
mkdir -p "$OUT"
log=$OUT/single-gap.txt
filter=$(echo "$cases" | sed 's/\([^,]*\)/workloads\/\1.single/g')
. "$(dirname "$0")/carried_build.sh" single_gap.sh
for r in $(seq 1 "$rounds"); do
    for setting in default MOX_CUDA_PDL=off MOX_WAIT_SPIN_US=0 MOX_CUDA_SPIN_US=0 MOX_CUDA_EVENTS=blocking; do
        echo "## round $r, $setting" >>"$log"
        json=$OUT/r$r-${setting//[=\/]/-}.json
        env ${setting/default/MOX_UNUSED=1} timeout 120 "$build/bench/mox_bench" --suite workloads \
            --filter "$filter" --samples 20 --warmup 2 --json "$json" >/dev/null 2>>"$log"
        echo "rc=$?" >>"$log"
        python3 - "$json" >>"$log" 2>&1 <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
med = {}
for c in d['cases']:
    med[(c['name'], c['variant'])] = c['stats'].get('median')
for (name, var), m in sorted(med.items()):
    if var != 'mox' or m is None:
        continue
    g = med.get((name, 'raw-gen-graph')); s = med.get((name, 'raw-gen'))
    print(f"{name:26s} mox {m:9.2f}  raw-gen {s or 0:9.2f}  raw-graph {g or 0:9.2f}  graph/mox {(g or 0)/m:.4f}  stream/mox {(s or 0)/m:.4f}")
P
    done
done
