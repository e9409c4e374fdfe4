// nn_test_util.hpp: what the tests/nn files share — a context on the build tree's cpu plugin
// only, and a small two-class data set. Header-only, included by each test file.
#pragma once

#include <dlrt/nn.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "test_env.hpp"

namespace nn_test {

// A context that loads only this build's plugins and sees only the CPU, logging errors only;
// `logical` > 1 splits CPU:0 into that many logical devices (a MirroredStrategy's replicas).
inline dlrt::Context cpu_context(int logical = 1) {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("")
      .visible_devices("CPU")
      .log_level(DLRT_LOG_ERROR);
  if (logical > 1) o.logical_devices("CPU:0", logical);
  return dlrt::Context(o);
}

// The process's environment (tests/common/test_env.hpp).
using dlrt_test::set_env;

// fit's options without the progress bar: `epochs` of `batch` rows, in the seed's shuffled
// order or (shuffle false) in the data's own.
inline dlrt::nn::FitOptions quiet(int64_t epochs, int64_t batch, bool shuffle = true) {
  dlrt::nn::FitOptions f;
  f.epochs = epochs;
  f.batch_size = batch;
  f.shuffle = shuffle;
  f.progress.verbose = 0;
  return f;
}

// Two noisy classes in 4-D: x (n,4) f32, y (n) i32 (class i % 2; the first two features
// carry the sign of the class, all four get N(0, 0.5) noise from `seed`).
inline void two_classes(int n, unsigned seed, dlrt::nn::Array* x, dlrt::nn::Array* y) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0.f, 0.5f);
  std::vector<float> xs;
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) {
    ys.push_back(i % 2);
    for (int k = 0; k < 4; ++k)
      xs.push_back((i % 2 ? 1.f : -1.f) * (k < 2 ? 1.f : 0.f) + noise(gen));
  }
  *x = dlrt::nn::Array::of<float>({n, 4}, xs);
  *y = dlrt::nn::Array::of<int32_t>({n}, ys);
}

// Rows [first, first + count) of a (a batch cut from a data set).
inline dlrt::nn::Array rows(const dlrt::nn::Array& a, int64_t first, int64_t count) {
  const size_t rb = a.row_bytes();
  std::vector<uint8_t> bytes(a.data() + first * rb, a.data() + (first + count) * rb);
  std::vector<int64_t> dims = a.dims();
  dims[0] = count;
  return dlrt::nn::Array(a.dtype(), dims, std::move(bytes));
}

// The code and message of the dlrt::Error `fn` throws ({DLRT_OK, ""} when none).
template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const dlrt::Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

}  // namespace nn_test
