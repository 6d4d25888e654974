#!/usr/bin/env bash
# install_tree.sh BUILD PREFIX - installs the build tree into PREFIX (fresh)
# with `cmake --install` and checks what a user relies on: libmox.so.0 as
# SONAME with only the public mox_ API (and the mox__testing_ hooks)
# exported, the headers, moxc and where it finds them, the CMake package and
# mox.pc. The fixture mox_installed of the consumer tests.
set -euo pipefail
build="$1" prefix="$2"
fail() { echo "install_tree: $*" >&2; exit 1; }

rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in lib/libmox.so lib/libmox.so.0 include/mox/mox.h include/mox/kernel.h include/mox/kernel_abi.h \
         include/mox/export.h bin/moxc lib/cmake/mox/moxConfig.cmake lib/cmake/mox/moxConfigVersion.cmake \
         lib/cmake/mox/moxTargets.cmake lib/cmake/mox/MoxKernels.cmake lib/cmake/mox/MoxCuda.cmake \
         lib/pkgconfig/mox.pc; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done

soname="$(objdump -p "$prefix/lib/libmox.so.0" | awk '$1 == "SONAME" { print $2 }')"
[ "$soname" = "libmox.so.0" ] || fail "SONAME is '$soname', want libmox.so.0"
exported="$(nm -D --defined-only "$prefix/lib/libmox.so.0" | awk '{ print $3 }')"
[ -n "$exported" ] || fail "libmox exports nothing"
grep -qx mox_device_open <<<"$exported" || fail "mox_device_open is not exported"
others="$(grep -v -e '^mox_' <<<"$exported" || true)"
internal="$(grep -e '^mox__' <<<"$exported" | grep -v '^mox__testing_' || true)"
[ -z "$others$internal" ] || fail "symbols outside the public API are exported: $others $internal"
# The artifact layer is linked in, hidden.
! grep -qx mox_manifest_parse <<<"$exported" || fail "the artifact layer's symbols leak"

# No build path in what was installed: moxc finds the headers next to itself.
out="$("$prefix/bin/moxc" doctor --no-cuda)"
grep -qF "[ok] mox headers: $(cd "$prefix" && pwd -P)/include/mox/kernel.h" <<<"$out" ||
  fail "the installed moxc does not use the installed headers:"$'\n'"$out"
echo "install_tree: installed and checked $prefix"
