#!/usr/bin/env bash
# tools/windows-check.sh [BUILD_DIR]: the Windows check end to end, as CI would run it
# (docs/windows.md): install the cross-build's packages, cross-build with mingw-w64
# (`make windows`), then run the Windows tests under wine64 through ctest, and dlprobe.exe as
# a user would. Prints the wall time of each step and of the whole. Exit status: the first
# step that failed. Measured on an idle 2-core EPYC (docs/windows.md): the cross-build 6 min
# 46 s with ccache nearly cold, ctest 37 s for 45 tests.
# The build folder must not sit below a folder Everyone may write to (/tmp): the loader
# refuses plugins there, as on Windows (docs/windows.md).
# With a Linux build folder as the second argument (CI: build/, made by `make test`), the last
# step trains the same models on both builds and compares their losses
# (tools/windows/compare-linux.sh: within 1e-4).
#   JOBS=2 tools/windows-check.sh                  # into build-win/
#   tools/windows-check.sh ~/build-win build       # another folder; compare with build/
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-win}
linux_build=${2:-}
jobs=${JOBS:-$(nproc)}

start=$(date +%s)
step() {  # step NAME COMMAND...: run it, print how long it took
  local name=$1
  shift
  local t0
  t0=$(date +%s)
  echo "== windows-check: $name"
  "$@"
  echo "== windows-check: $name took $(($(date +%s) - t0)) s"
}

# A build folder outside the clone (CI's sits in $HOME) may hold a CMake cache generated from
# another checkout: CMake refuses it ("does not match the source ... used to generate cache").
# Such a folder is this script's scratch space, so its cache is dropped and regenerated for
# this source tree; the objects are rebuilt (ccache keeps that short when warm).
if [ -f "$build/CMakeCache.txt" ]; then
  cached_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  if [ -n "$cached_src" ] && [ "$cached_src" != "$(pwd -P)" ]; then
    echo "== windows-check: $build was generated from $cached_src, not $(pwd -P):" \
      "dropping its CMake cache"
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
fi

step "install" bash tools/windows/install-deps.sh
step "cross-build" make --no-print-directory windows WIN_BUILD_DIR="$build" JOBS="$jobs"
# The prefix is made once by the first test (wine-run.sh); made here, its ~6.5 s are not
# charged to whichever test happens to start first.
step "wine prefix" bash -c '"$0" "$1" --help >/dev/null' tools/windows/wine-run.sh \
  "$build/bin/dlprobe.exe"
step "dlprobe.exe" tools/windows/wine-run.sh "$build/bin/dlprobe.exe"
# The cpu plugin's fixed kernel rules, as `make test` runs them (calibration.hpp).
step "ctest" env DLRT_CPU_CALIBRATE=skip ctest --test-dir "$build" --output-on-failure -j "$jobs"
if [ -n "$linux_build" ]; then
  step "losses vs Linux" tools/windows/compare-linux.sh "$linux_build" "$build"
fi
echo "== windows-check: all steps passed in $(($(date +%s) - start)) s"
