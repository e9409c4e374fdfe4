# tools/sanitizer-env.sh: the sanitizer settings of the CI runs, sourced by
# tools/sanitize-check.sh (the DLRT_SANITIZE build) and tools/lsan-preload.sh (the Release
# build's LeakSanitizer regression tests in `make test`). Why each setting: the header of
# tools/sanitize-check.sh. Expects to be sourced from the repository root.
# LeakSanitizer is on (DLRT_LSAN=0 turns it off): a leak in dlrt's own code fails the binary.
# handle_segv=0: the loader's isolation tests crash a child process on purpose and expect the
# kernel's SIGSEGV, not ASan's report and exit code 1.
# intercept_tls_get_addr=0: the tracer crash (google/sanitizers#1322).
export ASAN_OPTIONS="detect_leaks=${DLRT_LSAN:-1}:halt_on_error=1:abort_on_error=0:strict_init_order=1:detect_stack_use_after_return=0:handle_segv=0:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
export OMP_WAIT_POLICY=passive
# Plugins stay mapped until exit (core/plugin_library.hpp, keep_plugins_loaded; the default in
# an ASan build anyway, set here so a run does not depend on how the build detects ASan).
export DLRT_KEEP_PLUGINS_LOADED=1
