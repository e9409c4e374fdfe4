// nn_train_step_test.cc: custom steps (nn::TrainStep, nn::Tape; train_step.hpp) — fit's step
// reproduced bit for bit, the weights lent between a step and its models, two optimizers in
// one step, checkpoint resume, retracing, and each bad input named — and the Model additions
// that go with them: train_on_batch / test_on_batch, trainable flags, compile() for
// inference, and prediction caches keyed by dtype.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;
using nn_test::error_of;
using nn_test::rows;

namespace {

// n random "images" (n, 12, 12, 1) f32 in [0, 1) and labels (n) i32 in [0, 10).
void images(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> xs(static_cast<size_t>(n) * 144);
  for (float& v : xs) v = u(gen);
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) ys.push_back(static_cast<int32_t>(gen() % 10));
  *x = nn::Array::of<float>({n, 12, 12, 1}, xs);
  *y = nn::Array::of<int32_t>({n}, ys);
}

// The reference CNN's layer kinds (samples/mnist_cnn), sized for 12x12 inputs.
std::unique_ptr<nn::Sequential> cnn(const dlrt::Context& ctx) {
  return std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{
               nn::Input({12, 12, 1}), nn::Conv2D(8, {3, 3}, "relu"), nn::MaxPool2D({2, 2}),
               nn::Conv2D(16, {3, 3}, "relu"), nn::Flatten(), nn::Dense(16, "relu"),
               nn::Dense(10)});
}

std::vector<float> values_of(nn::Model& m, const std::string& name) {
  for (const auto& v : m.state())
    if (v.name == name) return v.values;
  ADD_FAILURE() << "no variable " << name;
  return {};
}

nn::FitOptions quiet_fit(int64_t batch) {
  nn::FitOptions o;
  o.batch_size = batch;
  o.shuffle = false;
  o.progress.verbose = 0;
  return o;
}

TEST(TrainStep, ReproducesFitsStepBitForBit) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  images(64, 1, &x, &y);
  nn::CompileConfig config;
  config.seed = 7;
  auto fitted = cnn(ctx);
  fitted->compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(true), {}, config);
  fitted->fit(x, y, quiet_fit(32));

  auto custom = cnn(ctx);
  custom->compile(config);  // no optimizer: the step has its own
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(1e-3);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value logits = (*custom)(t.input("x"));
    dlrt::Value l = t.loss(loss, t.input("y"), logits);
    t.minimize(l, adam, custom->trainable_variables());
    return {{"loss", l}};
  });
  for (int64_t first = 0; first < 64; first += 32) {
    const nn::Array xb = rows(x, first, 32), yb = rows(y, first, 32);
    const nn::Logs logs = step.run({{"x", xb}, {"y", yb}});
    ASSERT_EQ(logs.size(), 1u);
    EXPECT_EQ(logs[0].first, "loss");
    EXPECT_TRUE(std::isfinite(logs[0].second));
  }
  EXPECT_EQ(step.runs(), 2u);
  // custom->state() takes the step's weights back first.
  for (const auto& v : fitted->state()) {
    if (v.name.rfind("optimizer/", 0) == 0 || v.name.find("/kernel/") != std::string::npos ||
        v.name.find("/bias/") != std::string::npos)
      continue;  // slots and counters: fit's own
    EXPECT_EQ(values_of(*custom, v.name), v.values) << v.name;
  }
  // And the trained weights predict: the same outputs as the fitted model.
  const nn::Array a = fitted->predict(x), b = custom->predict(x);
  EXPECT_EQ(a.bytes(), b.bytes());
}

// A tiny GAN: two models, two optimizers, BatchNormalization and Dropout, random_normal.
struct Gan {
  std::unique_ptr<nn::Model> gen, disc;
  nn::Input z_in{{4}}, x_in{{6}};
  Gan(const dlrt::Context& ctx) {
    nn::SymbolicTensor h = nn::Dense(8, "relu")(z_in);
    h = nn::BatchNormalization()(h);
    gen = std::make_unique<nn::Model>(ctx, z_in, nn::Dense(6, "tanh")(h), "generator");
    nn::SymbolicTensor d = nn::Dropout(0.25)(nn::Dense(8, "relu")(x_in));
    disc = std::make_unique<nn::Model>(ctx, x_in, nn::Dense(1)(d), "discriminator");
    nn::CompileConfig c;
    c.seed = 3;
    gen->compile(c);
    disc->compile(c);
  }
};

nn::StepFunction gan_step(Gan& m, const nn::Loss& bce, const nn::Optimizer& d_opt,
                          const nn::Optimizer& g_opt) {
  return [&m, &bce, &d_opt, &g_opt](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value real = t.input("x");
    dlrt::Value z = t.random_normal({real.dims()[0], 4});
    dlrt::Value fake = (*m.gen)(z);
    dlrt::Value real_logits = (*m.disc)(real), fake_logits = (*m.disc)(fake);
    dlrt::Value d_loss = t.op("add", {t.loss(bce, t.ones_like(real_logits), real_logits),
                                      t.loss(bce, t.zeros_like(fake_logits), fake_logits)});
    dlrt::Value g_loss = t.loss(bce, t.ones_like(fake_logits), fake_logits);
    t.minimize(d_loss, d_opt, m.disc->trainable_variables(), "d_opt");
    t.minimize(g_loss, g_opt, m.gen->trainable_variables(), "g_opt");
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

TEST(TrainStep, TwoOptimizersUpdateTheirModelsAndResumeExactly) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::BinaryCrossentropy bce(true);
  nn::Adam d_opt(2e-3, 0.5), g_opt(2e-3, 0.5);

  Gan a(ctx);
  const std::vector<float> g0 = values_of(*a.gen, "dense/kernel");
  const std::vector<float> mean0 = values_of(*a.gen, "batch_normalization/moving_mean");
  std::vector<nn::Logs> uninterrupted;
  {
    nn::TrainStep step(ctx, gan_step(a, bce, d_opt, g_opt));
    for (int s = 0; s < 6; ++s) {
      const nn::Array xb = real_batch(s);
      uninterrupted.push_back(step.run({{"x", xb}}));
    }
  }  // the step gives the models their weights back
  EXPECT_NE(values_of(*a.gen, "dense/kernel"), g0);  // the generator was trained
  EXPECT_NE(values_of(*a.gen, "batch_normalization/moving_mean"), mean0);  // and BN updated

  const std::string path = ::testing::TempDir() + "/gan_step.safetensors";
  Gan b(ctx);
  {
    nn::TrainStep step(ctx, gan_step(b, bce, d_opt, g_opt));
    for (int s = 0; s < 3; ++s) {
      const nn::Array xb = real_batch(s);
      EXPECT_EQ(step.run({{"x", xb}}), uninterrupted[static_cast<size_t>(s)]);
    }
    step.save(path);
  }
  Gan c(ctx);  // fresh weights: the checkpoint holds everything
  nn::TrainStep step(ctx, gan_step(c, bce, d_opt, g_opt));
  step.load(path);
  EXPECT_EQ(step.runs(), 3u);
  for (int s = 3; s < 6; ++s) {
    const nn::Array xb = real_batch(s);
    EXPECT_EQ(step.run({{"x", xb}}), uninterrupted[static_cast<size_t>(s)]) << "step " << s;
  }
  for (const auto& v : a.gen->state()) EXPECT_EQ(values_of(*c.gen, v.name), v.values) << v.name;
  for (const auto& v : a.disc->state()) EXPECT_EQ(values_of(*c.disc, v.name), v.values) << v.name;
  std::filesystem::remove(path);
}

TEST(TrainStep, LendsWeightsToAndFromItsModels) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(16, 2, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(2)});
  m.compile();
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(0.1);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value l = t.loss(loss, t.input("y"), m(t.input("x")));
    t.minimize(l, adam, m.trainable_variables());
    return {{"loss", l}};
  });
  step.run({{"x", x}, {"y", y}});
  const std::vector<float> after1 = values_of(m, "dense/kernel");  // reclaimed from the step
  // A write to the model is what the next run starts from.
  std::vector<nn::Model::NamedValue> zeros = {{"dense/kernel", {4, 2}, std::vector<float>(8, 0.f)},
                                              {"dense/bias", {2}, std::vector<float>(2, 0.f)}};
  m.set_state(zeros);
  const double loss_from_zeros = step.run({{"x", x}, {"y", y}})[0].second;
  EXPECT_NEAR(loss_from_zeros, std::log(2.0), 1e-6);  // zero logits: ln 2 for two classes
  EXPECT_NE(values_of(m, "dense/kernel"), std::vector<float>(8, 0.f));
  EXPECT_NE(after1, std::vector<float>(8, 0.f));
}

TEST(TrainStep, RetracesForNewFeedShapesKeepingTheValues) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(12, 3, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(2)});
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(0.05);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value l = t.loss(loss, t.input("y"), m(t.input("x")));
    t.minimize(l, adam, m.trainable_variables());
    return {{"loss", l}};
  });
  double first = 0, last = 0;
  for (int epoch = 0; epoch < 20; ++epoch) {
    const nn::Array xa = rows(x, 0, 8), ya = rows(y, 0, 8), xb = rows(x, 8, 4), yb = rows(y, 8, 4);
    const double l = step.run({{"x", xa}, {"y", ya}})[0].second;
    step.run({{"x", xb}, {"y", yb}});  // a partial batch: traced again, state carried over
    if (epoch == 0) first = l;
    last = l;
  }
  EXPECT_LT(last, first * 0.7) << "training across retraces did not continue";
  EXPECT_EQ(step.runs(), 40u);
}

TEST(TrainStep, BadInputIsNamed) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(8, 4, &x, &y);
  nn::Sequential a(ctx, {nn::Input({4}), nn::Dense(2)}, "model_a");
  nn::Sequential b(ctx, {nn::Input({4}), nn::Dense(3)}, "model_b");
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam;
  auto run_with = [&](std::function<nn::StepMetrics(nn::Tape&)> fn,
                      std::vector<nn::Feed> feeds = {}) {
    if (feeds.empty()) feeds = {{"x", x}, {"y", y}};
    return error_of([&] { nn::TrainStep(ctx, fn).run(feeds); });
  };
  // A non-scalar loss.
  auto e = run_with([&](nn::Tape& t) -> nn::StepMetrics {
    t.input("y");
    dlrt::Value out = a(t.input("x"));
    t.minimize(out, adam, a.trainable_variables());
    return {};
  });
  EXPECT_EQ(e.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(e.second.find("f32(8, 2)"), std::string::npos) << e.second;
  EXPECT_NE(e.second.find("scalar"), std::string::npos) << e.second;
  // An optimizer given no variables.
  e = run_with([&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value l = t.loss(loss, t.input("y"), a(t.input("x")));
    t.minimize(l, adam, {});
    return {};
  });
  EXPECT_NE(e.second.find("given no variables"), std::string::npos) << e.second;
  // A variable the loss does not reach (b is called, but a's loss does not use it).
  e = run_with([&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value la = t.loss(loss, t.input("y"), a(t.input("x")));
    dlrt::Value lb = t.mean(b(t.input("x")));
    t.minimize(la, adam, b.trainable_variables());
    return {{"lb", lb}};
  });
  EXPECT_NE(e.second.find("does not depend on variable 'model_b/dense/kernel'"), std::string::npos)
      << e.second;
  // A variable of a model the step never calls.
  e = run_with([&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value l = t.loss(loss, t.input("y"), a(t.input("x")));
    t.minimize(l, adam, b.trainable_variables());
    return {};
  });
  EXPECT_NE(e.second.find("of model model_b is not in this step"), std::string::npos) << e.second;
  // An input the run does not feed, and a feed the step does not read.
  e = run_with([&](nn::Tape& t) -> nn::StepMetrics { return {{"m", t.mean(a(t.input("z")))}}; });
  EXPECT_NE(e.second.find("reads input 'z', which the run does not feed (feeds: x, y)"),
            std::string::npos)
      << e.second;
  e = run_with([&](nn::Tape& t) -> nn::StepMetrics { return {{"m", t.mean(a(t.input("x")))}}; });
  EXPECT_NE(e.second.find("feed 'y' is not read"), std::string::npos) << e.second;
  // A model called on the wrong shape, and a non-scalar metric.
  const nn::Array wide = nn::Array::of<float>({8, 5}, std::vector<float>(40, 0.f));
  e = run_with([&](nn::Tape& t) -> nn::StepMetrics { return {{"m", t.mean(a(t.input("w")))}}; },
               {{"w", wide}});
  EXPECT_NE(e.second.find("model_a: input 0 is f32(8, 5)"), std::string::npos) << e.second;
  // A result that is not a scalar is an output, read after the run.
  {
    nn::TrainStep outputs(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
      dlrt::Value out = a(t.input("w"), /*training=*/false);
      return {{"out", out}, {"m", t.mean(out)}};
    });
    EXPECT_EQ(error_of([&] { outputs.output("out"); }).first, DLRT_NOT_FOUND);
    const nn::Logs logs = outputs.run({{"w", x}});
    ASSERT_EQ(logs.size(), 1u);  // only the scalar
    const nn::Array out = outputs.output("out");
    EXPECT_EQ(out.dims(), (std::vector<int64_t>{8, 2}));
    const nn::Array direct = a.predict(x);
    EXPECT_EQ(out.bytes(), direct.bytes());
    e = error_of([&] { outputs.output("nope"); });
    EXPECT_NE(e.second.find("results: out, m"), std::string::npos) << e.second;
  }
  // A model called on Values outside any step.
  dlrt::Graph g(ctx);
  e = error_of([&] { a(g.placeholder("p", DLRT_F32, {2, 4})); });
  EXPECT_EQ(e.first, DLRT_FAILED_PRECONDITION);
  // A failed trace leaves the models usable.
  EXPECT_EQ(a.predict(x).dims(), (std::vector<int64_t>{8, 2}));
}

TEST(ModelOnBatch, TrainOnBatchIsFitsStepAndTestOnBatchIsEvaluate) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(16, 5, &x, &y);
  auto make = [&] {
    auto m = std::make_unique<nn::Sequential>(
        ctx, std::initializer_list<nn::LayerRef>{nn::Input({4}), nn::Dense(8, "relu"),
                                                 nn::Dense(2)});
    m->compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"});
    return m;
  };
  auto fitted = make(), batched = make();
  nn::FitOptions o = quiet_fit(16);
  o.epochs = 3;
  fitted->fit(x, y, o);
  nn::Logs last;
  for (int s = 0; s < 3; ++s) last = batched->train_on_batch(x, y);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[1].first, "accuracy");
  for (const auto& v : fitted->state()) EXPECT_EQ(values_of(*batched, v.name), v.values) << v.name;
  EXPECT_EQ(batched->test_on_batch(x, y), batched->evaluate(x, y, 16));
  // Without a loss there is nothing to train on.
  nn::Sequential bare(ctx, {nn::Input({4}), nn::Dense(2)});
  EXPECT_EQ(error_of([&] { bare.train_on_batch(x, y); }).first, DLRT_FAILED_PRECONDITION);
}

TEST(ModelTrainable, FrozenLayersKeepTheirWeights) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(16, 6, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(2)});
  m.get_layer("dense").set_trainable(false);
  m.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true));
  const std::vector<float> frozen = values_of(m, "dense/kernel");
  const std::vector<float> head = values_of(m, "dense_1/kernel");
  m.fit(x, y, quiet_fit(8));
  EXPECT_EQ(values_of(m, "dense/kernel"), frozen);
  EXPECT_NE(values_of(m, "dense_1/kernel"), head);
  const std::vector<nn::Variable> vars = m.trainable_variables();
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0].name, "dense_1/kernel");
  std::ostringstream s;
  m.summary(s);
  EXPECT_NE(s.str().find("Trainable params: 18"), std::string::npos) << s.str();
  EXPECT_NE(s.str().find("Non-trainable params: 40"), std::string::npos) << s.str();
  EXPECT_EQ(error_of([&] { m.get_layer("conv2d"); }).first, DLRT_NOT_FOUND);
}

TEST(ModelTrainable, FrozenBatchNormalizationRunsInInferenceMode) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(16, 8, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::BatchNormalization(), nn::Dense(2)});
  m.get_layer("batch_normalization").set_trainable(false);
  m.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true));
  const std::vector<float> mean = values_of(m, "batch_normalization/moving_mean");
  const std::vector<float> gamma = values_of(m, "batch_normalization/gamma");
  m.fit(x, y, quiet_fit(8));
  EXPECT_EQ(values_of(m, "batch_normalization/moving_mean"), mean);  // not moved
  EXPECT_EQ(values_of(m, "batch_normalization/gamma"), gamma);       // not trained
  // An unfrozen one moves its statistics in the same fit.
  nn::Sequential live(ctx, {nn::Input({4}), nn::BatchNormalization(), nn::Dense(2)});
  live.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true));
  live.fit(x, y, quiet_fit(8));
  EXPECT_NE(values_of(live, "batch_normalization/moving_mean"), mean);
}

TEST(ModelInference, CompileWithoutOptimizerPredictsAnyInputType) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Sequential m(ctx, {nn::Input({2, 2, 1}), nn::Flatten(), nn::Dense(3)});
  m.compile();  // inference: no optimizer, no loss
  const nn::Array u8 = nn::Array::of<uint8_t>({2, 2, 2, 1}, {0, 255, 51, 102, 255, 0, 0, 0});
  std::vector<float> f(8);
  for (size_t i = 0; i < 8; ++i) f[i] = static_cast<float>(u8.data()[i]) / 255.f;
  const nn::Array f32 = nn::Array::of<float>({2, 2, 2, 1}, f);
  // The same batch size as u8 then as f32: one executable per input type.
  const nn::Array a = m.predict(u8), b = m.predict(f32);
  EXPECT_EQ(a.dims(), b.dims());
  const float* pa = reinterpret_cast<const float*>(a.data());
  const float* pb = reinterpret_cast<const float*>(b.data());
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(pa[i], pb[i], 1e-6f);
  // fit and evaluate need an optimizer and a loss: a clear refusal.
  const nn::Array labels = nn::Array::of<int32_t>({2}, {0, 1});
  auto e = error_of([&] { m.fit(f32, labels); });
  EXPECT_EQ(e.first, DLRT_FAILED_PRECONDITION);
  EXPECT_NE(e.second.find("compile(optimizer, loss)"), std::string::npos) << e.second;
  // The weights save and load without optimizer state.
  const std::string path = ::testing::TempDir() + "/inference.safetensors";
  m.save_weights(path);
  m.load_weights(path);
  std::filesystem::remove(path);
  // An uncompiled model with an Input predicts too, as in Keras.
  nn::Sequential fresh(ctx, {nn::Input({2, 2, 1}), nn::Flatten(), nn::Dense(3)});
  EXPECT_EQ(fresh.predict(f32).dims(), (std::vector<int64_t>{2, 3}));
}

}  // namespace

namespace {

// Deployment: load_weights into a model scoped to a device this host lacks takes
// soft placement as predict does; with DLRT_CHECK_NUMERICS on, a checkpoint holding a NaN is
// refused, naming the tensor, and the model keeps its weights.
TEST(ModelDeploy, LoadWeightsTakesSoftPlacementAndChecksNumerics) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn_test::two_classes(8, 7, &x, &y);
  const std::string path = ::testing::TempDir() + "/deploy.safetensors";
  nn::Sequential trained(ctx, {nn::Input({4}), nn::Dense(2)});
  trained.compile();
  trained.save_weights(path);
  const nn::Array expected = trained.predict(x);

  nn::Sequential scoped(ctx, {nn::Input({4}), nn::Dense(2)});
  {
    nn::DeviceScope scope(scoped, "/GPU:0");  // no GPU in this context
    scoped.compile();
  }
  scoped.load_weights(path);  // placed on the CPU by soft placement, as predict is
  EXPECT_EQ(scoped.predict(x).bytes(), expected.bytes());

  // A NaN in the file.
  std::vector<float> kernel = values_of(trained, "dense/kernel"), bias(2, 0.f);
  kernel[5] = std::nanf("");
  const std::string bad = ::testing::TempDir() + "/nan.safetensors";
  dlrt::write_safetensors(bad,
                          {{"dense/kernel", DLRT_F32, {4, 2}, kernel.data(), kernel.size() * 4},
                           {"dense/bias", DLRT_F32, {2}, bias.data(), bias.size() * 4}},
                          {{"format", "dlrt.nn/1"}});
  nn_test::set_env("DLRT_CHECK_NUMERICS", "1");
  dlrt::Context checking = nn_test::cpu_context();
  nn_test::set_env("DLRT_CHECK_NUMERICS", nullptr);
  nn::Sequential m(checking, {nn::Input({4}), nn::Dense(2)});
  m.compile();
  const std::vector<float> before = values_of(m, "dense/kernel");
  auto e = error_of([&] { m.load_weights(bad); });
  EXPECT_EQ(e.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(e.second.find("'dense/kernel' holds NaN at element 5"), std::string::npos) << e.second;
  EXPECT_EQ(values_of(m, "dense/kernel"), before);
  // Without the setting the same file loads (the NaN is the user's to have).
  nn::Sequential lax(ctx, {nn::Input({4}), nn::Dense(2)});
  lax.compile();
  lax.load_weights(bad);
  EXPECT_TRUE(std::isnan(values_of(lax, "dense/kernel")[5]));
  std::filesystem::remove(path);
  std::filesystem::remove(bad);
}

}  // namespace
