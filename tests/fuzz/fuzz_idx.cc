// tests/fuzz/fuzz_idx.cc: libFuzzer entry point for the IDX reader (plain and gzipped).
// Built with -DDLRT_BUILD_FUZZ=ON under clang; see README.md.
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dlrt::fuzz::idx_one_input(data, size);
  return 0;
}
