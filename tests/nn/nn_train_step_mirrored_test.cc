// nn_train_step_mirrored_test.cc: custom steps (nn::TrainStep) under nn::MirroredStrategy on
// CPU logical devices — the step on the global batch split over replicas equals the step on
// one device within float tolerance, moving statistics are the replicas' mean, two optimizers
// with Dropout and random_normal stay identical on every replica and resume exactly, results
// come back averaged (scalars) and concatenated (batches), and the split rule is enforced.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;
using nn_test::error_of;
using nn_test::rows;

namespace {

// n random "images" (n, 8, 8, 1) f32 in [0, 1) and labels (n) i32 in [0, 4).
void images(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> xs(static_cast<size_t>(n) * 64);
  for (float& v : xs) v = u(gen);
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) ys.push_back(static_cast<int32_t>(gen() % 4));
  *x = nn::Array::of<float>({n, 8, 8, 1}, xs);
  *y = nn::Array::of<int32_t>({n}, ys);
}

std::unique_ptr<nn::Sequential> cnn(const dlrt::Context& ctx) {
  auto m = std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{nn::Input({8, 8, 1}), nn::Conv2D(4, {3, 3}, "relu"),
                                               nn::MaxPool2D(), nn::Flatten(),
                                               nn::Dense(8, "relu"), nn::Dense(4)});
  nn::CompileConfig c;
  c.seed = 11;
  m->compile(c);
  return m;
}

// max |a - b| / max(1, max |a|) over every variable of the same name.
double max_rel_diff(const std::vector<nn::Model::NamedValue>& a,
                    const std::vector<nn::Model::NamedValue>& b) {
  double worst = 0;
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    double scale = 1, diff = 0;
    for (size_t k = 0; k < a[i].values.size(); ++k) {
      scale = std::max(scale, std::fabs(double(a[i].values[k])));
      diff = std::max(diff, std::fabs(double(a[i].values[k]) - double(b[i].values[k])));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

void expect_replicas_identical(nn::TrainStep& step, size_t replicas) {
  const auto first = step.state(0);
  for (size_t r = 1; r < replicas; ++r) {
    const auto other = step.state(r);
    ASSERT_EQ(first.size(), other.size());
    for (size_t i = 0; i < first.size(); ++i)
      EXPECT_EQ(first[i].values, other[i].values) << "replica " << r << ": " << first[i].name;
  }
}

nn::StepFunction classifier_step(nn::Model& m, const nn::Loss& loss, const nn::Optimizer& opt) {
  return [&m, &loss, &opt](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value logits = m(t.input("x"));
    dlrt::Value l = t.loss(loss, t.input("y"), logits);
    t.minimize(l, opt, m.trainable_variables());
    return {{"loss", l}, {"logits", logits}};
  };
}

// Four steps of 24 rows on one device and over `replicas` CPU logical devices.
void mirrored_equals_single(int replicas) {
  dlrt::Context ctx = nn_test::cpu_context(replicas);
  nn::Array x, y;
  images(96, 1, &x, &y);
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(1e-2);

  auto single = cnn(ctx);
  nn::StepOptions one;
  one.device = "/CPU:0";
  nn::TrainStep s(ctx, classifier_step(*single, loss, adam), one);

  nn::MirroredStrategy strategy(ctx);
  ASSERT_EQ(strategy.num_replicas_in_sync(), replicas);
  auto mirrored = cnn(ctx);
  std::unique_ptr<nn::TrainStep> m;
  {
    nn::StrategyScope scope(strategy);  // a step made in the scope runs under the strategy
    m = std::make_unique<nn::TrainStep>(ctx, classifier_step(*mirrored, loss, adam));
  }
  ASSERT_EQ(m->replicas_in_sync(), replicas);

  for (int64_t first = 0; first < 96; first += 24) {
    const nn::Array xb = rows(x, first, 24), yb = rows(y, first, 24);
    const nn::Logs a = s.run({{"x", xb}, {"y", yb}});
    const nn::Logs b = m->run({{"x", xb}, {"y", yb}});
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].first, "loss");
    EXPECT_NEAR(b[0].second, a[0].second, 1e-5) << "the mean of the replicas' losses";
    // The logits of every replica's rows, in order: the global batch's.
    const nn::Array la = s.output("logits"), lb = m->output("logits");
    ASSERT_EQ(lb.dims(), (std::vector<int64_t>{24, 4}));
    const std::vector<float> va = la.values<float>(), vb = lb.values<float>();
    for (size_t k = 0; k < va.size(); ++k) ASSERT_NEAR(vb[k], va[k], 1e-4) << "logit " << k;
  }
  EXPECT_LT(max_rel_diff(s.state(), m->state()), 1e-4)
      << "mirrored over " << replicas << " devices drifted from one device";
  expect_replicas_identical(*m, static_cast<size_t>(replicas));
  // The model gets the trained weights back and predicts as the single-device one.
  EXPECT_LT(max_rel_diff(single->state(), mirrored->state()), 1e-4);
  const std::vector<float> pa = single->predict(x).values<float>(),
                           pb = mirrored->predict(x).values<float>();
  for (size_t k = 0; k < pa.size(); ++k) ASSERT_NEAR(pb[k], pa[k], 1e-3) << "prediction " << k;
  EXPECT_NE(s.state()[0].values, cnn(ctx)->state()[0].values) << "the steps trained nothing";
}

TEST(TrainStepMirrored, TwoCpuDevicesEqualOneDevice) { mirrored_equals_single(2); }
TEST(TrainStepMirrored, ThreeCpuDevicesEqualOneDevice) { mirrored_equals_single(3); }

// A step that only runs BatchNormalization in training mode: its moving statistics after one
// run are the mean of what one device computes from each replica's rows alone.
TEST(TrainStepMirrored, MovingStatisticsAreTheReplicasMean) {
  dlrt::Context ctx = nn_test::cpu_context(2);
  nn::Input in({3});
  auto make = [&] {
    auto m = std::make_unique<nn::Model>(ctx, in, nn::BatchNormalization()(in), "bn");
    m->compile();
    return m;
  };
  auto bn_step = [](nn::Model& m) {
    return [&m](nn::Tape& t) -> nn::StepMetrics {
      return {{"mean", t.mean(m({t.input("x")}, true).at(0))}};
    };
  };
  std::mt19937 gen(4);
  std::normal_distribution<float> n(2.f, 3.f);
  std::vector<float> v(16 * 3);
  for (float& f : v) f = n(gen);
  const nn::Array x = nn::Array::of<float>({16, 3}, v);

  std::vector<std::vector<nn::Model::NamedValue>> halves;
  for (int h = 0; h < 2; ++h) {
    auto m = make();
    nn::StepOptions one;
    one.device = "/CPU:0";
    nn::TrainStep s(ctx, bn_step(*m), one);
    const nn::Array part = rows(x, h * 8, 8);
    s.run({{"x", part}});
    halves.push_back(s.state());
  }
  nn::MirroredStrategy strategy(ctx);
  auto m = make();
  nn::StepOptions o;
  o.strategy = &strategy;
  nn::TrainStep s(ctx, bn_step(*m), o);
  s.run({{"x", x}});
  const auto got = s.state();
  int checked = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].name.find("moving_") == std::string::npos) continue;
    for (size_t k = 0; k < got[i].values.size(); ++k)
      EXPECT_NEAR(got[i].values[k], 0.5f * (halves[0][i].values[k] + halves[1][i].values[k]),
                  1e-5)
          << got[i].name << "[" << k << "]";
    EXPECT_NE(got[i].values, halves[0][i].values) << got[i].name << ": replica 1 ignored";
    ++checked;
  }
  EXPECT_EQ(checked, 2) << "moving_mean and moving_variance";
  expect_replicas_identical(s, 2);
}

// A GAN-like step: two models, two optimizers, Dropout and random_normal (salted per replica).
struct Pair {
  std::unique_ptr<nn::Model> gen, disc;
  nn::Input z_in{{4}}, x_in{{6}};
  explicit Pair(const dlrt::Context& ctx) {
    gen = std::make_unique<nn::Model>(ctx, z_in, nn::Dense(6, "tanh")(nn::Dense(8, "relu")(z_in)),
                                      "generator");
    nn::SymbolicTensor d = nn::Dropout(0.25)(nn::Dense(8, "relu")(x_in));
    disc = std::make_unique<nn::Model>(ctx, x_in, nn::Dense(1)(d), "discriminator");
    nn::CompileConfig c;
    c.seed = 3;
    gen->compile(c);
    disc->compile(c);
  }
};

nn::StepFunction pair_step(Pair& p, const nn::Loss& bce, const nn::Optimizer& d_opt,
                           const nn::Optimizer& g_opt) {
  return [&p, &bce, &d_opt, &g_opt](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value real = t.input("x");
    dlrt::Value fake = (*p.gen)(t.random_normal({real.dims()[0], 4}));
    dlrt::Value real_logits = (*p.disc)(real), fake_logits = (*p.disc)(fake);
    dlrt::Value d_loss = t.op("add", {t.loss(bce, t.ones_like(real_logits), real_logits),
                                      t.loss(bce, t.zeros_like(fake_logits), fake_logits)});
    dlrt::Value g_loss = t.loss(bce, t.ones_like(fake_logits), fake_logits);
    t.minimize(d_loss, d_opt, p.disc->trainable_variables(), "d_opt");
    t.minimize(g_loss, g_opt, p.gen->trainable_variables(), "g_opt");
    return {{"d_loss", d_loss}, {"g_loss", g_loss}};
  };
}

nn::Array real_batch(int step) {
  std::mt19937 gen(100 + step);
  std::normal_distribution<float> n(0.5f, 0.2f);
  std::vector<float> v(8 * 6);
  for (float& f : v) f = n(gen);
  return nn::Array::of<float>({8, 6}, v);
}

TEST(TrainStepMirrored, TwoOptimizersStayInSyncAndResumeExactly) {
  dlrt::Context ctx = nn_test::cpu_context(2);
  nn::MirroredStrategy strategy(ctx);
  nn::BinaryCrossentropy bce(true);
  nn::Adam d_opt(2e-3, 0.5), g_opt(2e-3, 0.5);
  nn::StepOptions o;
  o.strategy = &strategy;
  o.seed = 9;
  const std::string path = ::testing::TempDir() + "mirrored_pair_step.safetensors";

  Pair a(ctx);
  std::vector<nn::Logs> uninterrupted;
  {
    nn::TrainStep step(ctx, pair_step(a, bce, d_opt, g_opt), o);
    for (int k = 0; k < 4; ++k) {
      if (k == 2) step.save(path);
      uninterrupted.push_back(step.run({{"x", real_batch(k)}}));
    }
    expect_replicas_identical(step, 2);
    for (const auto& l : uninterrupted.back()) EXPECT_TRUE(std::isfinite(l.second)) << l.first;
  }
  Pair b(ctx);
  nn::TrainStep resumed(ctx, pair_step(b, bce, d_opt, g_opt), o);
  resumed.load(path);
  EXPECT_EQ(resumed.runs(), 2u);
  for (int k = 2; k < 4; ++k) {
    const nn::Logs logs = resumed.run({{"x", real_batch(k)}});
    for (size_t i = 0; i < logs.size(); ++i)
      EXPECT_EQ(logs[i].second, uninterrupted[k][i].second) << logs[i].first << " at step " << k;
  }
  EXPECT_EQ(a.gen->state()[0].values, b.gen->state()[0].values);
  EXPECT_EQ(a.disc->state()[0].values, b.disc->state()[0].values);
  std::remove(path.c_str());
}

TEST(TrainStepMirrored, TheSplitRuleAndOptionsAreChecked) {
  dlrt::Context ctx = nn_test::cpu_context(2);
  nn::MirroredStrategy strategy(ctx);
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(1e-2);
  auto model = cnn(ctx);
  nn::StepOptions o;
  o.strategy = &strategy;
  nn::TrainStep step(ctx, classifier_step(*model, loss, adam), o);
  nn::Array x, y;
  images(7, 2, &x, &y);
  auto [code, message] = error_of([&] { step.run({{"x", x}, {"y", y}}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(message.find("feed 'x'"), std::string::npos) << message;
  EXPECT_NE(message.find("multiple of 2"), std::string::npos) << message;
  // The step stays usable: a batch that splits runs.
  images(8, 2, &x, &y);
  EXPECT_EQ(step.run({{"x", x}, {"y", y}}).size(), 1u);

  nn::StepOptions both = o;
  both.device = "/CPU:0";
  std::tie(code, message) =
      error_of([&] { nn::TrainStep(ctx, classifier_step(*model, loss, adam), both); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(message.find("device"), std::string::npos) << message;
  std::tie(code, message) = error_of([&] { step.state(2); });
  EXPECT_EQ(code, DLRT_OUT_OF_RANGE);
}

}  // namespace
