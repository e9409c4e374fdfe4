// tests/fuzz/fuzz_device_spec.cc: libFuzzer entry point for device specs (core::parse_device_spec).
// Built with -DDLRT_BUILD_FUZZ=ON under clang; see README.md.
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dlrt::fuzz::device_spec_one_input(data, size);
  return 0;
}
