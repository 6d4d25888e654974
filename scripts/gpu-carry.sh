#!/usr/bin/env bash
# scripts/gpu-carry.sh SRC DST - a trimmed copy of build folder SRC for
# carrying to the GPU machine (the device tool carries at most 64 MiB):
# without object files and static libraries, without the tests that only
# run here (fuzzers, the install tests, moxc's front-end and lowering
# tests), without CMake's per-target folders, and without the artifacts in
# SRC/mox-artifacts that nothing in SRC names any more (stale builds).
# Run `scripts/gpu-check.sh --prepare SRC` and `scripts/bench-gpu.sh
# --prepare SRC` first; then carry DST (docs/cuda-backend.md).
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: scripts/gpu-carry.sh SRC-BUILD DST" >&2
    exit 2
fi
src=$1 dst=$2
[ -d "$src" ] || { echo "gpu-carry: no build folder $src" >&2; exit 1; }
rm -rf "$dst"
cp -a "$src" "$dst"
find "$dst" \( -name '*.o' -o -name '*.a' \) -delete
rm -rf "$dst"/tests/fuzz "$dst"/tests/install "$dst"/tests/moxc/front "$dst"/tests/runtime/runtime_* \
    "$dst"/tests/runtime/librt_* "$dst"/tests/moxc/test_golden_front "$dst"/tests/moxc/test_cpu_lower \
    "$dst"/tests/dialect/moxc_ast.txt
for d in tests bench examples src tools; do
    [ -d "$dst/$d" ] && find "$dst/$d" -type d -name CMakeFiles -prune -exec rm -rf {} +
done
if [ -d "$src/mox-artifacts" ]; then
    for h in $(ls "$src/mox-artifacts" | grep -E '^[0-9a-f]{64}$' || true); do
        grep -rqs --exclude-dir=mox-artifacts -F "$h" "$src" || rm -rf "$dst/mox-artifacts/$h"
    done
fi
du -sh "$dst"
