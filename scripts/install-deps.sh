#!/usr/bin/env bash
# Installs the Debian 12 packages mox needs to build and test, if missing
# (as root, or through sudo). Without recommended packages: apt's defaults
# would add hundreds (ImageMagick, Ghostscript, fonts) that mox never uses.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libclang-14-dev clang-14 libjansson-dev libssl-dev
      libcmocka-dev libuv1-dev gnuplot-nox python3-numpy valgrind)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "mox: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
