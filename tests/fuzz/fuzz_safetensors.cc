// tests/fuzz/fuzz_safetensors.cc: libFuzzer entry point for the safetensors reader (and the
// writer's header, by round trip). Built with -DDLRT_BUILD_FUZZ=ON under clang; see README.md.
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dlrt::fuzz::safetensors_one_input(data, size);
  return 0;
}
