#!/usr/bin/env bash
# ctest for a sanitizer build, run in the build directory with ctest's
# arguments. LeakSanitizer's own tracer sometimes crashes at a process's
# exit ("Tracer caught signal 11" ... "LeakSanitizer has encountered a
# fatal error"; google/sanitizers#1353): the test's checks all passed, the
# leak check itself could not run. ThreadSanitizer's runtime now and then
# dies mapping its own shadow ("ThreadSanitizer failed to allocate
# 0x1ed90000a0000 (542677708439552) bytes at address ... (errno: 12)", more
# than the whole address space, seen once in CI in fault.runtime.cpu.from
# and never in 30 runs of it here): the sanitizer stopped, not a check.
# When every failed test failed in one of these two ways, and its log holds
# no sanitizer report and no failed check, those tests run once more (and
# must pass then); any other failure fails at once, without a retry, so
# flaky tests are not hidden.
# Usage: (cd BUILD && bash ../scripts/ctest-sanitized.sh -j 2 -L sanitize ...)
set -uo pipefail
ctest --output-on-failure "$@" && exit 0
status=$?
log=Testing/Temporary/LastTest.log
failed=Testing/Temporary/LastTestsFailed.log
[ -f "$log" ] && [ -f "$failed" ] || exit "$status"
names=$(cut -d: -f2- "$failed")
[ -n "$names" ] || exit "$status"
while IFS= read -r name; do
  # The test's block of the log: from "N/M Testing: name" to its end time.
  block=$(awk -v n="$name" '$0 ~ ("Testing: " n "$") {on=1} on {print} on && index($0, "\"" n "\" end time") {exit}' "$log")
  if ! grep -q "LeakSanitizer has encountered a fatal error\|ERROR: ThreadSanitizer failed to allocate" <<<"$block" ||
     grep -q "ERROR: LeakSanitizer: detected memory leaks\|ERROR: AddressSanitizer\|WARNING: ThreadSanitizer\|runtime error:\|\[  FAILED  \]\|\[  ERROR   \]" <<<"$block"; then
    echo "ctest-sanitized: $name failed for another reason than a sanitizer runtime's own crash: no retry"
    exit "$status"
  fi
done <<<"$names"
echo "ctest-sanitized: the sanitizer's runtime (not a check) failed in: $(tr '\n' ' ' <<<"$names")- running them once more"
ctest --output-on-failure --rerun-failed "$@"
