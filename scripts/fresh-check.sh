#!/usr/bin/env bash
# fresh-check.sh - the README's two commands on a fresh, minimal Debian 12,
# as a new user runs them: debootstrap (variant minbase) builds a Debian 12
# root, only git and make are added by hand, the repository is cloned inside
# it (this checkout's HEAD, through a git bundle: uncommitted changes are not
# part of the check), then `make run` and `make test` run in a chroot, timed.
# There is no CUDA in that root: it is also the no-nvcc check.
#
# Usage: scripts/fresh-check.sh [ROOT] [OUT]
#   ROOT  where the Debian root is built (default .fresh/root; wiped first)
#   OUT   logs and summary.txt (default .fresh/out)
# Needs root (debootstrap, chroot, mounts), debootstrap (apt-get install
# debootstrap) and a Debian mirror (MIRROR, default http://deb.debian.org/debian).
# Takes 15 to 20 minutes on 2 cores (most of it `make test`).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd -P)"
root="$(realpath -m "${1:-$repo/.fresh/root}")"
out="$(realpath -m "${2:-$repo/.fresh/out}")"
mirror="${MIRROR:-http://deb.debian.org/debian}"

die() { echo "fresh-check: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and mounts)"
command -v debootstrap >/dev/null || die "needs debootstrap (apt-get install debootstrap)"
case "$root" in / | /bin* | /boot* | /dev* | /etc* | /home | /lib* | /proc* | /root | /sbin* | /sys* | /usr* | /var)
  die "refusing to build a root at $root" ;;
esac

unmount_all() { # everything mounted below the root, deepest first
  findmnt -rn -o TARGET | awk -v r="$root/" 'index($0 "/", r) == 1' | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
}
unmount_all
if findmnt -rn -o TARGET | awk -v r="$root/" 'index($0 "/", r) == 1' | grep -q .; then
  die "something is still mounted under $root; not wiping it"
fi
trap unmount_all EXIT
rm -rf "$root" "$out"
mkdir -p "$root" "$out"

now() { date +%s; }
step() { # name command...: runs, logs to $out/<name>.log, records time and exit code
  local name="$1" start rc
  shift
  echo "fresh-check: $name"
  start=$(now)
  set +e
  "$@" >"$out/$name.log" 2>&1
  rc=$?
  set -e
  echo "$name $rc $(($(now) - start))" >>"$out/steps"
  return "$rc"
}
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 TERM=dumb bash -c "$1"; }

step debootstrap debootstrap --variant=minbase bookworm "$root" "$mirror" ||
  die "debootstrap failed (see $out/debootstrap.log)"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"

step git-and-make in_root "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q git make" ||
  die "installing git and make failed (see $out/git-and-make.log)"
commit="$(git -C "$repo" rev-parse --short HEAD)" # what the check runs, whatever HEAD becomes meanwhile
git -C "$repo" bundle create "$root/root/mox.bundle" HEAD >/dev/null 2>&1 || die "git bundle failed"
step clone in_root "git clone -q /root/mox.bundle /root/mox" || die "git clone failed (see $out/clone.log)"

run_rc=0 test_rc=0
step make-run in_root "cd /root/mox && make run" || run_rc=$?
step make-test in_root "cd /root/mox && make test" || test_rc=$?

{
  echo "fresh-check on $(uname -n), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit"
  while read -r name rc secs; do
    printf '  %-13s %-9s %5d s\n' "$name" "$([ "$rc" -eq 0 ] && echo passed || echo "FAILED($rc)")" "$secs"
  done <"$out/steps"
  installed="$(grep -o '[0-9]* newly installed' "$out/make-run.log" | head -n 1 || true)"
  echo "  packages make run installed: ${installed:-none}"
  echo "  make run ended with:"
  tail -n 4 "$out/make-run.log" | sed 's/^/    /'
  echo "  make test stages:"
  sed -n '/^mox test summary:/,$p' "$out/make-test.log" | sed 's/^/  /'
} | tee "$out/summary.txt"
[ "$run_rc" -eq 0 ] && [ "$test_rc" -eq 0 ]
