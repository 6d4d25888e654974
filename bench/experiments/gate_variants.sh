#!/usr/bin/env bash
# gate_variants.sh - the gated CUDA entries of vec-add, reduction and scan
# (examples/) as moxc generates them, against header variants, timed alone
# by gate_variants_harness.c (docs/kernel-language.md, "The deferred gate
# check"):
#   ungated  mox_entry_K__ungated         (MOXC_GATE_DEFER=0)
#   entry    mox_entry_K, the check at entry (general entry, MOXC_GATE_DEFER=0)
#   gate1    mox_entry_K__gate1: the check at entry of one dependency (what the
#            runtime launches for such gates)
#   deferred MOXC_GATE_DEFER=1 (every eligible kernel), as shipped: the kernels carry
#            MOX_KFEAT_GATE_DEFERRED and their entries ask nothing at the
#            end, so with n = 0 behind a failed dependency the harness's
#            entry alone leaves its word OK ("WRONG" below is expected: the
#            runtime derives GATED, docs/cuda-backend.md "Deferred dispatches")
#   askend   deferred as an entry without the bit: thread 0 of each block
#            that reached no guard asks at the end (what shipped before)
#   askall   askend, with every thread that reached no guard asking
#   gate1d   mox_entry_K__gate1 of the deferred build: the deferred copy
#            reading the one inline dependency at its guards
#            (mox__gate_view_of_one); only kernels whose first guard comes
#            after a barrier or warp operation have it (reduce, block_scan)
#   gate1p   gate1d with the status word prefetched into L1 at entry
#            (prefetch.global.L1 in mox__gate_view_of_one), so that the
#            guards after the barrier hit L1 (reduce, block_scan)
# By default moxc defers kernels whose first guard comes before any
# barrier or warp operation (vec-add, add-offsets: the deferred row) and
# those whose guards after one are each one thread's (the reduction: the
# deferred row, and gate1d for gates of one dependency); the block scan
# keeps the check at entry, whose runtime choice for a gate of one
# dependency is the gate1 row.
#   build here:  bench/experiments/gate_variants.sh build BUILD OUTDIR   (moxc from BUILD, nvcc)
#   run there:   bench/experiments/gate_variants.sh run OUTDIR           (on the GPU machine)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ "${1:-}" = build ]; then
    build=$2 out=$3
    nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
    mkdir -p "$out/cubin"
    flags="-cubin -x cu -std=c++17 -O3 -fmad=false -prec-div=true -prec-sqrt=true -ftz=false -gencode arch=compute_90,code=sm_90"
    rm -rf "$out/inc_askall" && cp -r "$root/include" "$out/inc_askall"
    python3 - "$out" <<'P'
import sys
end = ('    if ((v->answer == MOX__GATE_UNASKED || v->answer == MOX__GATE_UNASKED_ONE) && mox__linear() == 0u)\n'
       '        (void)mox__gate_bad(v);')
p = '%s/inc_askall/mox/kernel_cuda_gate.h' % sys.argv[1]
s = open(p).read()
assert end in s, 'mox__gate_leave_deferred changed: update gate_variants.sh'
open(p, 'w').write(s.replace(end, '    if (v->answer == MOX__GATE_UNASKED || v->answer == MOX__GATE_UNASKED_ONE)\n'
                                  '        (void)mox__gate_bad(v);'))
P
    rm -rf "$out/inc_prefetch" && cp -r "$root/include" "$out/inc_prefetch"
    python3 - "$out" <<'P'
import sys
view = '    mox__gate_view v = {g, MOX__GATE_UNASKED_ONE};'
p = '%s/inc_prefetch/mox/kernel_cuda_gate.h' % sys.argv[1]
s = open(p).read()
assert view in s, 'mox__gate_view_of_one changed: update gate_variants.sh'
open(p, 'w').write(s.replace(view, '    asm volatile("prefetch.global.L1 [%0];" ::"l"(&g->status[2u * g->inline_deps[0]]));\n' + view))
P
    ask='s/mox__gate_leave_deferred(&mox__gv, MOX_KFEAT_GATE_DEFERRED);/mox__gate_leave_deferred(\&mox__gv, 0u);/'
    for k in vec-add/kernels/vec_add.c reduction/kernels/reduce.c cooperation/kernels/scan.c; do
        b=$(basename "$k" .c)
        MOXC_GATE_DEFER=0 "$build/bin/moxc" inspect --emit cuda "$root/examples/$k" >"$out/${b}_entry.cu"
        MOXC_GATE_DEFER=1 "$build/bin/moxc" inspect --emit cuda "$root/examples/$k" >"$out/${b}_deferred.cu"
        sed "$ask" "$out/${b}_deferred.cu" >"$out/${b}_askend.cu"
        grep -q 'mox__gate_leave_deferred(&mox__gv, 0u);' "$out/${b}_askend.cu" ||
            { echo "no deferred entry's end in ${b}_deferred.cu: update gate_variants.sh" >&2; exit 1; }
        "$nvcc" $flags -I"$root/include" -o "$out/cubin/${b}_entry.cubin" "$out/${b}_entry.cu"
        "$nvcc" $flags -I"$root/include" -o "$out/cubin/${b}_deferred.cubin" "$out/${b}_deferred.cu"
        "$nvcc" $flags -I"$root/include" -o "$out/cubin/${b}_askend.cubin" "$out/${b}_askend.cu"
        "$nvcc" $flags -I"$out/inc_askall" -o "$out/cubin/${b}_askall.cubin" "$out/${b}_askend.cu"
        "$nvcc" $flags -I"$out/inc_prefetch" -o "$out/cubin/${b}_prefetch.cubin" "$out/${b}_deferred.cu"
    done
    cc -O2 -std=c11 -I"$(dirname "$nvcc")/../include" "$here/gate_variants_harness.c" -o "$out/harness" \
        -L"$(dirname "$nvcc")/../lib64/stubs" -lcuda
    echo "built $out"
    exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 build BUILD OUTDIR | run OUTDIR" >&2; exit 2; }
out=$2 C=$2/cubin
set_for() { # file entry kind [gate1d]
    local f=$1 e=$2 kd=$3 L=""
    L="$L ${e}_ungated=$C/${f}_entry.cubin:mox_entry_${e}__ungated:$kd:0"
    L="$L ${e}_entry=$C/${f}_entry.cubin:mox_entry_${e}:$kd:1"
    L="$L ${e}_gate1=$C/${f}_entry.cubin:mox_entry_${e}__gate1:$kd:1"
    for v in deferred askend askall; do L="$L ${e}_$v=$C/${f}_$v.cubin:mox_entry_${e}:$kd:1"; done
    [ -z "${4:-}" ] || L="$L ${e}_gate1d=$C/${f}_deferred.cubin:mox_entry_${e}__gate1:$kd:1"
    [ -z "${4:-}" ] || L="$L ${e}_gate1p=$C/${f}_prefetch.cubin:mox_entry_${e}__gate1:$kd:1"
    echo "$L"
}
for rep in 1 2; do
    echo "== round $rep"
    "$out/harness" $(set_for vec_add vec_add vadd)
    "$out/harness" $(set_for reduce reduce reduce gate1d)
    "$out/harness" $(set_for scan block_scan scan0 gate1d)
    "$out/harness" $(set_for scan add_offsets reduce)
done
