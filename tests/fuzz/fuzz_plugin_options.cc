// tests/fuzz/fuzz_plugin_options.cc: libFuzzer entry point for plugin option strings (core::parse_plugin_options).
// Built with -DDLRT_BUILD_FUZZ=ON under clang; see README.md.
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dlrt::fuzz::plugin_options_one_input(data, size);
  return 0;
}
