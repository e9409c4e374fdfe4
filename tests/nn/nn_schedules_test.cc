// nn_schedules_test.cc: learning-rate schedules (dlrt/nn/schedules.hpp) — Keras' formulas at
// chosen steps, their argument errors, and in training: the rate a step uses is the
// schedule's value at the steps done before it (checked bit for bit against a run that
// changes constant rates through a checkpoint), a resumed fit continues the curve, and the
// checkpoint records the rate and the schedule.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;
using nn_test::two_classes;

using nn_test::quiet;

std::unique_ptr<nn::Sequential> mlp(dlrt::Context& ctx, const nn::Optimizer& opt) {
  auto m = std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(2)});
  nn::CompileConfig c;
  c.seed = 5;
  m->compile(opt, nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
  return m;
}

float state_value(nn::Sequential& m, const std::string& name) {
  for (const auto& v : m.state())
    if (v.name == name) return v.values.at(0);
  ADD_FAILURE() << "no state variable " << name;
  return NAN;
}

void expect_same_weights(nn::Sequential& a, nn::Sequential& b) {
  auto sa = a.state(), sb = b.state();
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    if (sa[i].name == "optimizer/learning_rate") continue;  // compared by the callers
    EXPECT_EQ(sa[i].name, sb[i].name);
    EXPECT_EQ(sa[i].values, sb[i].values) << sa[i].name << " differs";
  }
}

TEST(Schedules, KerasFormulas) {
  nn::ExponentialDecay e(0.1, 10, 0.5);
  EXPECT_DOUBLE_EQ(e(0), 0.1);
  EXPECT_DOUBLE_EQ(e(5), 0.1 * std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(e(20), 0.025);
  nn::ExponentialDecay stairs(0.1, 10, 0.5, /*staircase=*/true);
  EXPECT_DOUBLE_EQ(stairs(9), 0.1);
  EXPECT_DOUBLE_EQ(stairs(15), 0.05);

  // Keras: values[0] for step <= boundaries[0], values[1] up to boundaries[1], then values[2].
  nn::PiecewiseConstantDecay p({10, 20}, {1.0, 0.5, 0.1});
  EXPECT_EQ(p(0), 1.0);
  EXPECT_EQ(p(10), 1.0);
  EXPECT_EQ(p(11), 0.5);
  EXPECT_EQ(p(20), 0.5);
  EXPECT_EQ(p(21), 0.1);

  nn::CosineDecay c(1.0, 10);
  EXPECT_DOUBLE_EQ(c(0), 1.0);
  EXPECT_NEAR(c(5), 0.5, 1e-15);
  EXPECT_NEAR(c(10), 0.0, 1e-15);
  EXPECT_NEAR(c(100), 0.0, 1e-15);  // stays at alpha * peak after decay_steps
  nn::CosineDecay floor(1.0, 10, /*alpha=*/0.1);
  EXPECT_NEAR(floor(10), 0.1, 1e-15);
  EXPECT_NEAR(floor(5), 0.9 * 0.5 + 0.1, 1e-15);
  // Linear warmup from 0.0001 to 0.001 over 10 steps, then the cosine from 0.001.
  nn::CosineDecay warm(1e-4, 100, 0.0, /*warmup_target=*/1e-3, /*warmup_steps=*/10);
  EXPECT_DOUBLE_EQ(warm(0), 1e-4);
  EXPECT_DOUBLE_EQ(warm(5), 1e-4 + 0.5 * 9e-4);
  EXPECT_DOUBLE_EQ(warm(10), 1e-3);
  EXPECT_NEAR(warm(60), 0.5e-3, 1e-15);

  // What an optimizer takes: a constant or a schedule, and says which in its config.
  EXPECT_EQ(nn::Adam(2e-3).config(),
            "Adam(learning_rate=0.002, beta_1=0.9, beta_2=0.999, epsilon=1e-07)");
  EXPECT_EQ(nn::SGD(nn::ExponentialDecay(0.1, 100, 0.96, true), 0.9).config(),
            "SGD(learning_rate=ExponentialDecay(initial_learning_rate=0.1, decay_steps=100, "
            "decay_rate=0.96, staircase=True), momentum=0.9, nesterov=False)");
}

TEST(Schedules, BadArgumentsAreRefusedByName) {
  auto message = [](auto make) -> std::string {
    try {
      make();
    } catch (const dlrt::Error& e) {
      EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
      return e.message();
    }
    return "no error";
  };
  EXPECT_EQ(message([] { nn::ExponentialDecay(0.1, 0, 0.5); }),
            "ExponentialDecay: decay_steps must be >= 1");
  EXPECT_EQ(message([] {
              nn::PiecewiseConstantDecay({10, 20}, {1.0, 0.5});
            }),
            "PiecewiseConstantDecay: 2 boundaries need 3 values, got 2");
  EXPECT_EQ(message([] {
              nn::PiecewiseConstantDecay({20, 10}, {1.0, 0.5, 0.1});
            }),
            "PiecewiseConstantDecay: boundaries must increase, got 20 then 10");
  EXPECT_EQ(message([] { nn::CosineDecay(1.0, 10, 2.0); }),
            "CosineDecay: alpha must be in [0, 1], got 2");
  EXPECT_EQ(message([] { nn::CosineDecay(1.0, 10, 0.0, 0.0, 5); }),
            "CosineDecay: warmup_steps > 0 needs warmup_target > 0");
  EXPECT_NE(message([] { nn::Adam(-1.0); }).find("learning_rate must be > 0"), std::string::npos);
  EXPECT_NE(message([] { nn::SGD(0.0); }).find("learning_rate must be > 0"), std::string::npos);
}

// The rate of step k is the schedule at k: a 2-epoch fit of one step per epoch under
// PiecewiseConstantDecay({0}, {0.1, 0.03}) equals one epoch at SGD(0.1), a checkpoint, and
// one more epoch at SGD(0.03) resumed from it, bit for bit — so the compiled step read the
// new rate without being rebuilt, and the first step after load_weights wrote its own rate
// over the checkpoint's.
TEST(Schedules, EachStepUsesTheScheduleAtItsStep) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  two_classes(64, 3, &x, &y);
  const std::string path = ::testing::TempDir() + "nn_schedule_test.safetensors";

  auto scheduled = mlp(ctx, nn::SGD(nn::PiecewiseConstantDecay({0}, {0.1, 0.03}), 0.9));
  scheduled->fit(x, y, quiet(2, 64));
  EXPECT_EQ(state_value(*scheduled, "optimizer/learning_rate"), 0.03f);

  auto first = mlp(ctx, nn::SGD(0.1, 0.9));
  first->fit(x, y, quiet(1, 64));
  EXPECT_EQ(state_value(*first, "optimizer/learning_rate"), 0.1f);
  first->save_weights(path);
  EXPECT_TRUE(dlrt::SafeTensors::open(path).find("optimizer/learning_rate").has_value());
  auto second = mlp(ctx, nn::SGD(0.03, 0.9));
  second->load_weights(path);
  EXPECT_EQ(state_value(*second, "optimizer/learning_rate"), 0.1f);  // the file's, until fit
  nn::FitOptions rest = quiet(2, 64);
  rest.initial_epoch = 1;
  second->fit(x, y, rest);
  EXPECT_EQ(state_value(*second, "optimizer/learning_rate"), 0.03f);
  expect_same_weights(*scheduled, *second);

  // And the schedule did change the result: a constant 0.1 for both steps differs.
  auto constant = mlp(ctx, nn::SGD(0.1, 0.9));
  constant->fit(x, y, quiet(2, 64));
  EXPECT_NE(constant->state()[0].values, scheduled->state()[0].values);
  std::remove(path.c_str());
}

// A resumed fit continues the curve: 3 epochs of Adam on a cosine decay equal 1 epoch, a
// checkpoint, and 2 more in a new model, bit for bit (the schedule is a function of the
// restored step count).
TEST(Schedules, ResumedFitContinuesTheCurve) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  two_classes(100, 4, &x, &y);  // 4 steps of 32 per epoch
  const std::string path = ::testing::TempDir() + "nn_schedule_resume.safetensors";
  const nn::Adam adam(nn::CosineDecay(0.02, 12));
  auto whole = mlp(ctx, adam);
  whole->fit(x, y, quiet(3, 32));
  // After 12 steps the cosine is at its end: the last step (k = 11) ran at 0.02 * 0.5 *
  // (1 + cos(pi * 11 / 12)).
  EXPECT_FLOAT_EQ(
      state_value(*whole, "optimizer/learning_rate"),
      static_cast<float>(0.02 * 0.5 * (1 + std::cos(3.14159265358979323846 * 11 / 12))));

  auto first = mlp(ctx, adam);
  nn::FitOptions f = quiet(1, 32);
  f.callbacks.push_back(std::make_shared<nn::ModelCheckpoint>(path));
  first->fit(x, y, f);
  EXPECT_NE(dlrt::SafeTensors::open(path).metadata("optimizer").value_or("").find("CosineDecay("),
            std::string::npos);
  auto resumed = mlp(ctx, adam);
  resumed->load_weights(path);
  nn::FitOptions rest = quiet(3, 32);
  rest.initial_epoch = resumed->epoch();
  resumed->fit(x, y, rest);
  expect_same_weights(*whole, *resumed);
  EXPECT_EQ(state_value(*whole, "optimizer/learning_rate"),
            state_value(*resumed, "optimizer/learning_rate"));
  std::remove(path.c_str());
}

}  // namespace
