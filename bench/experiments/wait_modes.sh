#!/bin/bash
# wait_modes.sh - does a process sometimes run every launch + wait ~34 us
# slower (docs/performance.md, "Bimodal waits")? Runs the overhead suite's
# round trips in N separate processes (default 12), each printing its
# medians of the whole round trip and of its waiting half alone
# (round-trip-wait), and the CUDA backend's counters (MOX_CUDA_STATS=1), so a
# slow process shows which half is slow and which path its waits took
# (completed by waiting threads, offers declined by reason, event sleeps...).
#
#   OUT=<dir> [N=12] bench/experiments/wait_modes.sh     # on the GPU machine
B=$PWD/build-gpu
for i in $(seq 1 "${N:-12}"); do
  MOX_CUDA_STATS=1 MOX_BACKEND=cuda $B/bench/mox_bench --suite overhead --filter round-trip --samples 200 \
    --md "$OUT/rt-$i.md" --json "$OUT/rt-$i.json" > "$OUT/rt-$i.log" 2>&1
  rt=$(grep -E "\| round-trip \|" "$OUT/rt-$i.md" | awk -F'|' '{print $7}')
  rw=$(grep -E "\| round-trip-wait \|" "$OUT/rt-$i.md" | awk -F'|' '{print $7}')
  echo "process $i: round trip $rt us, its wait $rw us; $(grep -o 'mox cuda stats.*' "$OUT/rt-$i.log" | head -1)"
done
