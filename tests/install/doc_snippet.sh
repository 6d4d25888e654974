#!/usr/bin/env bash
# doc_snippet.sh PREFIX DOC FIXTURE WORK CC - the find_package(mox) example
# of docs/install.md exactly as printed: its CMakeLists.txt is taken from
# the first ```cmake block under "## find_package(mox)" in DOC, with
# host.c and kernels/particle.c from FIXTURE (tests/install/particles).
# Built against the mox installed in PREFIX and installed with `cmake
# --install`; then the build tree (its artifact cache included) is moved
# away and the installed program must start - it finds libmox through the
# RPATH that mox_install_kernels keeps - and verify its results.
set -euo pipefail
prefix="$1" doc="$2" fixture="$3" work="$4" cc="$5"
fail() { echo "doc_snippet: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
src="$work/src" build="$work/build" inst="$work/prefix"
cp -R "$fixture" "$src"
awk '/^## find_package\(mox\)/ { section = 1; next }
     /^## / { section = 0 }
     section && !done && /^```cmake$/ { inside = 1; next }
     inside && /^```$/ { inside = 0; done = 1; next }
     inside { print }' "$doc" >"$src/CMakeLists.txt"
grep -q '^mox_install_kernels(particles)' "$src/CMakeLists.txt" ||
  fail "no find_package(mox) snippet with mox_install_kernels(particles) in $doc:"$'\n'"$(cat "$src/CMakeLists.txt")"

cmake -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DMOX_NVCC= \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure failed"; }
grep -q -- "-- mox: nvcc disabled (MOX_NVCC is empty); kernels build for the CPU only" "$work/configure.log" ||
  fail "-DMOX_NVCC= did not say nvcc is disabled:"$'\n'"$(cat "$work/configure.log")"
cmake --build "$build" -j 2 >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
cmake --install "$build" --prefix "$inst" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
if grep -q 'Set runtime path of .* to ""' "$work/install.log"; then
  fail "cmake --install cleared the program's RPATH:"$'\n'"$(cat "$work/install.log")"
fi
grep -q "Deployed mox artifact $inst/lib/mox-artifacts/" "$work/install.log" ||
  fail "mox_install_kernels deployed nothing:"$'\n'"$(cat "$work/install.log")"

mv "$build" "$work/build-moved"
out="$(env -u LD_LIBRARY_PATH "$inst/bin/particles" 2>&1)" || fail "the installed program failed: $out"
grep -q "particles: drift of 1000 floats verified" <<<"$out" || fail "unexpected output: $out"
echo "$out"
echo "doc_snippet: docs/install.md's find_package(mox) example built, installed and ran from $inst"
