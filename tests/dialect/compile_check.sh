#!/bin/sh
# compile_check.sh MODE COMPILER INCLUDE_DIR SOURCE OUT_DIR
# cuda: nvcc compiles SOURCE as CUDA C++ for sm_90 with mox's numerics flags.
# moxc: clang parses SOURCE as C11 with __MOXC__ and must report the
#       annotate attributes moxc relies on.
# Exits 77 (skip) when COMPILER is empty or missing.
mode=$1 cc=$2 inc=$3 src=$4 out=$5
if [ -z "$cc" ] || ! command -v "$cc" >/dev/null 2>&1; then
    echo "compiler for '$mode' not found: skipping"
    exit 77
fi
set -e
case "$mode" in
cuda)
    "$cc" -x cu -std=c++17 -arch=sm_90 -fmad=false -prec-div=true -prec-sqrt=true \
        -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
        -I"$inc" -I"$(dirname "$src")" -c "$src" -o "$out/cuda_intrinsics.o"
    echo "nvcc: ok"
    ;;
moxc)
    "$cc" -x c -std=c11 -D__MOXC__ -Wall -Wextra -Werror -I"$inc" -I"$(dirname "$src")" \
        -fsyntax-only -Xclang -ast-dump "$src" >"$out/moxc_ast.txt"
    for want in '"mox_kernel"' '"mox_block:256,1,1"' '"mox_block:128,1,1"' '"mox_shared"'; do
        if ! grep -q "AnnotateAttr.*$want" "$out/moxc_ast.txt"; then
            echo "missing annotation $want"
            exit 1
        fi
    done
    # Intrinsics are declarations only: no bodies for the front end to walk.
    if grep -q "FunctionDecl.*mox_warp_sum_f32.*$" "$out/moxc_ast.txt" &&
        grep -A1 "FunctionDecl.*mox_warp_sum_f32" "$out/moxc_ast.txt" | grep -q CompoundStmt; then
        echo "mox_warp_sum_f32 has a body in __MOXC__ mode"
        exit 1
    fi
    echo "moxc mode: ok"
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
