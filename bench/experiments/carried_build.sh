# carried_build.sh - sourced by the GPU-machine experiment scripts: makes a
# build carried from another path usable here (the recorded source path
# points at this checkout, MOX_ARTIFACT_ROOT at its artifacts, the CUDA
# backend chosen) and starts the log with the script, date, commit and GPU.
# Needs: build (the build folder), log (the log file), the caller's name in
# $1.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"
fi
export MOX_ARTIFACT_ROOT=${src:-$PWD}/$build/mox-artifacts
export MOX_BACKEND=cuda
: >"$log"
{
    echo "# $1, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} >>"$log" 2>&1
