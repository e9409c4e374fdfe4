#!/usr/bin/env bash
# tools/sanitize-check.sh: the CPU-side suite under AddressSanitizer, UndefinedBehaviorSanitizer
# and LeakSanitizer, plus the fuzz corpora. .ci/run calls it after `make test`.
#
#   tools/sanitize-check.sh [BUILD_DIR]      (default build-sanitize)
#
# What it builds: a separate tree configured with -DDLRT_SANITIZE=ON -DDLRT_BUILD_CUDA=OFF
# -DDLRT_BUILD_MPI=OFF (no GPU on CI; OpenMPI's own leaks are not ours), and only the targets
# its tests need: libdlrt, the reference and cpu plugins, and the test binaries listed in TESTS
# below. The full CPU suite does not fit the CI budget under ASan (about 2-3x slower to build
# and to run); this subset covers the core (graph, exec, memory, io, settings, device specs),
# the loader and its hostile plugins, both real CPU-side plugins and the fuzz corpora.
#
# Sanitizer settings (exported below so ctest's children inherit them):
#   ASAN_OPTIONS   detect_leaks from DLRT_LSAN (default 0, see below), halt on the first error
#   UBSAN_OPTIONS  halt_on_error=1, print_stacktrace=1: any UB report fails the test
#   LSAN_OPTIONS   suppressions=tools/lsan.supp: leaks inside third-party libraries only
#                  (OpenMP runtime, oneDNN's kernel caches, glibc's dlopen bookkeeping);
#                  a leak whose stack is in dlrt's own code still fails the test.
# LSan's tracer crashing with signal 11 in the cpu-plugin tests (issue 18): LSan stops every
# thread at exit to scan their stacks, and oneDNN's OpenMP workers are still spinning then
# (GOMP's spin-wait before they sleep). The run sets OMP_WAIT_POLICY=passive so the workers
# sleep in the kernel at once, where the tracer can suspend them. This is the documented
# workaround, not yet confirmed here against the crash ("Tracer caught signal 11" at exit is
# also reported upstream as intermittent, google/sanitizers#1353): if it comes back, it is the
# tracer's crash, not a leak (rerun that binary with ASAN_OPTIONS=detect_leaks=0 to tell).
#
# Time (2026-12-01, Xeon with AVX-512, 2 cores, cold build, nothing else running): 8 min 49 s
# in all, the build nearly all of it; the ten binaries run in about 10 s. First run found and
# fixed: a test reading 2 bytes past a buffer (device_services_suite.hpp) and an out-of-range
# int turned into a dlrt_dtype (c_api_io.cc). With DLRT_LSAN=1 two binaries still hit the
# tracer crash and dlrt_graph_test reports leaks from inside an unloaded plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-sanitize}
JOBS=${JOBS:-$(nproc)}

TESTS=(dlrt_core_test dlrt_io_test dlrt_memory_test dlrt_graph_test dlrt_exec_test
       dlrt_loader_test dlrt_loader_internal_test reference_plugin_test cpu_plugin_test
       fuzz_corpus_test)

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O1 -g1 (line tables): what the sanitizers' authors recommend, and about half the compile
  # time of RelWithDebInfo's -O2 -g, which matters on CI's 2 cores.
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
    "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" -DDLRT_SANITIZE=ON \
    -DDLRT_BUILD_CUDA=OFF -DDLRT_BUILD_MPI=OFF ${CMAKE_FLAGS:-}
fi
# The plugins are loaded at run time, not linked: name them so they are built too.
cmake --build "$BUILD_DIR" -j "$JOBS" --target dlrt dlrt-plugin-reference dlrt-plugin-cpu "${TESTS[@]}"

# detect_leaks=0 in CI for now: LeakSanitizer's tracer still crashes at exit in the cpu-plugin
# tests (see above), and leaks inside plugins that are unloaded before exit show up as
# "<unknown module>" frames that no suppression can name. DLRT_LSAN=1 turns it on.
# handle_segv=0: the loader's isolation tests crash a child process on purpose and expect the
# kernel's SIGSEGV, not ASan's report and exit code 1.
export ASAN_OPTIONS="detect_leaks=${DLRT_LSAN:-0}:halt_on_error=1:abort_on_error=0:strict_init_order=1:detect_stack_use_after_return=0:handle_segv=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
export OMP_WAIT_POLICY=passive

# Each test binary runs whole (one process per binary, not per case as under ctest: ASan's
# start-up is the cost that matters here). fuzz_corpus_test takes the corpus folder.
failed=()
for t in "${TESTS[@]}"; do
  args=()
  [ "$t" = fuzz_corpus_test ] && args=(tests/fuzz/corpus --mutations 3000)
  echo "== $t"
  start=$(date +%s)
  if "$BUILD_DIR/bin/$t" "${args[@]}" >"$BUILD_DIR/$t.log" 2>&1; then
    echo "   ok ($(( $(date +%s) - start )) s)"
  else
    echo "   FAILED ($(( $(date +%s) - start )) s); the last lines of $BUILD_DIR/$t.log:"
    tail -n 60 "$BUILD_DIR/$t.log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "sanitize-check: ${#failed[@]} failed: ${failed[*]}"
  exit 1
fi
echo "sanitize-check: all ${#TESTS[@]} test binaries clean under ASan+UBSan$([ "${DLRT_LSAN:-0}" = 1 ] && echo +LSan)"
