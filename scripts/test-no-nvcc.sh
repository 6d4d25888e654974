#!/usr/bin/env bash
# CI's no-nvcc stage: configures mox where CMake cannot find nvcc at all
# (no CUDA folder in PATH, CMake told to ignore every folder holding nvcc)
# and runs the sanitize-labelled tests there (every moxc test but the CMake
# consumer's among them; the examples run in the other stages; the
# allocation-failure sweeps, fault.runtime.*, the CPU executors' dialect
# suites, dialect.test_dialect*, and the stress tests run in the ASan stage
# with the same runtime and kernels, nvcc plays no part in them: their
# kernels are built here all the same), so that a
# machine without CUDA (a user's laptop, a fresh Debian) stays green. An
# ASan+UBSan build: the paths that skip for want of nvcc are checked for
# leaks too. Refuses to run - exit 1 - when nvcc is still found: the stage
# would then test nothing.
# Usage: scripts/test-no-nvcc.sh <build-dir> [jobs]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: test-no-nvcc.sh <build-dir> [jobs]}"
jobs="${2:-2}"
cmake_bin="$(command -v cmake)"
ctest_bin="$(command -v ctest)"

# Every folder nvcc could come from: CUDA installs, $CUDA_HOME, PATH.
hidden=()
for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin ${CUDA_HOME:+"$CUDA_HOME/bin"} $(tr ':' ' ' <<<"$PATH"); do
  [ -x "$dir/nvcc" ] || [[ "$dir" == *cuda* ]] || continue
  case " ${hidden[*]-} " in *" $dir "*) continue ;; esac
  hidden+=("$dir")
done
for dir in "${hidden[@]-}"; do
  case "$dir" in
  /bin | /usr/bin | /sbin | /usr/sbin)
    echo "test-no-nvcc: nvcc is in $dir with the system's tools; it cannot be hidden here" >&2
    exit 1
    ;;
  esac
done
path=""
for dir in $(tr ':' ' ' <<<"$PATH"); do
  case " ${hidden[*]-} " in *" $dir "*) continue ;; esac
  path="${path:+$path:}$dir"
done
ignore="$(IFS=';'; echo "${hidden[*]-}")"
echo "test-no-nvcc: hiding ${hidden[*]:-nothing (no nvcc here)}"

rm -rf "$build"
env -u CUDA_HOME PATH="$path" "$cmake_bin" -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DMOX_SANITIZE=address \
  -DMOX_BUILD_BENCH=OFF -DMOX_BUILD_EXAMPLES=OFF "-DCMAKE_IGNORE_PATH=$ignore" "-DCMAKE_IGNORE_PREFIX_PATH=/usr/local/cuda"
found="$(sed -n 's/^MOX_NVCC:FILEPATH=//p' "$build/CMakeCache.txt")"
if [ "$found" != "MOX_NVCC-NOTFOUND" ]; then
  echo "test-no-nvcc: CMake still found nvcc ('$found'); this stage would test nothing" >&2
  exit 1
fi
env -u CUDA_HOME PATH="$path" "$cmake_bin" --build "$build" -j "$jobs"
cd "$build"
env -u CUDA_HOME PATH="$path" "$ctest_bin" --output-on-failure -j "$jobs" --timeout 600 -L sanitize \
  -E '^(fault\.runtime\.|dialect\.test_dialect|stress\.)'
