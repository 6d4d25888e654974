#!/bin/bash
# ungated_ab.sh - interleaved A/B of two libmox builds over the same modules
# and benchmark binaries: the kernel-quality suite and cuda_overhead, twice
# each, A (build-gpu/ab-old/libmox.so.0, e.g. a libmox from before the
# entries without the gate check) then B (the build's own libmox).
#
#   cp <old build>/src/libmox.so.0.1.0 build-gpu/ab-old/libmox.so.0
#   OUT=<dir> bench/experiments/ungated_ab.sh     # on the GPU machine
#
# Prints each side's quality rows (variant, median, ratio) and sections
# A-C of cuda_overhead; writes the quality tables to $OUT.
B=$PWD/build-gpu
for round in 1 2; do
  for side in old new; do
    if [ $side = old ]; then LIB=$B/ab-old:; else LIB=; fi
    echo "==== round $round side $side"
    LD_LIBRARY_PATH=$LIB$LD_LIBRARY_PATH MOX_BACKEND=cuda $B/bench/mox_bench --suite quality --samples 10 \
      --md "$OUT/ab-q-$side-$round.md" --json /dev/null > /dev/null 2>&1
    echo rc=$?
    grep -E "vec-add|reduction|scan|particle" "$OUT/ab-q-$side-$round.md" | awk -F'|' '{print $3,$4,$7,$15}'
    LD_LIBRARY_PATH=$LIB$LD_LIBRARY_PATH $B/bench/cuda_overhead /dev/null 2>&1 | sed -n '/^A\./,/^D\./p' | grep -vE "^D"
  done
done
