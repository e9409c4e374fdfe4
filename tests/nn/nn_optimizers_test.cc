// nn_optimizers_test.cc: AdamW and clipping by global norm (dlrt/nn/optimizers.hpp), checked
// against Adam and plain SGD of the same model from the same weights: AdamW's one step is
// Adam's step minus learning_rate * weight_decay * w0; a clipped SGD step is the unclipped
// step scaled to global norm clipnorm * learning_rate, and a clipnorm above the norm changes
// nothing (bit for bit).
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;
using nn_test::two_classes;

std::unique_ptr<nn::Sequential> mlp(dlrt::Context& ctx, const nn::Optimizer& opt) {
  auto m = std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(2)});
  nn::CompileConfig c;
  c.seed = 5;
  m->compile(opt, nn::SparseCategoricalCrossentropy(true), {}, c);
  return m;
}

// The model's weights (kernels and biases, not slots or counters), by name.
std::map<std::string, std::vector<float>> weights(nn::Sequential& m) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& v : m.state()) {
    const std::string& n = v.name;
    const bool weight = n.size() > 6 && (n.compare(n.size() - 6, 6, "kernel") == 0 ||
                                         n.compare(n.size() - 4, 4, "bias") == 0);
    if (weight && n.rfind("optimizer/", 0) != 0) out[n] = v.values;
  }
  return out;
}

// One optimizer step on the whole set (one batch of 32).
void one_step(nn::Sequential& m, const nn::Array& x, const nn::Array& y) {
  nn::FitOptions f;
  f.epochs = 1;
  f.batch_size = 32;
  f.progress.verbose = 0;
  m.fit(x, y, f);
}

TEST(Optimizers, AdamWIsAdamAfterDecoupledDecay) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  two_classes(32, 3, &x, &y);
  const double lr = 0.01, wd = 0.1;
  auto adam = mlp(ctx, nn::Adam(lr));
  auto adamw = mlp(ctx, nn::AdamW(lr, wd));
  const auto w0 = weights(*adam);
  ASSERT_EQ(w0, weights(*adamw)) << "the same seed must give the same initial weights";
  ASSERT_EQ(w0.size(), 4u);
  one_step(*adam, x, y);
  one_step(*adamw, x, y);
  const auto wa = weights(*adam), wb = weights(*adamw);
  for (const auto& [name, init] : w0) {
    for (size_t i = 0; i < init.size(); ++i) {
      const double expected = wa.at(name)[i] - lr * wd * init[i];
      EXPECT_NEAR(wb.at(name)[i], expected, 1e-6) << name << "[" << i << "]";
    }
  }
  // A non-zero kernel moved differently (the test would pass vacuously with wd ignored
  // only if every weight were 0).
  EXPECT_NE(wa.at("dense/kernel"), wb.at("dense/kernel"));
  EXPECT_EQ(nn::AdamW(lr, wd).config(),
            "AdamW(learning_rate=0.01, weight_decay=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-07)");
  EXPECT_THROW(nn::AdamW(lr, -1.0), dlrt::Error);
}

TEST(Optimizers, GlobalClipnormScalesTheWholeStep) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  two_classes(32, 4, &x, &y);
  const double lr = 0.1, clip = 1e-2;
  auto plain = mlp(ctx, nn::SGD(lr));
  nn::SGD clipped_opt(lr);
  clipped_opt.set_global_clipnorm(clip);
  auto clipped = mlp(ctx, clipped_opt);
  nn::SGD loose_opt(lr);
  loose_opt.set_global_clipnorm(1e6);
  auto loose = mlp(ctx, loose_opt);
  const auto w0 = weights(*plain);
  one_step(*plain, x, y);
  one_step(*clipped, x, y);
  one_step(*loose, x, y);
  const auto wp = weights(*plain), wc = weights(*clipped);
  EXPECT_EQ(weights(*loose), wp) << "a clipnorm above the norm must not change the step";
  // The unclipped step's global norm (of the gradients: the step over lr).
  double norm2 = 0;
  for (const auto& [name, init] : w0)
    for (size_t i = 0; i < init.size(); ++i) norm2 += std::pow(init[i] - wp.at(name)[i], 2);
  const double grad_norm = std::sqrt(norm2) / lr;
  ASSERT_GT(grad_norm, 10 * clip) << "the test needs a gradient that clipping changes";
  const double scale = clip / grad_norm;
  double clipped2 = 0;
  for (const auto& [name, init] : w0)
    for (size_t i = 0; i < init.size(); ++i) {
      const double step_plain = init[i] - wp.at(name)[i];
      const double step_clip = init[i] - wc.at(name)[i];
      EXPECT_NEAR(step_clip, step_plain * scale, 3e-7) << name << "[" << i << "]";
      clipped2 += step_clip * step_clip;
    }
  EXPECT_NEAR(std::sqrt(clipped2) / lr, clip, clip * 1e-2);
  EXPECT_EQ(clipped_opt.config(),
            "SGD(learning_rate=0.1, momentum=0, nesterov=False, global_clipnorm=0.01)");
  EXPECT_THROW(nn::SGD(lr).set_global_clipnorm(-1), dlrt::Error);
}

}  // namespace
