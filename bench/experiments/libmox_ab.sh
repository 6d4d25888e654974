#!/bin/bash
# libmox_ab.sh - interleaved A/B of two libmox builds over the same modules
# and benchmark binaries: mox_bench's SUITES (and with "overhead" in them,
# cuda_overhead's sections A-C), twice each, A then B:
#   A  build-gpu/ab-old/libmox.so.0 (e.g. a libmox from before a change)
#   B  the build's own libmox
#
#   cp <old build>/src/libmox.so.0.1.0 build-gpu/ab-old/libmox.so.0
#   OUT=<dir> bench/experiments/libmox_ab.sh quality|pipeline|overhead[,...]
#
# Prints each side's rows (case, variant, median, p10, p90, and the ratio
# column where there is one); writes the tables to $OUT.
B=$PWD/build-gpu
SUITES=${1:-quality}
uptime
for round in 1 2; do
  for side in old new; do
    if [ $side = old ]; then LIB=$B/ab-old:; else LIB=; fi
    echo "==== round $round side $side"
    md="$OUT/ab-${SUITES//,/-}-$side-$round.md"
    LD_LIBRARY_PATH=$LIB$LD_LIBRARY_PATH MOX_BACKEND=cuda $B/bench/mox_bench --suite "$SUITES" --samples 20 \
      --md "$md" --json /dev/null > /dev/null 2>&1
    echo rc=$?
    grep -E "^\| (quality|overhead|pipeline) \|" "$md" | awk -F'|' '{print $3,$4,$7,$8,$9,$15}'
    case ",$SUITES," in
      *,overhead,*)
        LD_LIBRARY_PATH=$LIB$LD_LIBRARY_PATH $B/bench/cuda_overhead /dev/null 2>&1 | sed -n '/^A\./,/^D\./p' | grep -vE "^D" ;;
    esac
  done
done
uptime
