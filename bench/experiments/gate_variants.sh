#!/usr/bin/env bash
# gate_variants.sh - the gated CUDA entries of vec-add, reduction and scan
# (examples/) as moxc generates them, against header variants, timed alone
# by gate_variants_harness.c (docs/kernel-language.md, "The deferred gate
# check"):
#   ungated  mox_entry_K__ungated         entry    the check at entry (default)
#   deferred MOXC_GATE_DEFER=1, as shipped
#   askall   deferred, every thread that reached no guard asks at the end
#   noend    deferred without the end's question (NOT correct: a dispatch
#            whose threads reach no guard stays OK behind a failed dependency;
#            the harness's n = 0 check shows it)
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
    for v in askall noend; do
        rm -rf "$out/inc_$v" && cp -r "$root/include" "$out/inc_$v"
    done
    python3 - "$out" <<'P'
import sys
end = '    if (v->answer == MOX__GATE_UNASKED && mox__linear() == 0u) (void)mox__gate_bad(v);'
for v, new in (('askall', '    if (v->answer == MOX__GATE_UNASKED) (void)mox__gate_bad(v);'), ('noend', '    (void)v;')):
    p = '%s/inc_%s/mox/kernel_cuda_gate.h' % (sys.argv[1], v)
    s = open(p).read()
    assert end in s, 'mox__gate_leave_deferred changed: update gate_variants.sh'
    open(p, 'w').write(s.replace(end, new))
P
    for k in vec-add/kernels/vec_add.c reduction/kernels/reduce.c cooperation/kernels/scan.c; do
        b=$(basename "$k" .c)
        "$build/bin/moxc" inspect --emit cuda "$root/examples/$k" >"$out/${b}_entry.cu"
        MOXC_GATE_DEFER=1 "$build/bin/moxc" inspect --emit cuda "$root/examples/$k" >"$out/${b}_deferred.cu"
        "$nvcc" $flags -I"$root/include" -o "$out/cubin/${b}_entry.cubin" "$out/${b}_entry.cu"
        "$nvcc" $flags -I"$root/include" -o "$out/cubin/${b}_deferred.cubin" "$out/${b}_deferred.cu"
        for v in askall noend; do
            "$nvcc" $flags -I"$out/inc_$v" -o "$out/cubin/${b}_$v.cubin" "$out/${b}_deferred.cu"
        done
    done
    cc -O2 -std=c11 -I"$(dirname "$nvcc")/../include" "$here/gate_variants_harness.c" -o "$out/harness" \
        -L"$(dirname "$nvcc")/../lib64/stubs" -lcuda
    echo "built $out"
    exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 build BUILD OUTDIR | run OUTDIR" >&2; exit 2; }
out=$2 C=$2/cubin
set_for() { # file entry kind
    local f=$1 e=$2 kd=$3 L=""
    L="$L ${e}_ungated=$C/${f}_entry.cubin:mox_entry_${e}__ungated:$kd:0"
    L="$L ${e}_entry=$C/${f}_entry.cubin:mox_entry_${e}:$kd:1"
    for v in deferred askall noend; do L="$L ${e}_$v=$C/${f}_$v.cubin:mox_entry_${e}:$kd:1"; done
    echo "$L"
}
for rep in 1 2; do
    echo "== round $rep"
    "$out/harness" $(set_for vec_add vec_add vadd)
    "$out/harness" $(set_for reduce reduce reduce)
    "$out/harness" $(set_for scan block_scan scan0)
    "$out/harness" $(set_for scan add_offsets reduce)
done
