#!/usr/bin/env bash
# fuzz-long.sh - long fuzzing runs of mox's libFuzzer targets (tests/fuzz):
# the manifest parser, the ABI parser, and moxc's front end + generators.
#
#   scripts/fuzz-long.sh [--seconds S] [--jobs J] [--out DIR] [TARGET...]
#
# TARGET is manifest, abi or moxc (default: all three, one after another).
# Builds the targets with clang (ASan+UBSan) into DIR/build (default
# build-fuzz), then runs each for S seconds (default 3600) with J parallel
# jobs (default: the number of CPUs). Each target keeps a growing corpus in
# DIR/corpus/TARGET, seeded from tests/fuzz/corpus/TARGET (moxc: the front
# end's fixtures, tests/moxc/front/fixtures), so runs continue
# where the last one stopped; crashes, leaks, timeouts and failed oracles
# land in DIR/crashes/TARGET. Prints each run's executions and exits 1 if
# any target found something. To grow the committed seeds, minimise a
# corpus with: DIR/build/fuzz_T -merge=1 NEW_DIR DIR/corpus/T
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=3600 jobs=$(nproc) out=build-fuzz targets=()
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    manifest | abi | moxc) targets+=("$1"); shift ;;
    *) echo "usage: $0 [--seconds S] [--jobs J] [--out DIR] [manifest|abi|moxc]..." >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(manifest abi moxc)
clang=$(command -v clang-14 || command -v clang || true)
[ -n "$clang" ] || { echo "fuzz-long: clang (with libFuzzer) is needed" >&2; exit 2; }
cmake -S "$root/tests/fuzz/targets" -B "$out/build" -DCMAKE_C_COMPILER="$clang" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$out/build" -j "$jobs" > /dev/null
found=0
for t in "${targets[@]}"; do
    corpus="$out/corpus/$t" crashes="$out/crashes/$t"
    mkdir -p "$corpus" "$crashes"
    dict="$root/tests/fuzz/json.dict" seeds="$root/tests/fuzz/corpus/$t"
    if [ "$t" = moxc ]; then
        dict="$root/tests/fuzz/kernel.dict"
        seeds="$root/tests/moxc/front/fixtures/accept $root/tests/moxc/front/fixtures/reject"
    fi
    for dir in $seeds; do
        find "$dir" -maxdepth 1 -type f -exec cp -n {} "$corpus/" \;
    done
    echo "fuzz-long: $t for $seconds s on $jobs jobs (corpus $corpus)"
    status=0
    (cd "$crashes" && "$out/build/fuzz_$t" -max_total_time="$seconds" -jobs="$jobs" \
        -workers="$jobs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 -dict="$dict" \
        -artifact_prefix="$crashes/" "$corpus") > "$out/$t.log" 2>&1 || status=$?
    execs=$(cat "$crashes"/fuzz-*.log 2>/dev/null | sed -n 's/^stat::number_of_executed_units: *//p' |
            awk '{s += $1} END {print s + 0}')
    inputs=$(find "$crashes" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
             -o -name 'oom-*' \) | wc -l)
    echo "fuzz-long: $t: $execs executions, corpus $(ls "$corpus" | wc -l) inputs, $inputs failing inputs (exit $status)"
    [ "$inputs" -eq 0 ] && [ "$status" -eq 0 ] || found=1
done
exit $found
