#!/usr/bin/env bash
# cmake_package.sh MODE MOX CONSUMER KERNELS WORK CC - the consumer project
# (tests/moxc/cmake_consumer) with mox_add_kernels, where MODE is
#   installed   MOX is the prefix of an installed mox (find_package(mox));
#   subproject  MOX is mox's source tree (add_subdirectory).
# Configures, builds and runs the program; deploys it twice - `cmake
# --install` (mox_install_kernels) into a prefix, and a copy of the program
# with `moxc deploy` next to it - then deletes the build's artifact cache and
# runs both deployed programs, which must find their artifacts relative to
# themselves (and the program in the build tree must not).
set -euo pipefail
mode="$1" mox="$2" consumer="$3" kernels="$4" work="$5" cc="$6"
fail() { echo "cmake_package ($mode): $*" >&2; exit 1; }
run_ok() { # $1: program; prints its output, which must report success
  local out
  out="$("$1" 2>&1)" || fail "$1 failed: $out"
  grep -q "consumer: demo_scale of 1000 floats verified" <<<"$out" || fail "unexpected output of $1: $out"
  echo "$out"
}

case "$mode" in
installed) how=(-DCMAKE_PREFIX_PATH="$mox") ;;
subproject) how=(-DMOX_SOURCE_DIR="$mox") ;;
*) fail "unknown mode" ;;
esac
rm -rf "$work"
mkdir -p "$work"
build="$work/build"
cmake -S "$consumer" -B "$build" "${how[@]}" -DCMAKE_C_COMPILER="$cc" -DKERNELS="$kernels" -DMOX_NVCC= \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure failed"; }
cmake --build "$build" -j 2 >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
grep -q "Built mox artifact $build/mox-artifacts/" "$work/build.log" ||
  fail "moxc did not build into the consumer's cache:"$'\n'"$(cat "$work/build.log")"
run_ok "$build/consumer_app"
# plain target_link_libraries, then mox_add_kernels: it built; it runs
"$build/consumer_plain" || fail "consumer_plain failed"

# Deploy: an install prefix, and a copy of the program with moxc deploy.
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
grep -q "Deployed mox artifact $work/prefix/lib/mox-artifacts/" "$work/install.log" ||
  fail "mox_install_kernels deployed nothing:"$'\n'"$(cat "$work/install.log")"
if [ "$mode" = installed ]; then moxc="$mox/bin/moxc"; else moxc="$build/mox/bin/moxc"; fi
mkdir -p "$work/copy"
cp "$build/consumer_app" "$work/copy/"
"$moxc" deploy --to "$work/copy/mox-artifacts" "$build/mox/demo/demo.artifact" >"$work/deploy.log" ||
  fail "moxc deploy failed"
grep -q "Deployed mox artifact $work/copy/mox-artifacts/" "$work/deploy.log" || fail "$(cat "$work/deploy.log")"

rm -rf "$build/mox-artifacts"
if "$build/consumer_app" >"$work/no-cache.log" 2>&1; then
  fail "the program in the build tree still ran without the artifact cache"
fi
grep -q "no artifact at '$build/mox-artifacts/" "$work/no-cache.log" || fail "$(cat "$work/no-cache.log")"
run_ok "$work/prefix/bin/consumer_app"
run_ok "$work/copy/consumer_app"
echo "cmake_package ($mode): built, ran, installed and deployed; ran without the build's artifacts"
