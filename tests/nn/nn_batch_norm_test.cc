// nn_batch_norm_test.cc: nn::BatchNormalization on the cpu plugin — a Conv2D ->
// BatchNormalization -> ReLU network learns a few hundred Fashion-MNIST images; the moving
// statistics after one step are the hand-computed formula (PyTorch's running-stat rule with
// its momentum 0.1 = 1 - Keras' 0.9, unbiased variance); evaluate and predict use the moving
// statistics (not the batch's) and change nothing; a checkpoint restores them exactly.
#include <dlrt/idx.hpp>
#include <dlrt/nn.hpp>
#include <dlrt/nn/plan.hpp>  // model.plan()
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;

nn::FitOptions quiet(int64_t epochs, int64_t batch) { return nn_test::quiet(epochs, batch, false); }

const std::vector<float>& state_of(const std::vector<nn::Sequential::NamedValue>& s,
                                   const std::string& name) {
  for (const auto& v : s)
    if (v.name == name) return v.values;
  ADD_FAILURE() << "no state variable " << name;
  static const std::vector<float> none;
  return none;
}

std::vector<float> random_values(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// Per-channel mean and biased variance of x viewed as (rows, C), in double.
void moments(const std::vector<float>& x, int64_t c, std::vector<double>* mean,
             std::vector<double>* var) {
  const int64_t rows = static_cast<int64_t>(x.size()) / c;
  mean->assign(size_t(c), 0.0);
  var->assign(size_t(c), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < c; ++k) (*mean)[size_t(k)] += x[size_t(r * c + k)];
  for (double& m : *mean) m /= double(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < c; ++k) {
      const double d = x[size_t(r * c + k)] - (*mean)[size_t(k)];
      (*var)[size_t(k)] += d * d;
    }
  for (double& v : *var) v /= double(rows);
}

TEST(NnBatchNorm, ParamsAreKerasAndMovingStatsNonTrainable) {
  dlrt::Context ctx = cpu_context();
  nn::Sequential m(ctx, {nn::Input({5, 5, 3}), nn::Conv2D(6, {3, 3}), nn::BatchNormalization(),
                         nn::ReLU(), nn::Flatten(), nn::Dense(2)});
  m.compile(nn::Adam(), nn::SparseCategoricalCrossentropy(true));
  std::vector<std::string> names;
  for (const auto& s : m.plan().state) names.push_back(s.name + (s.trainable ? "" : " (fixed)"));
  const std::vector<std::string> want = {"batch_normalization/gamma", "batch_normalization/beta",
                                         "batch_normalization/moving_mean (fixed)",
                                         "batch_normalization/moving_variance (fixed)"};
  for (const std::string& w : want)
    EXPECT_NE(std::find(names.begin(), names.end(), w), names.end()) << w;
  std::ostringstream summary;
  m.summary(summary);
  // 6*4 = 24 BatchNormalization params, 12 of them the moving statistics.
  EXPECT_NE(summary.str().find("Non-trainable params: 12"), std::string::npos) << summary.str();
  EXPECT_THROW(nn::BatchNormalization(-1, 1.5), dlrt::Error);
  nn::Sequential bad(ctx, {nn::Input({4, 4, 2}), nn::BatchNormalization(2)});
  EXPECT_THROW(bad.compile(nn::Adam(), nn::MeanSquaredError()), dlrt::Error);
}

// One step on a batch of 8: the moving statistics are exactly
//   moving = momentum*moving + (1-momentum)*batch, with the unbiased batch variance —
// PyTorch's running_mean/running_var update with its momentum 0.1 (= 1 - 0.9) — for flat
// features (N,C) and for images (statistics over N,H,W per channel).
TEST(NnBatchNorm, MovingStatsAfterOneStepMatchPyTorchsFormula) {
  dlrt::Context ctx = cpu_context();
  struct Case {
    nn::Shape sample;
    int64_t c;
  };
  for (const Case& k : {Case{{4}, 4}, Case{{3, 3, 2}, 2}}) {
    SCOPED_TRACE(k.c);
    const int64_t n = 8;
    int64_t per = 1;
    for (int64_t d : k.sample) per *= d;
    const std::vector<float> xs = random_values(size_t(n * per), 7, -2.f, 3.f);
    std::vector<int64_t> xd = {n};
    xd.insert(xd.end(), k.sample.begin(), k.sample.end());
    nn::Array x = nn::Array::of<float>(xd, xs);
    nn::Array y = nn::Array::of<int32_t>({n}, {0, 1, 0, 1, 1, 0, 1, 0});
    nn::Sequential m(
        ctx, {nn::Input(k.sample), nn::BatchNormalization(-1, 0.9), nn::Flatten(), nn::Dense(2)});
    m.compile(nn::SGD(0.1), nn::SparseCategoricalCrossentropy(true));
    m.fit(x, y, quiet(1, n));
    const auto s = m.state();
    std::vector<double> mean, var;
    moments(xs, k.c, &mean, &var);  // NHWC: channels are the last dim
    const double count = double(xs.size()) / double(k.c), torch_momentum = 0.1;
    const std::vector<float>& mm = state_of(s, "batch_normalization/moving_mean");
    const std::vector<float>& mv = state_of(s, "batch_normalization/moving_variance");
    ASSERT_EQ(mm.size(), size_t(k.c));
    for (int64_t c = 0; c < k.c; ++c) {
      const double running_mean = (1 - torch_momentum) * 0.0 + torch_momentum * mean[size_t(c)];
      const double running_var =
          (1 - torch_momentum) * 1.0 + torch_momentum * var[size_t(c)] * count / (count - 1);
      EXPECT_NEAR(mm[size_t(c)], running_mean, 1e-6) << c;
      EXPECT_NEAR(mv[size_t(c)], running_var, 1e-6) << c;
    }
  }
}

// A model that is only BatchNormalization: predict gives
// gamma*(x - moving_mean)/sqrt(moving_variance + eps) + beta from the trained state, which
// differs from the training-mode output (the batch's statistics); evaluate's loss is that of
// predict; neither changes a variable.
TEST(NnBatchNorm, EvaluateAndPredictUseMovingStats) {
  dlrt::Context ctx = cpu_context();
  const int64_t n = 16, c = 3;
  const std::vector<float> xs = random_values(size_t(n * c), 11, 1.f, 4.f);
  const std::vector<float> ys = random_values(size_t(n * c), 12, -1.f, 1.f);
  nn::Array x = nn::Array::of<float>({n, c}, xs), y = nn::Array::of<float>({n, c}, ys);
  nn::Sequential m(ctx, {nn::Input({c}), nn::BatchNormalization(-1, 0.5)});
  m.compile(nn::SGD(0.05), nn::MeanSquaredError());
  m.fit(x, y, quiet(3, n));
  const auto before = m.state();
  nn::Array p = m.predict(x, n);
  const nn::Logs ev = m.evaluate(x, y, n);
  const auto after = m.state();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].values, after[i].values);

  const std::vector<float>& g = state_of(after, "batch_normalization/gamma");
  const std::vector<float>& b = state_of(after, "batch_normalization/beta");
  const std::vector<float>& mm = state_of(after, "batch_normalization/moving_mean");
  const std::vector<float>& mv = state_of(after, "batch_normalization/moving_variance");
  std::vector<double> bmean, bvar;
  moments(xs, c, &bmean, &bvar);
  const std::vector<float> got = p.values<float>();
  double mse = 0, batch_diff = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < c; ++k) {
      const size_t i = size_t(r * c + k), ch = size_t(k);
      const double moving = g[ch] * (xs[i] - mm[ch]) / std::sqrt(mv[ch] + 1e-3) + b[ch];
      const double batch = g[ch] * (xs[i] - bmean[ch]) / std::sqrt(bvar[ch] + 1e-3) + b[ch];
      EXPECT_NEAR(got[i], moving, 1e-5) << i;
      batch_diff = std::max(batch_diff, std::fabs(got[i] - batch));
      mse += (got[i] - ys[i]) * (got[i] - ys[i]);
    }
  // After 3 steps with momentum 0.5 the moving statistics are still far from the batch's.
  EXPECT_GT(batch_diff, 0.1);
  EXPECT_NEAR(ev[0].second, mse / double(n * c), 1e-5);
}

// At inference a linear Conv2D feeding only a BatchNormalization runs as one conv with the
// normalisation folded into its weights (the graph pass fold_batch_norm;
// CompileConfig::fold_batch_norm, on by default): the
// predictions equal the unfolded model's (loaded with the same weights) up to rounding, the
// placement log shows the folded conv and no batch_norm, and a conv whose output another
// layer reads too (the shortcut below) is left as built.
TEST(NnBatchNorm, InferenceFoldsBatchNormIntoThePrecedingConv) {
  dlrt::Context ctx = cpu_context();
  const int64_t n = 24;
  nn::Array x = nn::Array::of<float>({n, 6, 6, 2}, random_values(size_t(n * 72), 21, -1.f, 2.f));
  nn::Array y = nn::Array::of<float>({n, 3}, random_values(size_t(n * 3), 22, -1.f, 1.f));
  auto build = [&](bool fold) {
    nn::Input in({6, 6, 2});
    nn::SymbolicTensor a = nn::Conv2D(4, {3, 3}, {.padding = "same"})(in);
    a = nn::BatchNormalization(-1, 0.5)(a);  // folds
    nn::SymbolicTensor b = nn::Conv2D(4, {3, 3}, {.padding = "same"})(a);
    nn::SymbolicTensor bn = nn::BatchNormalization(-1, 0.5)(b);  // b is read twice: stays
    nn::SymbolicTensor sum = nn::Add()({bn, b});
    nn::SymbolicTensor out = nn::Dense(3)(nn::Flatten()(nn::ReLU()(sum)));
    auto m = std::make_unique<nn::Model>(ctx, in, out);
    nn::CompileConfig cfg;
    cfg.seed = 3;
    cfg.fold_batch_norm = fold;
    cfg.log_device_placement = fold;  // the folded model's log is read below
    m->compile(nn::SGD(0.05), nn::MeanSquaredError(), {}, cfg);
    return m;
  };
  std::unique_ptr<nn::Model> folded = build(true);
  ::testing::internal::CaptureStderr();  // the training step's placement log: not checked
  folded->fit(x, y, quiet(3, 8));        // 9 steps with momentum 0.5: the statistics moved
  (void)::testing::internal::GetCapturedStderr();
  const std::vector<float>& mv = state_of(folded->state(), "batch_normalization/moving_variance");
  EXPECT_NE(mv, std::vector<float>(4, 1.f));
  const std::string path = ::testing::TempDir() + "bn_fold.safetensors";
  folded->save_weights(path);
  std::unique_ptr<nn::Model> plain = build(false);
  plain->load_weights(path);
  std::remove(path.c_str());

  ::testing::internal::CaptureStderr();
  const std::vector<float> pf = folded->predict(x, n).values<float>();
  const std::string log = ::testing::internal::GetCapturedStderr();
  const std::vector<float> pp = plain->predict(x, n).values<float>();
  ASSERT_EQ(pf.size(), pp.size());
  double worst = 0;
  for (size_t i = 0; i < pf.size(); ++i)
    worst = std::max(worst, std::fabs(double(pf[i]) - pp[i]) / (1.0 + std::fabs(double(pp[i]))));
  EXPECT_LT(worst, 1e-5);
  // The core's graph pass folds it (core/passes/fold_batch_norm.cc): the BatchNormalization's
  // node now runs the folded conv, and the conv it replaced is not placed. The second conv's
  // output is read twice, so its BatchNormalization stays a batch_norm.
  EXPECT_NE(log.find("batch_normalization: (conv2d_bias_act)"), std::string::npos) << log;
  EXPECT_EQ(log.find("batch_normalization: (batch_norm)"), std::string::npos) << log;
  EXPECT_EQ(log.find("conv2d: (conv2d_bias_act)"), std::string::npos) << log;
  EXPECT_NE(log.find("batch_normalization_1: (batch_norm)"), std::string::npos) << log;
  EXPECT_NE(log.find("conv2d_1: (conv2d_bias_act)"), std::string::npos) << log;

#if DLRT_TEST_HAS_ONNX
  // save_onnx keeps the BatchNormalization nodes (ONNX importers fold them themselves).
  const std::string onnx_path = ::testing::TempDir() + "bn_fold.onnx";
  ::testing::internal::CaptureStderr();
  folded->save_onnx(onnx_path);
  (void)::testing::internal::GetCapturedStderr();
  std::ifstream f(onnx_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::remove(onnx_path.c_str());
  size_t count = 0;
  for (size_t at = bytes.find("BatchNormalization"); at != std::string::npos;
       at = bytes.find("BatchNormalization", at + 1))
    ++count;
  EXPECT_EQ(count, 2u);
#else
  // A build without ONNX (the Windows cross-build): save_onnx refuses, saying so.
  EXPECT_THROW(folded->save_onnx(::testing::TempDir() + "bn_fold.onnx"), dlrt::Error);
#endif
}

// Conv2D's use_bias = false (Keras'): no bias variable; before a BatchNormalization it trains
// as the same conv with a bias does (BN subtracts any per-channel bias, so that bias's
// gradient is zero up to rounding), and inference folds the BN into it as with a bias.
TEST(NnBatchNorm, BiasFreeConvBeforeBatchNormTrainsAsWithABias) {
  dlrt::Context ctx = cpu_context();
  const int64_t n = 32;
  nn::Array x = nn::Array::of<float>({n, 6, 6, 2}, random_values(size_t(n * 72), 31, -1.f, 2.f));
  nn::Array y = nn::Array::of<float>({n, 3}, random_values(size_t(n * 3), 32, -1.f, 1.f));
  auto build = [&](bool bias, bool fold) {
    nn::Input in({6, 6, 2});
    nn::Conv2DOptions o;
    o.padding = "same";
    o.use_bias = bias;
    nn::SymbolicTensor a = nn::ReLU()(nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(in)));
    nn::SymbolicTensor out = nn::Dense(3)(nn::Flatten()(a));
    auto m = std::make_unique<nn::Model>(ctx, in, out);
    nn::CompileConfig cfg;
    cfg.seed = 4;
    cfg.fold_batch_norm = fold;
    m->compile(nn::SGD(0.05), nn::MeanSquaredError(), {}, cfg);
    return m;
  };
  std::unique_ptr<nn::Model> with = build(true, true), without = build(false, true);
  auto weights = [](nn::Model& m) {  // values in every state variable but the step count
    size_t k = 0;
    for (const auto& v : m.state())
      if (v.name.rfind("optimizer/", 0) != 0) k += v.values.size();
    return k;
  };
  EXPECT_EQ(weights(*without), weights(*with) - 8);  // the bias (4) and SGD's slot for it
  for (const auto& v : without->state()) EXPECT_EQ(v.name.find("conv2d/bias"), std::string::npos);
  const nn::History hw = with->fit(x, y, quiet(3, 8));
  const nn::History ho = without->fit(x, y, quiet(3, 8));
  ASSERT_EQ(hw.history.at("loss").size(), 3u);
  for (size_t e = 0; e < 3; ++e)
    EXPECT_NEAR(ho.history.at("loss")[e], hw.history.at("loss")[e], 1e-5) << "epoch " << e;
  // Folded (the default) and unfolded inference agree without a bias too.
  const std::string path = ::testing::TempDir() + "bn_no_bias.safetensors";
  without->save_weights(path);
  std::unique_ptr<nn::Model> unfolded = build(false, false);
  unfolded->load_weights(path);
  std::remove(path.c_str());
  const std::vector<float> pf = without->predict(x, n).values<float>();
  const std::vector<float> pu = unfolded->predict(x, n).values<float>();
  ASSERT_EQ(pf.size(), pu.size());
  for (size_t i = 0; i < pf.size(); ++i) EXPECT_NEAR(pf[i], pu[i], 1e-5 * (1 + std::fabs(pu[i])));
}

// CompileConfig::fuse_batch_norm_relu (on by default): a BatchNormalization read only by a
// ReLU (or Activation("relu")) builds batch_norm_train / batch_norm with activation relu and
// the ReLU builds nothing; one read by a ReLU and something else stays apart. Training and
// inference give what the unfused model gives (losses over 3 epochs, predictions).
TEST(NnBatchNorm, BatchNormFollowedByReluFusesInTrainingAndInference) {
  dlrt::Context ctx = cpu_context();
  const int64_t n = 32;
  nn::Array x = nn::Array::of<float>({n, 6, 6, 2}, random_values(size_t(n * 72), 41, -1.f, 2.f));
  nn::Array y = nn::Array::of<float>({n, 3}, random_values(size_t(n * 3), 42, -1.f, 1.f));
  auto build = [&](bool fuse) {
    nn::Input in({6, 6, 2});
    nn::Conv2DOptions o;
    o.padding = "same";
    o.use_bias = false;
    nn::SymbolicTensor a = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(in));
    a = nn::ReLU()(a);  // fuses
    nn::SymbolicTensor b = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(a));
    b = nn::Activation("relu")(b);  // fuses
    nn::SymbolicTensor d = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(b));
    nn::SymbolicTensor e = nn::Add()({nn::ReLU()(d), d});  // d read twice: stays apart
    nn::SymbolicTensor out = nn::Dense(3)(nn::Flatten()(e));
    auto m = std::make_unique<nn::Model>(ctx, in, out);
    nn::CompileConfig cfg;
    cfg.seed = 6;
    cfg.fuse_batch_norm_relu = fuse;
    cfg.fold_batch_norm = false;  // inference runs the batch_norm ops too
    cfg.log_device_placement = true;
    m->compile(nn::SGD(0.05), nn::MeanSquaredError(), {}, cfg);
    return m;
  };
  std::unique_ptr<nn::Model> fused = build(true), plain = build(false);
  ::testing::internal::CaptureStderr();
  const nn::History hf = fused->fit(x, y, quiet(3, 8));
  const std::string log = ::testing::internal::GetCapturedStderr();
  ::testing::internal::CaptureStderr();
  const nn::History hp = plain->fit(x, y, quiet(3, 8));
  const std::string plain_log = ::testing::internal::GetCapturedStderr();
  for (size_t k = 0; k < 3; ++k)
    EXPECT_NEAR(hf.history.at("loss")[k], hp.history.at("loss")[k], 1e-5) << "epoch " << k;
  // The training step's ops (the placement log names each op in parentheses): the fused
  // model's ReLU layers build nothing but the one after the twice-read BN.
  auto count = [](const std::string& text, const std::string& what) {
    size_t k = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++k;
    return k;
  };
  EXPECT_EQ(count(log, "(relu)"), 1u) << log;
  EXPECT_EQ(count(log, "(relu_grad)"), 1u) << log;
  EXPECT_EQ(count(log, "(batch_norm_relu_grad)"), 2u) << log;
  EXPECT_EQ(count(log, "(batch_norm_grad)"), 1u) << log;
  EXPECT_EQ(count(plain_log, "(relu)"), 3u) << plain_log;
  EXPECT_EQ(count(plain_log, "(relu_grad)"), 3u) << plain_log;
  EXPECT_EQ(count(plain_log, "(batch_norm_relu_grad)"), 0u) << plain_log;
  ::testing::internal::CaptureStderr();
  const std::vector<float> pf = fused->predict(x, n).values<float>();
  const std::vector<float> pp = plain->predict(x, n).values<float>();
  (void)::testing::internal::GetCapturedStderr();
  ASSERT_EQ(pf.size(), pp.size());
  for (size_t i = 0; i < pf.size(); ++i) EXPECT_NEAR(pf[i], pp[i], 1e-5 * (1 + std::fabs(pp[i])));
}

// CompileConfig::fuse_batch_norm_add_relu (on by default): ReLU(Add([BatchNormalization(x),
// shortcut])) builds batch_norm_add_relu_train in the training step, with an identity shortcut
// (made before the BN), a projection made after the BN's node, and the BN as the Add's second
// input; an Add whose BN input is also read elsewhere, or whose output two layers read, stays
// apart. The fused model trains as the unfused one (losses over 3 epochs, the moving
// statistics after them) and predicts the same.
TEST(NnBatchNorm, ResidualTailFusesInTraining) {
  dlrt::Context ctx = cpu_context();
  const int64_t n = 32;
  nn::Array x = nn::Array::of<float>({n, 6, 6, 4}, random_values(size_t(n * 144), 43, -1.f, 2.f));
  nn::Array y = nn::Array::of<float>({n, 3}, random_values(size_t(n * 3), 44, -1.f, 1.f));
  auto build = [&](bool fuse) {
    nn::Input in({6, 6, 4});
    nn::Conv2DOptions o;
    o.padding = "same";
    o.use_bias = false;
    // Identity shortcut: fuses.
    nn::SymbolicTensor a = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(in));
    a = nn::ReLU()(nn::Add()({a, in}));
    // Projection shortcut made after the BN's node, the BN second in the Add: fuses.
    nn::SymbolicTensor b = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(a));
    nn::SymbolicTensor p = nn::Conv2D(4, {1, 1}, o)(a);
    b = nn::Activation("relu")(nn::Add()({p, b}));
    // The BN's output read twice: stays apart.
    nn::SymbolicTensor d = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(b));
    nn::SymbolicTensor e = nn::ReLU()(nn::Add()({d, b}));
    // The Add's output read twice: stays apart.
    nn::SymbolicTensor f = nn::BatchNormalization(-1, 0.5)(nn::Conv2D(4, {3, 3}, o)(e));
    nn::SymbolicTensor g = nn::Add()({f, d});
    nn::SymbolicTensor h = nn::Add()({nn::ReLU()(g), g});
    nn::SymbolicTensor out = nn::Dense(3)(nn::Flatten()(h));
    auto m = std::make_unique<nn::Model>(ctx, in, out);
    nn::CompileConfig cfg;
    cfg.seed = 7;
    cfg.fuse_batch_norm_add_relu = fuse;
    cfg.log_device_placement = true;
    m->compile(nn::SGD(0.01), nn::MeanSquaredError(), {}, cfg);
    return m;
  };
  std::unique_ptr<nn::Model> fused = build(true), plain = build(false);
  ::testing::internal::CaptureStderr();
  const nn::History hf = fused->fit(x, y, quiet(3, 8));
  const std::string log = ::testing::internal::GetCapturedStderr();
  ::testing::internal::CaptureStderr();
  const nn::History hp = plain->fit(x, y, quiet(3, 8));
  const std::string plain_log = ::testing::internal::GetCapturedStderr();
  for (size_t k = 0; k < 3; ++k)
    EXPECT_NEAR(hf.history.at("loss")[k], hp.history.at("loss")[k], 1e-5) << "epoch " << k;
  auto count = [](const std::string& text, const std::string& what) {
    size_t k = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++k;
    return k;
  };
  EXPECT_EQ(count(log, "(batch_norm_add_relu_train)"), 2u) << log;
  EXPECT_EQ(count(log, "(batch_norm_add_relu_grad)"), 2u) << log;
  EXPECT_EQ(count(log, "(batch_norm_train)"), 2u) << log;
  EXPECT_EQ(count(log, "(relu)"), 2u) << log;  // after the two Adds that stay apart
  EXPECT_EQ(count(plain_log, "(batch_norm_add_relu_train)"), 0u) << plain_log;
  EXPECT_EQ(count(plain_log, "(batch_norm_train)"), 4u) << plain_log;
  EXPECT_EQ(count(plain_log, "(relu)"), 4u) << plain_log;
  // Every variable, the moving statistics included, as the unfused model's.
  const auto sf = fused->state(), sp = plain->state();
  ASSERT_EQ(sf.size(), sp.size());
  for (size_t k = 0; k < sp.size(); ++k) {
    ASSERT_EQ(sf[k].name, sp[k].name);
    const std::vector<float>&a = sf[k].values, &b = sp[k].values;
    ASSERT_EQ(a.size(), b.size()) << sp[k].name;
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(b[i]))) << sp[k].name << " " << i;
  }
  ::testing::internal::CaptureStderr();
  const std::vector<float> pf = fused->predict(x, n).values<float>();
  const std::vector<float> pp = plain->predict(x, n).values<float>();
  (void)::testing::internal::GetCapturedStderr();
  ASSERT_EQ(pf.size(), pp.size());
  for (size_t i = 0; i < pf.size(); ++i) EXPECT_NEAR(pf[i], pp[i], 1e-4 * (1 + std::fabs(pp[i])));
}

// Fashion-MNIST, 300 training images: Conv2D -> BatchNormalization -> ReLU -> MaxPool2D ->
// Flatten -> Dense learns (the loss falls, most training images right); a checkpoint restores
// every variable, the moving statistics included, bit for bit, and the restored model
// predicts exactly what the trained one does.
TEST(NnBatchNorm, ConvBatchNormReluLearnsFashionMnistAndCheckpointsMovingStats) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::FILE* probe = std::fopen((dir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << dir;
  std::fclose(probe);
  const int64_t n = 300;
  dlrt::IdxArray images(dir + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray labels(dir + "train-labels-idx1-ubyte.gz", n);
  const uint8_t* px = images.data<uint8_t>();
  nn::Array x(DLRT_U8, {n, 28, 28, 1}, std::vector<uint8_t>(px, px + n * 28 * 28));
  const uint8_t* lb = labels.data<uint8_t>();
  nn::Array y(DLRT_U8, {n}, std::vector<uint8_t>(lb, lb + n));

  dlrt::Context ctx = cpu_context();
  auto build = [&](nn::Sequential& m) {
    nn::CompileConfig cfg;
    cfg.seed = 5;
    m.compile(nn::Adam(3e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  };
  nn::Sequential m(ctx, {nn::Input({28, 28, 1}), nn::Conv2D(8, {3, 3}), nn::BatchNormalization(),
                         nn::ReLU(), nn::MaxPool2D(), nn::Flatten(), nn::Dense(10)});
  build(m);
  nn::FitOptions f = quiet(4, 30);  // 10 full batches an epoch
  f.shuffle = true;
  nn::History h = m.fit(x, y, f);
  EXPECT_LT(h.history["loss"].back(), 0.7 * h.history["loss"].front());
  EXPECT_GE(h.last("accuracy"), 0.6);
  const nn::Logs ev = m.evaluate(x, y, 50);
  EXPECT_GE(ev[1].second, 0.5);  // with the moving statistics
  const auto trained = m.state();
  const std::vector<float>& mm = state_of(trained, "batch_normalization/moving_mean");
  const std::vector<float>& mv = state_of(trained, "batch_normalization/moving_variance");
  ASSERT_EQ(mm.size(), 8u);
  // 40 steps with momentum 0.99 moved them away from their initial 0 and 1.
  EXPECT_NE(mm, std::vector<float>(8, 0.f));
  EXPECT_NE(mv, std::vector<float>(8, 1.f));

  const std::string path = ::testing::TempDir() + "bn_fashion.safetensors";
  m.save_weights(path);
  nn::Sequential r(ctx, {nn::Input({28, 28, 1}), nn::Conv2D(8, {3, 3}), nn::BatchNormalization(),
                         nn::ReLU(), nn::MaxPool2D(), nn::Flatten(), nn::Dense(10)});
  build(r);
  r.load_weights(path);
  const auto restored = r.state();
  ASSERT_EQ(restored.size(), trained.size());
  for (size_t i = 0; i < trained.size(); ++i) {
    EXPECT_EQ(restored[i].name, trained[i].name);
    EXPECT_EQ(restored[i].values, trained[i].values) << trained[i].name;
  }
  EXPECT_EQ(r.predict(x.head(20), 20).values<float>(), m.predict(x.head(20), 20).values<float>());
  std::remove(path.c_str());
}

}  // namespace
