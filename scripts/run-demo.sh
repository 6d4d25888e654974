#!/usr/bin/env bash
# The demo behind `make run`: runs the pipeline example (two kernels in one
# batch, verified exactly against the CPU for blocks 128/256 and six sizes)
# on the device mox picks (CUDA when a GPU is usable, else the CPU), then
# lists the other example programs of the build.
# Usage: scripts/run-demo.sh <build-dir>
set -euo pipefail
build="${1:-build}"
if [ ! -d "$build" ]; then
  echo "run-demo: no build directory '$build' (run 'make build' first)" >&2
  exit 1
fi
pipeline="$build/examples/pipeline/pipeline_example"
if [ ! -x "$pipeline" ]; then
  echo "run-demo: $pipeline was not built (is MOX_BUILD_EXAMPLES on?)" >&2
  exit 1
fi
echo "== pipeline (MOX_BACKEND=${MOX_BACKEND:-auto}) =="
status=0
"$pipeline" || status=$?
if [ "$status" -eq 77 ]; then
  echo "run-demo: the requested backend is unavailable (MOX_BACKEND=${MOX_BACKEND:-})" >&2
  exit 77
elif [ "$status" -ne 0 ]; then
  echo "run-demo: pipeline failed (exit $status)" >&2
  exit "$status"
fi
echo
echo "== other examples in $build/examples (run them the same way) =="
found=0
for exe in "$build"/examples/*/*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  case "$exe" in
    "$pipeline" | *.so | *.sh) continue ;;
  esac
  echo "  $exe"
  found=1
done
[ "$found" -eq 1 ] || echo "  (none built)"
echo "Set MOX_BACKEND=cpu or MOX_BACKEND=cuda to force a backend."
