#!/usr/bin/env bash
# cmake_nvcc.sh PREFIX WORK CC - where the mox package (MoxCuda.cmake)
# looks for nvcc, as docs/install.md says: /usr/local/cuda/bin,
# $CUDA_HOME/bin, then PATH, and nowhere else (not CMAKE_PREFIX_PATH, not
# /usr/local/bin when it is not on PATH); -DMOX_NVCC= turns it off with its
# own message. A fake nvcc stands in; the real CUDA folders are ignored.
set -euo pipefail
prefix="$1" work="$2" cc="$3"
fail() { echo "cmake_nvcc: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/src" "$work/elsewhere/bin" "$work/cuda/bin"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(p C)\nfind_package(mox REQUIRED)\n' >"$work/src/CMakeLists.txt"
for dir in "$work/elsewhere/bin" "$work/cuda/bin"; do
  printf '#!/bin/sh\necho "fake nvcc, release 13.0"\n' >"$dir/nvcc"
  chmod +x "$dir/nvcc"
done
# Every folder with a real nvcc is ignored, so only the fakes can be found.
ignore="/usr/local/cuda/bin"
for dir in /usr/local/cuda-*/bin ${CUDA_HOME:+"$CUDA_HOME/bin"} $(tr ':' ' ' <<<"$PATH"); do
  if [ -x "$dir/nvcc" ]; then ignore="$ignore;$dir"; fi
done

n=0
configure() { # $1: the message expected; the rest: env settings and cmake arguments
  n=$((n + 1))
  local want="$1" out
  shift
  local envs=() args=()
  for a in "$@"; do
    case "$a" in -D*) args+=("$a") ;; *) envs+=("$a") ;; esac
  done
  out="$(env -u CUDA_HOME "${envs[@]}" cmake -S "$work/src" -B "$work/b$n" -DCMAKE_C_COMPILER="$cc" \
    "-DCMAKE_IGNORE_PATH=$ignore" "${args[@]}" 2>&1)" || fail "configure $n failed:"$'\n'"$out"
  grep -qF -- "$want" <<<"$out" || fail "configure $n ($*) did not say '$want':"$'\n'"$out"
}
# In a CMAKE_PREFIX_PATH folder, which CMake's find_program would search:
# not found.
configure "-- mox: nvcc not found (in /usr/local/cuda/bin, \$CUDA_HOME/bin, PATH)" \
  "-DCMAKE_PREFIX_PATH=$prefix;$work/elsewhere"
# In PATH, and in $CUDA_HOME/bin (searched before PATH): found.
configure "-- mox: nvcc found at $work/elsewhere/bin/nvcc" "PATH=$work/elsewhere/bin:$PATH" "-DCMAKE_PREFIX_PATH=$prefix"
configure "-- mox: nvcc found at $work/cuda/bin/nvcc" "CUDA_HOME=$work/cuda" "PATH=$work/elsewhere/bin:$PATH" \
  "-DCMAKE_PREFIX_PATH=$prefix"
# Off, although one is on PATH.
configure "-- mox: nvcc disabled (MOX_NVCC is empty); kernels build for the CPU only" \
  "PATH=$work/elsewhere/bin:$PATH" "-DCMAKE_PREFIX_PATH=$prefix" "-DMOX_NVCC="
# A path that is not a file: refused at configure time, not at build time.
n=$((n + 1))
if out="$(env -u CUDA_HOME cmake -S "$work/src" -B "$work/b$n" -DCMAKE_C_COMPILER="$cc" \
  "-DCMAKE_PREFIX_PATH=$prefix" -DMOX_NVCC=/nonexistent/nvcc 2>&1)"; then
  fail "configuring with MOX_NVCC=/nonexistent/nvcc succeeded"
fi
grep -qF "mox: MOX_NVCC is '/nonexistent/nvcc', which is not a file" <<<"$out" ||
  fail "MOX_NVCC=/nonexistent/nvcc: no error message:"$'\n'"$out"
echo "cmake_nvcc: $n configurations found nvcc where docs/install.md says, and only there"
