#!/usr/bin/env bash
# tools/lsan-preload.sh LIBASAN BINARY [ARGS...]: runs a test binary of the ordinary (Release)
# build under LeakSanitizer by preloading GCC's ASan runtime, with the CI sanitizer settings
# (tools/sanitizer-env.sh). A regression test in `make test` for the leak checks CI relies on,
# cheap enough for every run: it fails when LeakSanitizer's tracer crashes at exit again
# ("Tracer caught signal 11", the intercept_tls_get_addr=0 fix) or when plugins are unloaded
# under it again (oneDNN's and OpenMP's caches then read as megabytes of "<unknown module>"
# leaks, the DLRT_KEEP_PLUGINS_LOADED fix), and when anything the binary runs leaks. The code
# is not instrumented, so stacks are rough; tools/sanitize-check.sh is the full check.
set -uo pipefail
cd "$(dirname "$0")/.."
asan=$1
shift
source tools/sanitizer-env.sh
log=$(mktemp)
LD_PRELOAD=$asan "$@" >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  grep -E "Tracer caught|ERROR: LeakSanitizer|SUMMARY|FAILED" "$log" | head -20
  tail -n 40 "$log"
  echo "lsan-preload: $* failed with status $rc under LeakSanitizer"
fi
rm -f "$log"
exit $rc
