#!/usr/bin/env bash
# scripts/gpu-check.sh - the CUDA checks, run on the GPU machine from the
# repository root with a build folder built elsewhere and carried along:
#   ctest -L cuda, the pipeline example on MOX_BACKEND=cuda, the CUDA
#   benchmarks, compute-sanitizer memcheck and racecheck over the
#   conformance suite (slowest, last).
# Results go to $OUT (the caller copies them to bench/results/):
#   summary.txt, ctest-cuda.txt, sanitizer.txt, cuda_overhead.txt,
#   cuda_overhead.json, examples.txt.
#
# Usage: scripts/gpu-check.sh [build-dir] [steps]
#   build-dir  default build-cuda (configured with -DMOX_BUILD_BENCH=ON)
#   steps      comma list of: ctest,examples,bench,fatbins,sanitize (default all)
# Prepare the build folder where it was built:
#   scripts/gpu-check.sh --prepare [build-dir]
# copies the shared libraries the GPU image lacks (cmocka, libuv) into
# <build-dir>/carried-libs. The GPU image has libjansson 4 and libcrypto 3.
set -u

if [ "${1:-}" = "--prepare" ]; then
    build=${2:-build-cuda}
    mkdir -p "$build/carried-libs"
    for lib in libcmocka.so.0 libuv.so.1; do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
        if [ -n "$path" ]; then
            cp -L "$path" "$build/carried-libs/$lib"
            echo "carried $lib from $path"
        else
            echo "warning: $lib not found here" >&2
        fi
    done
    exit 0
fi

build=${1:-build-cuda}
steps=${2:-ctest,examples,bench,fatbins,sanitize}
root=$PWD
OUT=${OUT:-$root/gpu-check-out}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
has_step() { case ",$steps," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

if [ ! -f "$build/CMakeCache.txt" ]; then
    note "no build folder $build (carry it)"
    exit 2
fi
export LD_LIBRARY_PATH="$root/$build/carried-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The build recorded absolute paths (ctest files, artifact directories,
# test fixtures). Where the checkout lives elsewhere, make the recorded
# source path point here.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ]; then
    if [ ! -e "$src" ]; then
        mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
        note "linked $src -> $root (paths recorded at build time)"
    elif [ "$(cd "$src" && pwd -P)" != "$(pwd -P)" ]; then
        note "warning: $src exists and is not this checkout; recorded paths may point elsewhere"
    fi
fi
bdir=${src:-$root}/$build
export MOX_ARTIFACT_ROOT=$bdir/mox-artifacts

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
    echo "compute-sanitizer: $(command -v compute-sanitizer || echo missing)"
    echo "ctest: $(command -v ctest || echo missing)"
    echo "missing libraries:"
    for b in "$bdir"/tests/cuda/test_cuda_graph "$bdir"/tests/conformance/conf_device "$bdir"/bench/cuda_overhead; do
        [ -x "$b" ] && ldd "$b" | grep "not found"
    done
    echo "(end)"
} >>"$summary" 2>&1

status=0

if has_step ctest; then
    if command -v ctest >/dev/null; then
        (cd "$bdir" && timeout 200 ctest -L cuda --output-on-failure --timeout 100 -j "${GPU_CHECK_JOBS:-6}") \
            >"$OUT/ctest-cuda.txt" 2>&1
        rc=$?
    else
        # No ctest: run the registered CUDA programs directly.
        rc=0
        for t in "$bdir"/tests/cuda/test_cuda_* "$bdir"/tests/conformance/conf_*; do
            [ -x "$t" ] || continue
            echo "== $t"
            MOX_BACKEND=cuda timeout 100 "$t" || rc=1
        done >"$OUT/ctest-cuda.txt" 2>&1
    fi
    note "ctest -L cuda: rc=$rc ($(grep -E 'tests passed|tests failed' "$OUT/ctest-cuda.txt" | tail -1))"
    [ $rc -eq 0 ] || status=1
fi

if has_step examples; then
    : >"$OUT/examples.txt"
    for ex in pipeline vec-add; do
        exe=$(find "$bdir/examples/$ex" -maxdepth 1 -type f -perm -u+x -name '*example*' 2>/dev/null | head -1)
        if [ -z "$exe" ]; then
            note "example $ex: not built"
            continue
        fi
        (cd "$bdir/examples/$ex" && MOX_BACKEND=cuda timeout 60 "$exe") >>"$OUT/examples.txt" 2>&1
        rc=$?
        note "example $ex (MOX_BACKEND=cuda): rc=$rc"
        [ $rc -eq 0 ] || status=1
    done
fi

if has_step bench; then
    if [ -x "$bdir/bench/cuda_overhead" ]; then
        (cd "$bdir/bench" && MOX_CUDA_STATS=1 timeout 150 ./cuda_overhead "$OUT/cuda_overhead.json") >"$OUT/cuda_overhead.txt" 2>&1
        rc=$?
        note "bench cuda_overhead: rc=$rc"
        [ $rc -eq 0 ] || status=1
    else
        note "bench cuda_overhead: not built"
    fi
fi

if has_step fatbins; then
    # What moxc put in each artifact's fatbin: sm_90 SASS and PTX.
    : >"$OUT/fatbins.txt"
    if command -v cuobjdump >/dev/null; then
        for f in "$bdir"/mox-artifacts/*/kernels.fatbin; do
            [ -f "$f" ] || continue
            module=$(sed -n 's/^ *"module": *"\([^"]*\)".*/\1/p' "$(dirname "$f")/manifest.json" | head -1)
            { echo "== $module $(basename "$(dirname "$f")")"; cuobjdump --list-elf --list-ptx "$f" 2>&1; } >>"$OUT/fatbins.txt"
        done
        elf=$(grep -c 'ELF file.*sm_90' "$OUT/fatbins.txt")
        ptx=$(grep -c 'PTX file' "$OUT/fatbins.txt")
        note "fatbins: $(grep -c '^== ' "$OUT/fatbins.txt") artifacts, $elf sm_90 entries, $ptx PTX entries"
    else
        note "cuobjdump: not on this machine"
    fi
fi

if has_step sanitize; then
    if command -v compute-sanitizer >/dev/null; then
        # Every (tool, program) pair at once: they are independent processes,
        # each with its own context, and the sanitizers are slow.
        logs=$(mktemp -d)
        for tool in memcheck racecheck; do
            for t in "$bdir"/tests/conformance/conf_*; do
                [ -x "$t" ] || continue
                echo "$tool $t"
            done
        done | xargs -P "${GPU_CHECK_JOBS:-12}" -L 1 sh -c '
            log="$0/$1-$(basename "$2").log"
            MOX_BACKEND=cuda timeout "${GPU_CHECK_SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool "$1" --error-exitcode 99 \
                --print-limit 20 "$2" >"$log" 2>&1
            echo "== rc=$?" >>"$log"' "$logs"
        : >"$OUT/sanitizer.txt"
        for tool in memcheck racecheck; do
            fails=0
            for log in "$logs/$tool"-*.log; do
                [ -f "$log" ] || continue
                { echo "==== $(basename "$log" .log)"; cat "$log"; } >>"$OUT/sanitizer.txt"
                grep -q '^== rc=0$' "$log" || fails=$((fails + 1))
            done
            note "compute-sanitizer --tool $tool on the conformance suite: $fails program(s) failed"
            [ $fails -eq 0 ] || status=1
        done
        rm -rf "$logs"
    else
        note "compute-sanitizer: not on this machine"
    fi
fi

note "gpu-check: status=$status"
exit $status
