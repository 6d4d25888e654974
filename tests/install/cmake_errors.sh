#!/usr/bin/env bash
# cmake_errors.sh PREFIX WORK - every configure-time error of mox_add_kernels
# and mox_install_kernels (docs/errors.md "CMake functions"), each in a
# one-line project against the mox installed in PREFIX: configuring must
# fail with that message.
set -euo pipefail
prefix="$1" work="$2"
fail() { echo "cmake_errors: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
printf 'void use(void);\nvoid use(void) {}\n' >"$work/a.c"

n=0
expect_error() { # $1: the message; $2: CMake lines after find_package(mox)
  n=$((n + 1))
  local dir="$work/p$n"
  mkdir -p "$dir"
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(p C)\nfind_package(mox REQUIRED)\nadd_library(t STATIC %s/a.c)\n%s\n' \
    "$work" "$2" >"$dir/CMakeLists.txt"
  local out
  if out="$(cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" -DMOX_NVCC= 2>&1)"; then
    fail "configuring with '$2' succeeded"
  fi
  grep -qF -- "$1" <<<"$out" || fail "configuring with '$2' did not say '$1':"$'\n'"$out"
}

expect_error "mox_add_kernels(t): NAME is required" "mox_add_kernels(t SOURCES a.c)"
expect_error "mox_add_kernels(t): NAME '9lives' is not a C identifier" "mox_add_kernels(t NAME 9lives SOURCES a.c)"
expect_error "mox_add_kernels(t): SOURCES is required" "mox_add_kernels(t NAME k)"
expect_error "mox_add_kernels(t): unexpected arguments: EXTRA" "mox_add_kernels(t EXTRA NAME k SOURCES a.c)"
expect_error "mox_add_kernels: nosuch is not a target" "mox_add_kernels(nosuch NAME k SOURCES a.c)"
expect_error "mox_add_kernels(t): source 'FOO' does not exist" "mox_add_kernels(t NAME k SOURCES $work/a.c FOO bar)"
expect_error "mox_install_kernels(t): t has no kernels (call mox_add_kernels first)" "mox_install_kernels(t)"
expect_error "mox_install_kernels: nosuch is not a target" "mox_install_kernels(nosuch)"
expect_error "mox_install_kernels(t): unexpected arguments: EXTRA" \
  "mox_add_kernels(t NAME k SOURCES $work/a.c)"$'\n'"mox_install_kernels(t EXTRA)"
echo "cmake_errors: $n misuses refused with their messages"
