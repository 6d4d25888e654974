#!/bin/bash
# slow_mode_hunt.sh - the slow mode of docs/performance.md ("Bimodal waits"):
# some processes run every launch + wait ~32 us slower. Does a plain CUDA
# program (launch_latency_probe.cu, no mox) show it, does it follow the CPU /
# NUMA node the process runs on, and is it a late kernel start or a late
# completion? Runs the probe N times unpinned (separate processes), then once
# pinned to each allowed CPU, then mox_bench's round trip pinned to each pair
# of allowed CPUs (A and the next one), if build-gpu/bench/mox_bench exists.
#
#   OUT=<dir> [N=24] [BUDGET_S=400] bench/experiments/slow_mode_hunt.sh [probe-binary]
#
# From the repository root, on the GPU machine. Without a probe binary it is
# built with nvcc (into $OUT/.., else /tmp). Everything printed also goes to
# $OUT/slow_mode_hunt.txt; each process's whole output to $OUT/probe-*.txt,
# $OUT/mox-*.{md,json,log}. No new process starts after BUDGET_S seconds.
set -u
: "${OUT:?set OUT=<dir>}"
mkdir -p "$OUT" || exit 1
N=${N:-24}
BUDGET_S=${BUDGET_S:-400}
ITER=1500
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOX_BENCH=$PWD/build-gpu/bench/mox_bench
stopped=0

# True while new processes may start; says once when the budget is spent.
budget_ok() {
  if [ "$stopped" -eq 0 ] && [ "$SECONDS" -ge "$BUDGET_S" ]; then
    echo "budget: ${SECONDS}s >= BUDGET_S=${BUDGET_S}s, stopped starting new processes"
    stopped=1
  fi
  [ "$stopped" -eq 0 ]
}

# " (rc N)" for a process that failed or ran out of time (124).
rc_note() { [ "$1" -eq 0 ] || echo " (rc $1)"; }

# "0-3,8,10-11" -> "0 1 2 3 8 10 11"
expand_cpus() {
  local part a b c parts out=()
  IFS=, read -ra parts <<< "$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then
      a=${part%-*}; b=${part#*-}
      for ((c = a; c <= b; c++)); do out+=("$c"); done
    else
      out+=("$part")
    fi
  done
  echo "${out[@]}"
}

main() {
  local probe=${1:-} dest nvcc_bin
  if [ -z "$probe" ]; then
    nvcc_bin=$(command -v nvcc || true)
    if [ -n "$nvcc_bin" ]; then
      dest=$(cd "$OUT/.." && pwd)/launch_probe
      [ -w "$(dirname "$dest")" ] || dest=/tmp/launch_probe.$$
      echo "building $dest with $nvcc_bin"
      if ! "$nvcc_bin" -O3 -gencode arch=compute_90,code=sm_90 -o "$dest" "$HERE/launch_latency_probe.cu"; then
        echo "build failed: the probe runs are skipped"
        dest=
      fi
      probe=$dest
    else
      echo "no probe binary given and no nvcc on PATH: the probe runs are skipped"
    fi
  fi

  echo "== machine"
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ) host $(hostname) kernel $(uname -r)"
  echo "nproc $(nproc)"
  lscpu | grep -i -E 'numa|^model name|^socket' || true
  echo "nvidia-smi topo -m:"
  nvidia-smi topo -m 2>&1 || true
  local bus id
  for bus in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>/dev/null); do
    id=${bus,,}; id=${id: -12}       # 00000000:1B:00.0 -> 0000:1b:00.0
    echo "gpu $id numa_node $(cat "/sys/bus/pci/devices/$id/numa_node" 2>/dev/null || echo '?')"
  done

  local allowed cpus ncpu i c rc
  allowed=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
  [ -n "$allowed" ] || allowed=$(taskset -pc $$ | awk -F': ' '{print $2}')
  read -ra cpus <<< "$(expand_cpus "$allowed")"
  ncpu=${#cpus[@]}
  echo "allowed cpus $allowed ($ncpu)"

  if [ -n "$probe" ]; then
    echo "== probe, $N processes unpinned, $ITER iterations each (times in us; summary: medians)"
    for i in $(seq 1 "$N"); do
      budget_ok || break
      timeout 120 "$probe" "$ITER" > "$OUT/probe-unpinned-$i.txt" 2>&1
      rc=$?
      echo "unpinned $i: $(grep -E '^(summary|FAIL)' "$OUT/probe-unpinned-$i.txt" | head -1)$(rc_note "$rc")"
    done
    echo "== probe pinned to each allowed cpu (taskset -c CPU)"
    for c in "${cpus[@]}"; do
      budget_ok || break
      timeout 120 taskset -c "$c" "$probe" "$ITER" > "$OUT/probe-cpu$c.txt" 2>&1
      rc=$?
      echo "cpu $c: $(grep -E '^(summary|FAIL)' "$OUT/probe-cpu$c.txt" | head -1)$(rc_note "$rc")"
    done
    echo "== the mode lines of every probe process"
    grep -H -E '^(probe|mode|evq)' "$OUT"/probe-*.txt 2>/dev/null | sed "s|^$OUT/||"
  fi

  if [ -x "$MOX_BENCH" ]; then
    echo "== mox_bench round trip pinned to cpus A,B (B the next allowed cpu)"
    local j a b rt rw
    for j in $(seq 0 $((ncpu - 1))); do
      budget_ok || break
      a=${cpus[$j]}; b=${cpus[$(((j + 1) % ncpu))]}
      MOX_CUDA_STATS=1 MOX_BACKEND=cuda timeout 300 taskset -c "$a,$b" "$MOX_BENCH" --suite overhead --filter round-trip \
        --samples 200 --md "$OUT/mox-$a.md" --json "$OUT/mox-$a.json" > "$OUT/mox-$a.log" 2>&1
      rt=$(grep -E "\| round-trip \|" "$OUT/mox-$a.md" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $7); print $7}')
      rw=$(grep -E "\| round-trip-wait \|" "$OUT/mox-$a.md" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $7); print $7}')
      echo "mox cpus $a,$b: round trip $rt us, its wait $rw us; $(grep -o 'mox cuda stats.*' "$OUT/mox-$a.log" | head -1)"
    done
  else
    echo "no $MOX_BENCH: the mox runs are skipped"
  fi
  echo "done after ${SECONDS}s"
}

main "$@" 2>&1 | tee "$OUT/slow_mode_hunt.txt"
