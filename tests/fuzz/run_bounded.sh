#!/bin/sh
# run_bounded.sh FUZZER SECONDS DICT SEEDS... - one bounded libFuzzer run
# (the ctest label `fuzz`): the files of the SEEDS directories (committed
# seeds) are copied into a scratch corpus (never modified), the fuzzer runs
# for SECONDS, and one summary line says how many inputs ran. A crash, leak, timeout or failed oracle fails the
# test; the input that did it is kept under the build's fuzz-failures/.
set -eu
fuzzer=$1 seconds=$2 dict=$3
shift 3
name=$(basename "$fuzzer")
work=$(mktemp -d "${TMPDIR:-/tmp}/mox-$name-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
seeds=0
for dir in "$@"; do
    for file in "$dir"/*; do
        [ -f "$file" ] && cp "$file" "$work/corpus/seed-$seeds-$(basename "$file")" && seeds=$((seeds + 1))
    done
done
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$dict" -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/log" 2>&1 || status=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
corpus=$(ls "$work/corpus" | wc -l)
if [ "$status" -ne 0 ]; then
    tail -n 60 "$work/log"
    keep="$(dirname "$fuzzer")/../fuzz-failures"
    mkdir -p "$keep"
    cp "$work"/artifacts/* "$keep/" 2>/dev/null || true
    echo "fuzz $name: FAILED (exit $status) after ${execs:-?} runs; inputs kept in $keep"
    exit 1
fi
echo "fuzz $name: ${execs:-?} runs in $seconds s (${rate:-?} exec/s), corpus $seeds -> $corpus inputs, no failure"
