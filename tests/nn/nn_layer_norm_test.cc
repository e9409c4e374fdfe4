// nn_layer_norm_test.cc: nn::LayerNormalization on the cpu plugin — Keras' parameters
// (gamma ones, beta zeros, trainable), predict equals the hand-computed per-row formula for
// (B,D) and (B,T,D) inputs with Keras' epsilon 1e-3, another axis is refused, and a tiny model
// with it learns a few hundred Fashion-MNIST images (the loss falls).
#include <dlrt/idx.hpp>
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;

nn::FitOptions quiet(int64_t epochs, int64_t batch) { return nn_test::quiet(epochs, batch, false); }

std::vector<float> random_values(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

TEST(NnLayerNorm, ParamsAreKerasAndOtherAxesAreRefused) {
  dlrt::Context ctx = cpu_context();
  nn::Sequential m(ctx, {nn::Input({5}), nn::Dense(6), nn::LayerNormalization(), nn::Dense(2)});
  m.compile(nn::Adam(), nn::SparseCategoricalCrossentropy(true));
  const auto s = m.state();
  bool gamma = false, beta = false;
  for (const auto& v : s) {
    if (v.name == "layer_normalization/gamma") {
      gamma = true;
      EXPECT_EQ(v.values, std::vector<float>(6, 1.f));
    }
    if (v.name == "layer_normalization/beta") {
      beta = true;
      EXPECT_EQ(v.values, std::vector<float>(6, 0.f));
    }
  }
  EXPECT_TRUE(gamma && beta);
  EXPECT_THROW(nn::LayerNormalization(-1, 0.0), dlrt::Error);
  nn::Sequential bad(ctx, {nn::Input({4, 3}), nn::LayerNormalization(1)});
  EXPECT_THROW(bad.compile(nn::Adam(), nn::MeanSquaredError()), dlrt::Error);
}

// predict of a model that is only LayerNormalization: (x - mean)/sqrt(var + 1e-3) per row of
// the last axis (gamma 1, beta 0 untrained), computed here in double.
TEST(NnLayerNorm, PredictIsTheHandComputedFormula) {
  dlrt::Context ctx = cpu_context();
  for (const nn::Shape& sample : {nn::Shape{7}, nn::Shape{3, 5}, nn::Shape{4, 1}}) {
    const int64_t n = 4, d = sample.back();
    int64_t per = 1;
    for (int64_t k : sample) per *= k;
    const std::vector<float> xs = random_values(size_t(n * per), 3, -3.f, 5.f);
    std::vector<int64_t> xd = {n};
    xd.insert(xd.end(), sample.begin(), sample.end());
    nn::Sequential m(ctx, {nn::Input(sample), nn::LayerNormalization()});
    m.compile(nn::SGD(0.1), nn::MeanSquaredError());
    const std::vector<float> got = m.predict(nn::Array::of<float>(xd, xs), n).values<float>();
    ASSERT_EQ(got.size(), xs.size());
    for (size_t r = 0; r < xs.size() / size_t(d); ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < d; ++j) mean += xs[r * size_t(d) + size_t(j)];
      mean /= double(d);
      for (int64_t j = 0; j < d; ++j)
        var += (xs[r * size_t(d) + size_t(j)] - mean) * (xs[r * size_t(d) + size_t(j)] - mean);
      var /= double(d);
      for (int64_t j = 0; j < d; ++j) {
        const size_t i = r * size_t(d) + size_t(j);
        EXPECT_NEAR(got[i], (xs[i] - mean) / std::sqrt(var + 1e-3), 1e-5) << i;
      }
    }
  }
}

// Fashion-MNIST, 300 training images as sequences of 28 rows of 28 pixels (B,T,D):
// LayerNormalization over each row -> Flatten -> Dense(32, relu) -> LayerNormalization ->
// Dense(10). The loss falls and most training images are right.
TEST(NnLayerNorm, TinyModelLearnsFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::FILE* probe = std::fopen((dir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << dir;
  std::fclose(probe);
  const int64_t n = 300;
  dlrt::IdxArray images(dir + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray labels(dir + "train-labels-idx1-ubyte.gz", n);
  const uint8_t* px = images.data<uint8_t>();
  std::vector<float> pixels(size_t(n * 28 * 28));
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = float(px[i]) / 255.f;
  nn::Array x = nn::Array::of<float>({n, 28, 28}, pixels);
  const uint8_t* lb = labels.data<uint8_t>();
  nn::Array y(DLRT_U8, {n}, std::vector<uint8_t>(lb, lb + n));

  dlrt::Context ctx = cpu_context();
  nn::Sequential m(ctx, {nn::Input({28, 28}), nn::LayerNormalization(), nn::Flatten(),
                         nn::Dense(32), nn::ReLU(), nn::LayerNormalization(), nn::Dense(10)});
  nn::CompileConfig cfg;
  cfg.seed = 5;
  m.compile(nn::Adam(3e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  nn::FitOptions f = quiet(5, 30);
  f.shuffle = true;
  nn::History h = m.fit(x, y, f);
  EXPECT_LT(h.history["loss"].back(), 0.6 * h.history["loss"].front());
  EXPECT_GE(h.last("accuracy"), 0.6);
}

}  // namespace
