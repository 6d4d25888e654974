#!/bin/bash
# wait_modes.sh - does a process sometimes run every launch + wait ~34 us
# slower (docs/performance.md, "Bimodal waits")? Runs the overhead suite's
# round trips in 8 separate processes, each printing its median and the
# CUDA backend's counters (MOX_CUDA_STATS=1), so a slow process shows which
# path its waits took (completed by waiting threads, event sleeps...).
#
#   OUT=<dir> bench/experiments/wait_modes.sh     # on the GPU machine
B=$PWD/build-gpu
for i in 1 2 3 4 5 6 7 8; do
  MOX_CUDA_STATS=1 MOX_BACKEND=cuda $B/bench/mox_bench --suite overhead --filter round-trip --samples 20 \
    --md "$OUT/rt-$i.md" --json /dev/null > "$OUT/rt-$i.log" 2>&1
  rt=$(grep -E "\| round-trip \|" "$OUT/rt-$i.md" | awk -F'|' '{print $7}')
  echo "process $i: round trip $rt us; $(grep -o 'mox cuda stats.*' "$OUT/rt-$i.log" | head -1)"
done
