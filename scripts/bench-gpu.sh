#!/usr/bin/env bash
# scripts/bench-gpu.sh - the benchmark run on the GPU machine, from the
# repository root, with a build folder built elsewhere and carried along
# (docs/performance.md). Each step runs on its own, so one failure does not
# lose the others; the summary says what ran and how it ended:
#   1. mox_bench (kernel quality, runtime overhead, pipeline) on MOX_BACKEND=cuda
#   2. the peers: bench/peers/pipeline_torch.py and pipeline_cupy.py
#   3. bench/cuda_overhead (the CUDA engineer's: mox vs raw streams/graphs)
#   4. mox_bench --suite cpu: the CPU backend vs plain C on this machine's cores
#   5. bench/peers/merge.py: one JSON with everything, the peers' ratios
#   6. bench/plot.py: PNG charts
#   pdl (only when named): programmatic dependent launch against the
#      default: bench/cuda_overhead and mox_bench --suite overhead,pipeline
#      (plus the workloads' pipelined and single cases) with MOX_CUDA_PDL=start
#      and =end, their JSON and tables in <date>-h200-pdl.tar.gz; compare
#      with the runner and overhead steps of the same run
#   workloads (only when named): the public-sample ports' CUDA checks
#      (wl_test) and mox_bench --suite workloads (mox vs raw streams, ports
#      vs originals), into <date>-h200-workloads.json, its charts in
#      <date>-h200-workloads-plots.tar.gz and <date>-h200-workloads-ratio.png
# Results in $OUT (at most 8 files, as the device tool returns them), named
# for bench/results/: <date>-h200.json, <date>-h200-cpu.json (the CPU
# suite alone), <date>-h200.md (tables),
# <date>-h200-plots.tar.gz, <date>-h200-quality-ratio.png,
# <date>-h200-pipeline-peers.png, <date>-h200-log.txt, <date>-h200-summary.txt.
#
# Usage: scripts/bench-gpu.sh [build-dir] [steps]
#   build-dir  default build-cuda (any build of this tree with nvcc found)
#   steps      comma list of: runner,peers,overhead,cpu,merge,plots (default all),
#              and workloads, pdl (not in the default)
# mox_bench runs with MOX_CUDA_STATS=1: the log keeps the backend's counters
# of each run (how its waits went, launches, instantiations...).
# MOX_BENCH_ARGS adds arguments to mox_bench (e.g. "--samples 30"),
# MOX_BENCH_ARGS_WORKLOADS to its workloads run,
# MOX_BENCH_ARGS_CPU to its CPU-suite run (default "--samples 10 --warmup 1":
# five thread counts on 16 cores must fit the time left).
# Before carrying, where the build folder was built:
#   scripts/bench-gpu.sh --prepare [build-dir]
# builds mox_bench, cuda_overhead and the reference kernels and copies
# libgomp (OpenMP of the CPU-side checks) into <build-dir>/bench-libs,
# used on the GPU machine only if its image lacks it.
set -u

if [ "${1:-}" = "--prepare" ]; then
    build=${2:-build-cuda}
    cmake --build "$build" --target mox_bench -j"${JOBS:-2}" || exit 1
    cmake --build "$build" --target cuda_overhead -j"${JOBS:-2}" ||
        echo "warning: cuda_overhead did not build (its step will be skipped)" >&2
    cmake --build "$build" --target wl_test -j"${JOBS:-2}" ||
        echo "warning: wl_test did not build (the workloads step will skip the port checks)" >&2
    [ -f "$build/bench/kernels_ref/vec_add.fatbin" ] ||
        { echo "error: no reference fatbins (nvcc was not found when $build was configured)" >&2; exit 1; }
    ls "$build"/bench/workloads/originals/*.fatbin >/dev/null 2>&1 ||
        echo "warning: no original-kernel fatbins (the workloads step will time the ports alone)" >&2
    mkdir -p "$build/bench-libs"
    for lib in libgomp.so.1; do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
        if [ -n "$path" ]; then
            cp -L "$path" "$build/bench-libs/$lib" && echo "carried $lib from $path"
        fi
    done
    echo "prepared $build: carry it, then run scripts/bench-gpu.sh $build on the GPU machine"
    exit 0
fi

build=${1:-build-cuda}
steps=${2:-runner,peers,overhead,cpu,merge,plots}
root=$PWD
OUT=${OUT:-$root/bench-gpu-out}
mkdir -p "$OUT"
stamp=$(date -u +%Y-%m-%d)
tag="$stamp-h200"
work=$(mktemp -d)
log=$OUT/$tag-log.txt
summary=$OUT/$tag-summary.txt
: >"$log"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
has_step() { case ",$steps," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
# The device tool stops a command after 600 s: every step's limit is cut to
# what is left of BENCH_GPU_BUDGET seconds, so the last steps still run.
deadline=$((SECONDS + ${BENCH_GPU_BUDGET:-560}))
# run_step NAME TIMEOUT COMMAND...: runs one step, its output into the log,
# and notes its exit status (124: it ran out of time).
run_step() {
    local name=$1 limit=$2
    shift 2
    local left=$((deadline - SECONDS))
    [ "$limit" -le "$left" ] || limit=$left
    if [ "$limit" -le 5 ]; then
        note "$name: skipped, no time left"
        return 124
    fi
    echo "==== $name: $*" >>"$log"
    local t0=$SECONDS
    timeout "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    note "$name: rc=$rc ($((SECONDS - t0)) s)"
    return $rc
}

if [ ! -f "$build/CMakeCache.txt" ]; then
    note "no build folder $build (run scripts/bench-gpu.sh --prepare $build here first, then carry it)"
    exit 2
fi

# The build recorded absolute paths (artifact directories, the reference
# fatbins' folder); where the checkout lives elsewhere now, point the
# recorded source path here, and name the folders explicitly as well.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src" && note "linked $src -> $root"
fi
bdir=$root/$build
export MOX_ARTIFACT_ROOT=$bdir/mox-artifacts
export MOX_BENCH_REF_DIR=$bdir/bench/kernels_ref
export MOX_WORKLOADS_ORIG_DIR=$bdir/bench/workloads/originals
export PYTHONUNBUFFERED=1
runner=$bdir/bench/mox_bench
if [ -x "$runner" ] && ldd "$runner" | grep -q "libgomp.*not found"; then
    export LD_LIBRARY_PATH="$bdir/bench-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    note "using the carried libgomp"
fi
# The commit the run measures: git here if the checkout has it, else what
# the build recorded (mox_bench falls back to it by itself).
if git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
    export MOX_BENCH_GIT_COMMIT=$(git -C "$root" rev-parse HEAD)
    [ -z "$(git -C "$root" status --porcelain --untracked-files=no)" ] && export MOX_BENCH_GIT_DIRTY=0 ||
        export MOX_BENCH_GIT_DIRTY=1
fi

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r), $(nproc) cores"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,power.draw \
        --format=csv 2>&1
    echo "python3: $(command -v python3 || echo missing)"
    [ -x "$runner" ] && { echo "missing libraries of mox_bench:"; ldd "$runner" | grep "not found"; echo "(end)"; }
} >>"$summary" 2>&1
cat "$summary"

status=0
md=$OUT/$tag.md
: >"$md"

if has_step runner; then
    if [ -x "$runner" ]; then
        # Every case on the CUDA device; MOX_BACKEND=cuda so a missing GPU
        # is an error instead of a quiet CPU run.
        run_step "mox_bench" 300 env MOX_BACKEND=cuda MOX_CUDA_STATS=1 "$runner" ${MOX_BENCH_ARGS:-} --json "$work/mox_bench.json" \
            --md "$work/mox_bench.md" || status=1
        [ -f "$work/mox_bench.md" ] && { echo "## mox_bench"; echo; cat "$work/mox_bench.md"; echo; } >>"$md"
        # Kept in $OUT at once: a later step that runs out of time loses nothing.
        [ -f "$work/mox_bench.json" ] && cp "$work/mox_bench.json" "$OUT/$tag.json"
    else
        note "mox_bench: not built in $build"
        status=1
    fi
fi

if has_step peers; then
    for peer in torch cupy; do
        run_step "peer $peer" 75 python3 "$root/bench/peers/pipeline_$peer.py" --out "$work/peer-$peer.json"
        rc=$?
        [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
    done
fi

if has_step overhead; then
    if [ -x "$bdir/bench/cuda_overhead" ]; then
        (cd "$bdir/bench" && run_step "cuda_overhead" 120 ./cuda_overhead "$work/cuda_overhead.json") || status=1
    else
        note "cuda_overhead: not built in $build"
    fi
fi

if has_step cpu && [ -x "$runner" ]; then
    # A process of its own: if it runs out of time, the GPU results stand.
    run_step "mox_bench cpu suite" 150 env MOX_BACKEND=cpu "$runner" --suite cpu ${MOX_BENCH_ARGS_CPU:---samples 10 --warmup 1} \
        --json "$work/cpu.json" --md "$work/cpu.md" || status=1
    [ -f "$work/cpu.md" ] && { echo "## CPU backend vs plain C ($(nproc) cores)"; echo; cat "$work/cpu.md"; echo; } >>"$md"
    # Kept on its own too: a run of just this step (steps=cpu) has no merge.
    [ -f "$work/cpu.json" ] && cp "$work/cpu.json" "$OUT/$tag-cpu.json"
fi

if has_step workloads; then
    wl_test=$bdir/bench/workloads/wl_test
    if [ -x "$wl_test" ]; then
        for port in $("$wl_test" 2>&1 | sed -n 's/.*(one of: *\(.*\))$/\1/p'); do
            run_step "wl_test $port (cuda)" 60 env MOX_BACKEND=cuda "$wl_test" "$port" || status=1
        done
    else
        note "wl_test: not built in $build"
    fi
    if [ -x "$runner" ]; then
        run_step "mox_bench workloads" 420 env MOX_BACKEND=cuda MOX_CUDA_STATS=1 "$runner" --suite workloads \
            ${MOX_BENCH_ARGS_WORKLOADS:-} --json "$work/workloads.json" --md "$work/workloads.md" || status=1
        [ -f "$work/workloads.md" ] && { echo "## workloads"; echo; cat "$work/workloads.md"; echo; } >>"$md"
        if [ -f "$work/workloads.json" ]; then
            cp "$work/workloads.json" "$OUT/$tag-workloads.json"
            mkdir -p "$work/wl-plots"
            run_step "workloads plots" 60 python3 "$root/bench/plot.py" --check --out "$work/wl-plots" \
                "$work/workloads.json" || status=1
            if ls "$work/wl-plots"/*.png >/dev/null 2>&1; then
                tar -C "$work/wl-plots" -czf "$OUT/$tag-workloads-plots.tar.gz" .
                [ -f "$work/wl-plots/workloads-ratio.png" ] &&
                    cp "$work/wl-plots/workloads-ratio.png" "$OUT/$tag-workloads-ratio.png"
            fi
        fi
    else
        note "mox_bench: not built in $build"
        status=1
    fi
fi

if has_step pdl; then
    for m in start end; do
        if [ -x "$bdir/bench/cuda_overhead" ]; then
            (cd "$bdir/bench" && run_step "cuda_overhead MOX_CUDA_PDL=$m" 120 env MOX_CUDA_PDL=$m ./cuda_overhead \
                "$work/pdl-$m-cuda_overhead.json") || status=1
        fi
        if [ -x "$runner" ]; then
            run_step "mox_bench overhead,pipeline MOX_CUDA_PDL=$m" 200 env MOX_BACKEND=cuda MOX_CUDA_PDL=$m \
                "$runner" --suite overhead,pipeline ${MOX_BENCH_ARGS:-} --json "$work/pdl-$m.json" \
                --md "$work/pdl-$m.md" || status=1
            run_step "mox_bench workloads MOX_CUDA_PDL=$m" 200 env MOX_BACKEND=cuda MOX_CUDA_PDL=$m MOX_CUDA_STATS=1 \
                "$runner" --suite workloads --filter .pipelined ${MOX_BENCH_ARGS_WORKLOADS:-} \
                --json "$work/pdl-$m-workloads.json" --md "$work/pdl-$m-workloads.md" || status=1
            [ -f "$work/pdl-$m.md" ] && { echo "## MOX_CUDA_PDL=$m"; echo; cat "$work/pdl-$m.md"; echo; } >>"$md"
        fi
    done
    (cd "$work" && ls pdl-* >/dev/null 2>&1 && tar -czf "$OUT/$tag-pdl.tar.gz" pdl-*)
fi

final=$OUT/$tag.json
if has_step merge && [ -f "$work/mox_bench.json" ]; then
    peers=()
    for f in "$work"/peer-*.json; do [ -f "$f" ] && peers+=(--peer "$f"); done
    co=()
    [ -f "$work/cuda_overhead.json" ] && co=(--cuda-overhead "$work/cuda_overhead.json")
    [ -f "$work/cpu.json" ] && co+=(--extra "$work/cpu.json")
    if run_step "merge" 30 python3 "$root/bench/peers/merge.py" --runner "$work/mox_bench.json" \
        "${peers[@]}" "${co[@]}" --out "$work/merged.json" && mv "$work/merged.json" "$final"; then
        { echo "## peers (ratio = peer median / mox median; > 1: mox is faster)"; echo;
          python3 "$root/bench/peers/merge.py" --runner "$work/mox_bench.json" "${peers[@]}" --out "$work/again.json"; } >>"$md"
    else
        status=1
    fi
fi

if has_step plots && [ -f "$final" ]; then
    mkdir -p "$work/plots"
    run_step "plots" 60 python3 "$root/bench/plot.py" --check --out "$work/plots" "$final" || status=1
    if ls "$work/plots"/*.png >/dev/null 2>&1; then
        tar -C "$work/plots" -czf "$OUT/$tag-plots.tar.gz" . && note "plots: $(ls "$work/plots" | tr '\n' ' ')"
        for p in quality-ratio pipeline-peers; do
            [ -f "$work/plots/$p.png" ] && cp "$work/plots/$p.png" "$OUT/$tag-$p.png"
        done
    fi
fi

[ -f "$work/cuda_overhead.json" ] || note "no cuda_overhead JSON"
cat "$md"
note "bench-gpu: status=$status; files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
rm -rf "$work"
exit $status
