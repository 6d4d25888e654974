#!/usr/bin/env bash
# scripts/bench-multi-gpu.sh - the several-devices checks and benchmark on a
# machine with two GPUs (docs/multi-device.md), from the repository root,
# with a build folder built elsewhere (nvcc found) and carried along. Each
# step runs on its own and the summary says how it ended:
#   1. nvidia-smi: the GPUs, `topo -m` (how they connect), `nvlink -s` (the
#      per-link speeds; their sum for GPU 0 is the NVLink figure the
#      benchmark records), all kept verbatim
#   2. ctest -L cuda on the several-devices tests: conformance multi_device,
#      multi_device_gating, multi_backend, the HAL contract suite, the
#      multi-device example - on the real GPUs
#   3. bench/multi_gpu: peer copy bandwidth (mox vs cuMemcpyPeerAsync vs
#      NVLink) and the two-GPU pipeline vs one GPU: table + JSON
#   4. bench/multi_gpu_plot.py: PNG charts (if matplotlib is there)
# Results in $OUT (default ./bench-multi-gpu-out), at most 6 files:
# <date>-h200x<GPUs>-nvidia-smi.txt, -ctest.txt, -multi_gpu.json, -multi_gpu.txt,
# -plots.tar.gz, -summary.txt. About 3 minutes on two H200s.
#
# Usage: scripts/bench-multi-gpu.sh [build-dir]   (default build-cuda)
# Before carrying, where the build folder was built (nvcc found):
#   cmake --build <build-dir> -j2             (tests, example, bench/multi_gpu)
#   scripts/gpu-check.sh --prepare <build-dir> (cmocka and libuv, which the GPU
#                                               image lacks, into carried-libs)
set -u
build=${1:-build-cuda}
root=$PWD
export LD_LIBRARY_PATH="$root/$build/carried-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-$root/bench-multi-gpu-out}
mkdir -p "$OUT"
# The tag names how many GPUs there were (on one GPU the steps that need two
# exit 77, and the others still run: multi_backend, the HAL suite's
# one-device part).
tag="$(date -u +%Y-%m-%d)-h200x$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"
summary=$OUT/$tag-summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
note "bench-multi-gpu: $tag, build $build, $(date -u +%H:%M:%SZ)"
if [ ! -f "$build/CMakeCache.txt" ]; then
    note "no build folder $build (build it where nvcc is found, then carry it)"
    exit 2
fi

# The build recorded absolute paths (ctest files, artifact directories);
# where the checkout lives elsewhere now, point the recorded source path here.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src" && note "linked $src -> $root"
fi
export MOX_ARTIFACT_ROOT=$root/$build/mox-artifacts

smi=$OUT/$tag-nvidia-smi.txt
{
    echo "== nvidia-smi -L"; nvidia-smi -L
    echo "== nvidia-smi topo -m"; nvidia-smi topo -m
    echo "== nvidia-smi nvlink -s"; nvidia-smi nvlink -s
} >"$smi" 2>&1
note "1. nvidia-smi: rc $? ($(grep -c '^GPU ' "$smi") GPU lines in $smi)"
# Sum of GPU 0's link speeds ("Link N: X GB/s" lines under "GPU 0:").
nvlink=$(awk '/^== nvidia-smi nvlink -s/ {on = 1; next} /^==/ {on = 0}
              on && /^GPU / {gpu = $2} on && gpu == "0:" && /Link [0-9]+:/ {
                  for (i = 1; i <= NF; i++) if ($i == "GB/s") sum += $(i - 1) }
              END {if (sum > 0) printf "%.3f", sum}' "$smi")
note "   NVLink per direction, GPU 0 (sum of its links): ${nvlink:-not reported}"

ctest_log=$OUT/$tag-ctest.txt
(cd "$build" && ctest -L cuda -R 'multi_device|multi_backend|hal.cts|example-multi-device' \
    --output-on-failure --timeout 300) >"$ctest_log" 2>&1
note "2. ctest -L cuda (several devices): rc $? - $(grep -E 'tests passed|tests failed' "$ctest_log" | tail -1)"

json=$OUT/$tag-multi_gpu.json
MOX_BENCH_NVLINK_GBPS=$nvlink "$build/bench/multi_gpu" "$json" >"$OUT/$tag-multi_gpu.txt" 2>&1
rc=$?
[ $rc -eq 77 ] && why=" (77: fewer than two CUDA devices)" || why=""
note "3. bench/multi_gpu: rc $rc$why (table in $tag-multi_gpu.txt)"

plots=$(mktemp -d)
if [ -f "$json" ]; then
    python3 "$root/bench/multi_gpu_plot.py" --out "$plots" "$json" >>"$summary" 2>&1
    rc=$?
else
    rc="- (no JSON)"
fi
if ls "$plots"/*.png >/dev/null 2>&1; then
    tar -C "$plots" -czf "$OUT/$tag-plots.tar.gz" .
fi
note "4. plots: rc $rc"
rm -rf "$plots"
note "done $(date -u +%H:%M:%SZ)"
