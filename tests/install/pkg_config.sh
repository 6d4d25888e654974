#!/usr/bin/env bash
# pkg_config.sh PREFIX CONSUMER KERNELS WORK CC - a build without CMake:
# pkg-config finds the mox installed in PREFIX (cflags, libs, the moxc
# variable), moxc builds the demo module from the command line (the dialect
# headers found next to moxc), cc compiles the consumer's sources with the
# bindings, and the program runs. Then the same from a moved copy of the
# prefix: nothing in it depends on where it was installed.
set -euo pipefail
prefix="$1" consumer="$2" kernels="$3" work="$4" cc="$5"
fail() { echo "pkg_config: $*" >&2; exit 1; }

build_and_run() { # $1: prefix, $2: output folder
  local pc="$1/lib/pkgconfig" out="$2"
  mkdir -p "$out"
  local moxc cflags libs libdir
  moxc="$(PKG_CONFIG_PATH="$pc" pkg-config --variable=moxc mox)"
  cflags="$(PKG_CONFIG_PATH="$pc" pkg-config --cflags mox)"
  libs="$(PKG_CONFIG_PATH="$pc" pkg-config --libs mox)"
  libdir="$(PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir mox)"
  [ -x "$moxc" ] || fail "pkg-config's moxc ($moxc) is not executable"
  "$moxc" build --name demo --out-dir "$out/artifacts" --bindings-dir "$out/gen" --no-cuda \
    -I "$kernels" "$kernels/demo.c" >"$out/moxc.log" 2>&1 || { cat "$out/moxc.log"; fail "moxc build failed"; }
  # shellcheck disable=SC2086 # pkg-config's output is a list of flags
  "$cc" -std=c11 -Wall -Wextra -Werror $cflags -I "$out/gen" -I "$kernels" \
    "$consumer/app.c" "$consumer/use.c" "$out/gen/demo.c" $libs -Wl,-rpath,"$libdir" -o "$out/app" ||
    fail "compiling the consumer failed"
  local text
  text="$("$out/app")" || fail "the consumer failed: $text"
  grep -q "consumer: demo_scale of 1000 floats verified" <<<"$text" || fail "unexpected output: $text"
  echo "$text"
}

rm -rf "$work"
mkdir -p "$work"
build_and_run "$prefix" "$work/installed"
cp -a "$prefix" "$work/moved-prefix"
build_and_run "$work/moved-prefix" "$work/moved"
# The moved moxc compiled against the moved headers (the manifest records
# the compilers' flags).
moved_include="-I$(cd "$work/moved-prefix" && pwd -P)/include"
grep -qF -- "\"$moved_include\"" "$work/moved/artifacts"/*/manifest.json ||
  fail "the moved moxc did not use $moved_include: $(cat "$work/moved/artifacts"/*/manifest.json)"
echo "pkg_config: pkg-config + moxc command line: built and ran, also from a moved prefix"
