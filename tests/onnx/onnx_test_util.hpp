// tests/onnx/onnx_test_util.hpp: what both ONNX test files need: a context on the build
// tree's plugins and reproducible random inputs.
#pragma once

#include <dlrt/context.hpp>
#include <dlrt/context_options.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace dlrt::test {

inline dlrt::Context onnx_test_context() {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR);
  return dlrt::Context(o);
}

// n floats uniform in [-1, 1), the same for the same seed.
inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

}  // namespace dlrt::test
