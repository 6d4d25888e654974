#!/usr/bin/env bash
# The stages behind `make test` (and CI): each stage runs even when an
# earlier one failed, and a summary of every stage's result and time ends
# the output; the exit status is 1 when any stage failed.
# Usage: scripts/test-stages.sh STAGE...   (plain, asan, tsan, no-nvcc)
# Each STAGE is the Makefile target test-STAGE; MAKE and the make variables
# in the environment (BUILD, JOBS) are passed on.
set -uo pipefail
cd "$(dirname "$0")/.."
make_cmd="${MAKE:-make}"
[ "$#" -gt 0 ] || set -- plain asan tsan

names=() results=() seconds=()
failed=0
for stage in "$@"; do
  echo "==== mox test stage: $stage ===="
  start=$(date +%s)
  if $make_cmd --no-print-directory "test-$stage"; then
    result=passed
  else
    result="FAILED (exit $?)"
    failed=1
  fi
  names+=("$stage") results+=("$result") seconds+=($(($(date +%s) - start)))
  echo "==== mox test stage: $stage $result ===="
done

echo
echo "mox test summary:"
for i in "${!names[@]}"; do
  printf '  %-9s %-18s %5d s\n' "${names[$i]}" "${results[$i]}" "${seconds[$i]}"
done
if [ "$failed" -ne 0 ]; then
  echo "mox: some test stages failed (their output is above)"
  exit 1
fi
echo "mox: all test stages passed"
