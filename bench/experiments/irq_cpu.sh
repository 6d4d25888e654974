#!/bin/bash
# irq_cpu.sh - is the slow-wait mode (docs/performance.md) a process whose
# threads run on the CPU that takes the GPU's interrupts, and do launches
# recording spin events instead of blocking-sync ones (MOX_CUDA_EVENTS) end
# it? Finds the nvidia interrupt with the most counts and the CPU it is
# delivered to, then runs mox_bench's round trips and dependent sequences
# pinned to that CPU and the next one, and to two CPUs away from it, with
# each MOX_CUDA_EVENTS value, printing the medians, the GPU interrupts the
# process drew and the launches that recorded a spin event; then
# cuda_overhead (mox against raw launches) pinned the same two ways.
#
#   OUT=<dir> bench/experiments/irq_cpu.sh     # on the GPU machine, repository root
set -u
: "${OUT:?set OUT=<dir>}"
mkdir -p "$OUT" || exit 1
B=$PWD/build-gpu
exec > >(tee "$OUT/irq_cpu.txt") 2>&1

irq_line() { grep -E 'nvidia' /proc/interrupts | awk '{s=0; for (i=2; i<=NF; i++) if ($i ~ /^[0-9]+$/) s+=$i; print s, $0}' | sort -rn | head -1; }
irq=$(irq_line | awk '{print $2}' | tr -d :)
[ -n "$irq" ] || { echo "no nvidia interrupt in /proc/interrupts"; exit 0; }
cpu=$(cat "/proc/irq/$irq/effective_affinity_list" 2>/dev/null || echo 0)
n=$(nproc)
near="$cpu,$(( (cpu + 1) % n ))"
far="$(( (cpu + 4) % n )),$(( (cpu + 5) % n ))"
count() { grep -E "^ *$irq:" /proc/interrupts | awk '{s=0; for (i=2; i<=NF; i++) if ($i ~ /^[0-9]+$/) s+=$i; print s}'; }
echo "busiest nvidia interrupt $irq, delivered to cpu $cpu; near = cpus $near, far = cpus $far"

col() { grep -E "\| $2 \|" "$1" | head -1 | awk -F'|' '{gsub(/ /, "", $7); print $7}'; }
for pin in "$near" "$far"; do
  for ev in blocking spin; do
    tag="${pin/,/-}-$ev"
    c0=$(count)
    MOX_CUDA_EVENTS=$ev MOX_CUDA_STATS=1 MOX_BACKEND=cuda timeout 120 taskset -c "$pin" \
      "$B/bench/mox_bench" --suite overhead --filter round-trip,dispatch-seq --samples 200 \
      --md "$OUT/$tag.md" --json "$OUT/$tag.json" > "$OUT/$tag.log" 2>&1
    rc=$?
    c1=$(count)
    spin=$(grep -o 'launches with a spin event [0-9]*' "$OUT/$tag.log" | head -1 | awk '{print $NF}')
    launches=$(grep -o 'mox cuda stats: launches [0-9]*' "$OUT/$tag.log" | head -1 | awk '{print $NF}')
    echo "cpus $pin MOX_CUDA_EVENTS=$ev (rc $rc): round trip $(col "$OUT/$tag.md" round-trip) us, its wait" \
         "$(col "$OUT/$tag.md" round-trip-wait) us, dispatch-seq-64 $(col "$OUT/$tag.md" dispatch-seq-64) us;" \
         "interrupts $((c1 - c0)) for ${launches:-?} launches, ${spin:-?} with a spin event"
  done
done
for pin in "$near" "$far"; do
  for ev in blocking spin; do
    c0=$(count)
    (cd "$B/bench" && MOX_CUDA_EVENTS=$ev timeout 120 taskset -c "$pin" ./cuda_overhead \
       "$OUT/co-${pin/,/-}-$ev.json" > "$OUT/co-${pin/,/-}-$ev.txt" 2>&1)
    c1=$(count)
    echo "== cuda_overhead cpus $pin MOX_CUDA_EVENTS=$ev: interrupts $((c1 - c0))"
    sed -n '/^A\./,/^C\./p' "$OUT/co-${pin/,/-}-$ev.txt" | grep -v '^C\.'
  done
done
