// tests/fuzz/fuzz_settings.cc: libFuzzer entry point for settings values (core::Settings::resolve, every variable set to the input).
// Built with -DDLRT_BUILD_FUZZ=ON under clang; see README.md.
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dlrt::fuzz::settings_one_input(data, size);
  return 0;
}
