#!/usr/bin/env bash
# ctest for a sanitizer build, run in the build directory with ctest's
# arguments. LeakSanitizer's own tracer sometimes crashes at a process's
# exit ("Tracer caught signal 11" ... "LeakSanitizer has encountered a
# fatal error"; google/sanitizers#1353): the test's checks all passed, the
# leak check itself could not run. When every failed test failed that way,
# those tests run once more (and must pass then); any other failure fails
# at once, without a retry, so flaky tests are not hidden.
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
  if ! grep -q "LeakSanitizer has encountered a fatal error" <<<"$block" ||
     grep -q "ERROR: LeakSanitizer: detected memory leaks\|ERROR: AddressSanitizer\|runtime error:" <<<"$block"; then
    echo "ctest-sanitized: $name failed for another reason than LeakSanitizer's tracer: no retry"
    exit "$status"
  fi
done <<<"$names"
echo "ctest-sanitized: LeakSanitizer's tracer crashed at the exit of: $(tr '\n' ' ' <<<"$names")- running them once more"
ctest --output-on-failure --rerun-failed "$@"
