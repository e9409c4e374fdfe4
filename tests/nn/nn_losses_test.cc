// nn_losses_test.cc: the losses of nn/losses.hpp beyond cross-entropy and MSE — built on
// constants and run on the cpu plugin, against values computed here by hand (in double):
// SparseCategoricalCrossentropy's ignore_class (padding left out of a sequence's mean),
// BinaryCrossentropy (from logits, stable for |logits| of 100; from probabilities, clipped to
// [1e-7, 1 - 1e-7] as Keras), MeanAbsoluteError, Huber (two deltas), kl_divergence_normal;
// the logits gradient sigmoid(x) - z stays finite; and a small model trained with
// BinaryCrossentropy on Fashion-MNIST (is the item worn on the upper body?) beats the
// majority class on held-out images.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace nn = dlrt::nn;

namespace {

dlrt::Context cpu_context() {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(DLRT_TEST_PLUGIN_DIR)
                           .search_default_paths(false)
                           .plugin_options("")
                           .visible_devices("CPU")
                           .log_level(DLRT_LOG_ERROR));
}

// Runs `build` on constants pred and target of shape `dims` and returns the fetched values.
template <typename Build>
std::vector<std::vector<float>> run_on(const std::vector<int64_t>& dims,
                                       const std::vector<float>& pred,
                                       const std::vector<float>& target, Build build) {
  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value p = g.constant<float>("pred", dims, pred);
  dlrt::Value t = g.constant<float>("target", dims, target);
  std::vector<dlrt::Value> fetch = build(g, p, t);
  dlrt::Executable exe = g.compile({}, fetch);
  std::vector<dlrt::Tensor> out(fetch.size());
  exe.run({}, out);
  std::vector<std::vector<float>> values;
  for (dlrt::Tensor& o : out) values.push_back(o.read<float>());
  return values;
}

std::vector<float> per_sample(const nn::Loss& loss, const std::vector<int64_t>& dims,
                              const std::vector<float>& pred, const std::vector<float>& target) {
  return run_on(dims, pred, target, [&](dlrt::Graph& g, dlrt::Value p, dlrt::Value t) {
           return std::vector<dlrt::Value>{loss.per_sample(g, p, loss.prepare_targets(g, t))};
         })
      .at(0);
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(std::isfinite(got[i])) << i;
    EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::fabs(want[i]))) << i;
  }
}

// The stable form, in double: max(x, 0) - x z + log1p(exp(-|x|)).
double bce_logits(double x, double z) {
  return std::max(x, 0.0) - x * z + std::log1p(std::exp(-std::fabs(x)));
}

TEST(NnLosses, BinaryCrossentropyFromLogitsIsStableForLargeLogits) {
  // Five samples of one logit each, |x| up to 100 (exp(100) overflows f32).
  const std::vector<float> x = {-100.f, -2.f, 0.f, 3.f, 100.f};
  const std::vector<float> z = {1.f, 0.f, 1.f, 0.3f, 0.f};
  const std::vector<float> got = per_sample(nn::BinaryCrossentropy(true), {5, 1}, x, z);
  std::vector<double> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(bce_logits(x[i], z[i]));
  expect_near_all(got, want, 1e-5);
  EXPECT_NEAR(got[0], 100.0, 1e-4);           // a confident wrong answer costs |x|
  EXPECT_NEAR(got[2], std::log(2.0), 1e-6);   // logit 0: log 2 whatever the target
  EXPECT_NEAR(got[4], 100.0, 1e-4);
  // (2, 3) samples: the mean over the three logits of each.
  const std::vector<float> x6 = {-50.f, 1.f, 2.f, 60.f, -0.5f, 0.25f};
  const std::vector<float> z6 = {0.f, 1.f, 0.f, 1.f, 0.5f, 0.f};
  const std::vector<float> got6 = per_sample(nn::BinaryCrossentropy(true), {2, 3}, x6, z6);
  expect_near_all(got6,
                  {(bce_logits(-50, 0) + bce_logits(1, 1) + bce_logits(2, 0)) / 3,
                   (bce_logits(60, 1) + bce_logits(-0.5, 0.5) + bce_logits(0.25, 0)) / 3},
                  1e-5);
}

// d/dx of softplus(x) - x z is sigmoid(x) - z: finite and right at |x| = 100 too, through
// Graph::gradients with respect to the logits.
TEST(NnLosses, BinaryCrossentropyLogitsGradientIsSigmoidMinusTarget) {
  const std::vector<float> x = {-100.f, -2.f, 0.f, 3.f, 100.f};
  const std::vector<float> z = {1.f, 0.f, 1.f, 0.3f, 0.f};
  const std::vector<std::vector<float>> out =
      run_on({5, 1}, x, z, [](dlrt::Graph& g, dlrt::Value p, dlrt::Value t) {
        dlrt::Value loss = g.op1("reduce_sum", {nn::BinaryCrossentropy(true).per_sample(g, p, t)});
        return g.gradients(loss, {p});
      });
  std::vector<double> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(1.0 / (1.0 + std::exp(-x[i])) - z[i]);
  expect_near_all(out.at(0), want, 1e-6);
}

TEST(NnLosses, BinaryCrossentropyOnProbabilitiesClipsAsKeras) {
  // p = 0 and 1 against the wrong target would be log(0): clipped to 1e-7 from either end.
  const std::vector<float> p = {0.f, 1.f, 0.5f, 0.9f, 0.2f, 1.f};
  const std::vector<float> z = {1.f, 0.f, 1.f, 1.f, 0.f, 1.f};
  const std::vector<float> got = per_sample(nn::BinaryCrossentropy(), {6, 1}, p, z);
  const double hi = double(float(1.0 - 1e-7));  // the upper bound as the f32 kernel holds it
  expect_near_all(got,
                  {-std::log(1e-7), -std::log(1.0 - hi), std::log(2.0), -std::log(0.9),
                   -std::log(0.8), -std::log(hi)},
                  1e-4);
  EXPECT_NEAR(got[0], 16.118, 1e-3);  // Keras' -log(1e-7)
}

// Keras' ignore_class: the batch's loss is the mean over the positions whose label is not
// the ignored class (the padding): per sample, its kept positions' sum times B / the batch's
// count; those positions get no gradient; an ignore_class outside the classes (-1) works too.
TEST(NnLosses, SparseCategoricalCrossentropyIgnoreClassAveragesTheKeptPositions) {
  const int64_t B = 3, T = 3, K = 4;
  std::vector<float> logits(B * T * K);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(1.7 * double(i));
  auto ce = [&](int64_t row, int64_t label) {  // -log softmax(logits[row])[label], in double
    double z = 0;
    for (int64_t k = 0; k < K; ++k) z += std::exp(double(logits[row * K + k]));
    return std::log(z) - logits[row * K + label];
  };
  // Labels: sample 0 "2 1 <pad>", sample 1 "<pad> <pad> <pad>", sample 2 "3 3 1".
  const std::vector<float> labels = {2, 1, 0, 0, 0, 0, 3, 3, 1};
  // 5 kept labels in the batch of 3: the mean of these is the sum over the 5, over 5.
  const std::vector<double> want = {(ce(0, 2) + ce(1, 1)) * 3 / 5, 0.0,
                                    (ce(6, 3) + ce(7, 3) + ce(8, 1)) * 3 / 5};
  // Per-sample losses and the gradient of their sum with respect to the logits.
  auto run = [&](const nn::Loss& loss, const std::vector<int32_t>& ids) {
    dlrt::Context ctx = cpu_context();
    dlrt::Graph g(ctx);
    dlrt::Value p = g.constant<float>("logits", {B, T, K}, logits);
    dlrt::Value t = g.constant<int32_t>("labels", {B, T}, ids);
    dlrt::Value per = loss.per_sample(g, p, loss.prepare_targets(g, t));
    std::vector<dlrt::Value> fetch = {per, g.gradients(g.op1("reduce_sum", {per}), {p}).at(0)};
    dlrt::Executable exe = g.compile({}, fetch);
    std::vector<dlrt::Tensor> out(fetch.size());
    exe.run({}, out);
    return std::make_pair(out[0].read<float>(), out[1].read<float>());
  };
  const std::vector<int32_t> ids(labels.begin(), labels.end());
  nn::SparseCategoricalCrossentropy loss(true, 0);
  const auto [got, grad] = run(loss, ids);
  expect_near_all(got, want, 1e-5);
  // The ignored positions' logits get no gradient.
  for (int64_t pos : {2, 3, 4, 5})
    for (int64_t k = 0; k < K; ++k) EXPECT_EQ(grad[pos * K + k], 0.f) << pos;
  EXPECT_NE(grad[0], 0.f);
  // Without ignore_class every position counts (the <pad>s as class 0).
  const std::vector<float> all = run(nn::SparseCategoricalCrossentropy(true), ids).first;
  EXPECT_NEAR(all[1], (ce(3, 0) + ce(4, 0) + ce(5, 0)) / 3, 1e-5);
  // The same labels with -1 for the padding, ignore_class -1.
  std::vector<int32_t> minus = ids;
  for (int i : {2, 3, 4, 5}) minus[i] = -1;
  expect_near_all(run(nn::SparseCategoricalCrossentropy(true, -1), minus).first, want, 1e-5);
}

TEST(NnLosses, MeanAbsoluteErrorAndHuber) {
  const std::vector<float> pred = {1.f, 2.f, 3.f, 4.f};
  const std::vector<float> target = {0.5f, 4.f, 3.f, 1.f};  // d = 0.5, -2, 0, 3
  expect_near_all(per_sample(nn::MeanAbsoluteError(), {2, 2}, pred, target), {1.25, 1.5}, 1e-6);
  // delta 1: 0.5 * 0.25 = 0.125 and 1 * (2 - 0.5) = 1.5; 0 and 1 * (3 - 0.5) = 2.5.
  expect_near_all(per_sample(nn::Huber(), {2, 2}, pred, target), {0.8125, 1.25}, 1e-6);
  // delta 2: 0.125 and 0.5 * 4 = 2 (|d| = delta: both pieces agree); 0 and 2 * (3 - 1) = 4.
  expect_near_all(per_sample(nn::Huber(2.0), {2, 2}, pred, target), {1.0625, 2.0}, 1e-6);
  // Rank 1 (one value a sample): no mean to take.
  expect_near_all(per_sample(nn::Huber(), {4}, pred, target), {0.125, 1.5, 0.0, 2.5}, 1e-6);
  EXPECT_THROW(nn::Huber(0.0), dlrt::Error);
}

TEST(NnLosses, KlDivergenceOfDiagonalGaussiansAgainstStandardNormal) {
  // Sample 0 is N(0, 1) itself: 0. Sample 1: mean (1, -1), variance (1, 0.25):
  // -0.5 * ((1 + 0 - 1 - 1) + (1 + log 0.25 - 1 - 0.25)).
  const std::vector<float> mean = {0.f, 0.f, 1.f, -1.f};
  const std::vector<float> log_var = {0.f, 0.f, 0.f, float(std::log(0.25))};
  const std::vector<float> got =
      run_on({2, 2}, mean, log_var, [](dlrt::Graph& g, dlrt::Value m, dlrt::Value lv) {
        return std::vector<dlrt::Value>{nn::kl_divergence_normal(g, m, lv)};
      }).at(0);
  expect_near_all(got, {0.0, -0.5 * (-1.0 + (std::log(0.25) - 0.25))}, 1e-6);

  dlrt::Context ctx = cpu_context();
  dlrt::Graph g(ctx);
  dlrt::Value a = g.placeholder("a", DLRT_F32, {2, 3});
  dlrt::Value b = g.placeholder("b", DLRT_F32, {2, 4});
  try {
    nn::kl_divergence_normal(g, a, b);
    FAIL() << "mismatched shapes accepted";
  } catch (const dlrt::Error& e) {
    EXPECT_NE(e.message().find("mean (2, 3) and log_var (2, 4)"), std::string::npos)
        << e.message();
  }
}

TEST(NnLosses, DenseTargetsAreCheckedByName) {
  const nn::Array u8 = nn::Array::of<uint8_t>({4, 1}, {0, 1, 1, 0});
  try {
    nn::BinaryCrossentropy(true).check_targets(u8, {1});
    FAIL() << "u8 targets accepted";
  } catch (const dlrt::Error& e) {
    EXPECT_NE(e.message().find("binary_crossentropy"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("f32"), std::string::npos) << e.message();
  }
  const nn::Array f = nn::Array::of<float>({4, 2}, std::vector<float>(8, 0.f));
  EXPECT_THROW(nn::Huber().check_targets(f, {1}), dlrt::Error);
  EXPECT_NO_THROW(nn::MeanAbsoluteError().check_targets(f, {2}));
}

// Fashion-MNIST, 1200 training images: is the item worn on the upper body (T-shirt/top 0,
// pullover 2, coat 4, shirt 6) or not? Flatten -> Dense(32, relu) -> Dense(1) logits under
// BinaryCrossentropy(from_logits) through Sequential::compile/fit. The loss falls, and on
// 500 test images the sign of the logit beats the majority class (about 60% "no") by far.
TEST(NnLosses, BinaryCrossentropyTrainsAnUpperBodyClassifierOnFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::FILE* probe = std::fopen((dir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << dir;
  std::fclose(probe);
  auto load = [&](const std::string& prefix, int64_t rows, nn::Array* x, nn::Array* y) {
    dlrt::IdxArray images(dir + prefix + "-images-idx3-ubyte.gz", rows);
    dlrt::IdxArray labels(dir + prefix + "-labels-idx1-ubyte.gz", rows);
    const uint8_t* px = images.data<uint8_t>();
    *x = nn::Array(DLRT_U8, {rows, 28, 28, 1}, std::vector<uint8_t>(px, px + rows * 28 * 28));
    const uint8_t* lb = labels.data<uint8_t>();
    std::vector<float> upper;
    for (int64_t i = 0; i < rows; ++i)
      upper.push_back(lb[i] == 0 || lb[i] == 2 || lb[i] == 4 || lb[i] == 6 ? 1.f : 0.f);
    *y = nn::Array::of<float>({rows, 1}, upper);
  };
  nn::Array x, y, tx, ty;
  load("train", 1200, &x, &y);
  load("t10k", 500, &tx, &ty);

  dlrt::Context ctx = cpu_context();
  nn::Sequential m(ctx, {nn::Input({28, 28, 1}), nn::Flatten(), nn::Dense(32, "relu"),
                         nn::Dense(1)});
  nn::CompileConfig cfg;
  cfg.seed = 7;
  m.compile(nn::Adam(2e-3), nn::BinaryCrossentropy(true), {}, cfg);
  nn::FitOptions f;
  f.epochs = 5;
  f.batch_size = 40;
  f.shuffle = true;
  f.progress.verbose = 0;
  nn::History h = m.fit(x, y, f);
  ASSERT_EQ(h.history["loss"].size(), 5u);
  for (double l : h.history["loss"]) EXPECT_TRUE(std::isfinite(l));
  EXPECT_LT(h.history["loss"].back(), 0.6 * h.history["loss"].front());

  const std::vector<float> logits = m.predict(tx, 100).values<float>();
  const std::vector<float> truth = ty.values<float>();
  ASSERT_EQ(logits.size(), truth.size());
  int right = 0, positives = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    right += (logits[i] > 0.f) == (truth[i] > 0.5f);
    positives += truth[i] > 0.5f;
  }
  const double accuracy = double(right) / double(truth.size());
  const double majority =
      double(std::max(positives, int(truth.size()) - positives)) / double(truth.size());
  EXPECT_GE(accuracy, 0.85) << "majority class " << majority;
  EXPECT_GT(accuracy, majority + 0.15);
  // evaluate() reports the same loss the model trains on.
  const nn::Logs ev = m.evaluate(tx, ty, 100);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev[0].first, "loss");
  EXPECT_TRUE(std::isfinite(ev[0].second));
  EXPECT_LT(ev[0].second, 0.5);
}

}  // namespace
