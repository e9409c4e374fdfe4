// nn_multi_io_test.cc: functional models of several inputs and outputs in fit, evaluate,
// predict and train_on_batch (Keras' lists of arrays). A two-input model (the top and bottom
// halves of Fashion-MNIST images) learns, and predicts what the same network written with
// one input predicts; a two-output model logs each output's loss and "loss" is their
// weighted sum; predict returns every output, the same in batches of any size; an input of
// ids (Embedding) beside one of features; an input no output needs; mirrored training of a
// two-input two-output model equals one device; wrong counts, row counts and shapes are
// INVALID_ARGUMENT naming x[i] or y[k].
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;
using nn_test::error_of;

using nn_test::quiet;

nn::CompileConfig seeded(uint64_t seed) {
  nn::CompileConfig c;
  c.seed = seed;
  return c;
}

double log_of(const nn::Logs& logs, const std::string& key) {
  for (const auto& [k, v] : logs)
    if (k == key) return v;
  ADD_FAILURE() << "no '" << key << "' in the logs";
  return NAN;
}

std::vector<std::string> keys(const nn::Logs& logs) {
  std::vector<std::string> out;
  for (const auto& kv : logs) out.push_back(kv.first);
  return out;
}

std::vector<float> floats(const nn::Array& a) { return a.values<float>(); }

std::vector<float>& value_of(std::vector<nn::Model::NamedValue>& state, const std::string& name) {
  for (auto& v : state)
    if (v.name == name) return v.values;
  throw dlrt::Error(DLRT_NOT_FOUND, "no state variable " + name);
}

// Three classes around fixed centres in 4-D, split over two inputs of 2 features each:
// x0 (n,2), x1 (n,2) f32, y (n) i32; the class needs both halves.
void split_blobs(int n, unsigned seed, nn::Array* x0, nn::Array* x1, nn::Array* y) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0.f, 0.3f);
  const float centres[3][4] = {{1, 0, 0, 1}, {0, 1, 1, 0}, {-1, -1, 0, 0}};
  std::vector<float> a, b;
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) {
    ys.push_back(i % 3);
    for (int k = 0; k < 4; ++k) (k < 2 ? a : b).push_back(centres[i % 3][k] + noise(gen));
  }
  *x0 = nn::Array::of<float>({n, 2}, a);
  *x1 = nn::Array::of<float>({n, 2}, b);
  *y = nn::Array::of<int32_t>({n}, ys);
}

// ---- two inputs: Fashion-MNIST's top and bottom halves ----

const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

bool have_fashion() {
  std::FILE* f = std::fopen((kFashion + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (f != nullptr) std::fclose(f);
  return f != nullptr;
}

// The first n training images: whole (n,28,28,1), top rows 0-13 and bottom rows 14-27 (each
// (n,14,28,1)), u8; labels u8 (n).
void fashion_halves(int64_t n, nn::Array* whole, nn::Array* top, nn::Array* bottom, nn::Array* y) {
  dlrt::IdxArray images(kFashion + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray labels(kFashion + "train-labels-idx1-ubyte.gz", n);
  const uint8_t* px = images.data<uint8_t>();
  std::vector<uint8_t> t, b;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* img = px + i * 28 * 28;
    t.insert(t.end(), img, img + 14 * 28);
    b.insert(b.end(), img + 14 * 28, img + 28 * 28);
  }
  *whole = nn::Array(DLRT_U8, {n, 28, 28, 1}, std::vector<uint8_t>(px, px + n * 28 * 28));
  *top = nn::Array(DLRT_U8, {n, 14, 28, 1}, t);
  *bottom = nn::Array(DLRT_U8, {n, 14, 28, 1}, b);
  const uint8_t* lb = labels.data<uint8_t>();
  *y = nn::Array(DLRT_U8, {n}, std::vector<uint8_t>(lb, lb + n));
}

// Each half through its own linear Dense(32), the two added, relu, Dense(10): the same
// function as Flatten -> Dense(32, relu) -> Dense(10) on the whole image, whose kernel is the
// two kernels stacked (top rows first, as Flatten orders them) and whose bias is their sum.
TEST(NnMultiIo, TwoInputHalvesLearnFashionMnistAndEqualOneInput) {
  if (!have_fashion()) GTEST_SKIP() << "no Fashion-MNIST in " << kFashion;
  dlrt::Context ctx = cpu_context();
  nn::Array whole, top, bottom, y;
  fashion_halves(3000, &whole, &top, &bottom, &y);
  const nn::Array top_train = nn_test::rows(top, 0, 2400), top_val = nn_test::rows(top, 2400, 600);
  const nn::Array bot_train = nn_test::rows(bottom, 0, 2400),
                  bot_val = nn_test::rows(bottom, 2400, 600);
  const nn::Array y_train = nn_test::rows(y, 0, 2400), y_val = nn_test::rows(y, 2400, 600);

  auto in_top = nn::Input({14, 28, 1});
  auto in_bottom = nn::Input({14, 28, 1});
  nn::SymbolicTensor h =
      nn::Add()({nn::Dense(32)(nn::Flatten()(in_top)), nn::Dense(32)(nn::Flatten()(in_bottom))});
  nn::Model two(ctx, {in_top, in_bottom}, {nn::Dense(10)(nn::Activation("relu")(h))});
  two.compile(nn::Adam(2e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(3));
  const std::vector<nn::Array> val_x = {top_val, bot_val}, val_y = {y_val};
  nn::FitOptions fit = quiet(1, 32);
  fit.validation_xs = &val_x;
  fit.validation_ys = &val_y;
  nn::History hist = two.fit({top_train, bot_train}, {y_train}, fit);
  // One output: today's log names.
  EXPECT_EQ(hist.history.count("loss"), 1u);
  EXPECT_EQ(hist.history.count("val_accuracy"), 1u);
  EXPECT_EQ(hist.history.size(), 4u);  // loss, accuracy, val_loss, val_accuracy
  // 0.61 and 0.745 here (chance: 0.1); the training figure is the epoch's running mean.
  EXPECT_GT(hist.last("accuracy"), 0.55);
  EXPECT_GT(hist.last("val_accuracy"), 0.7) << "one epoch of 2400 images, validated on 600";
  const nn::Logs eval = two.evaluate({top_val, bot_val}, {y_val}, 100);
  EXPECT_NEAR(log_of(eval, "accuracy"), hist.last("val_accuracy"), 1e-9);

  // The same function with one input, given the trained weights.
  nn::Sequential one(ctx,
                     {nn::Input({28, 28, 1}), nn::Flatten(), nn::Dense(32, "relu"), nn::Dense(10)});
  one.compile(seeded(3));
  std::vector<nn::Model::NamedValue> st = two.state();
  const std::vector<float>& k_top = value_of(st, "dense/kernel");  // (392, 32)
  const std::vector<float>& k_bot = value_of(st, "dense_1/kernel");
  const std::vector<float>& b_top = value_of(st, "dense/bias");
  const std::vector<float>& b_bot = value_of(st, "dense_1/bias");
  ASSERT_EQ(k_top.size(), 392u * 32u);
  std::vector<float> kernel = k_top, bias(32);
  kernel.insert(kernel.end(), k_bot.begin(), k_bot.end());
  for (size_t j = 0; j < 32; ++j) bias[j] = b_top[j] + b_bot[j];
  one.set_state({{"dense/kernel", {784, 32}, kernel},
                 {"dense/bias", {32}, bias},
                 {"dense_1/kernel", {32, 10}, value_of(st, "dense_2/kernel")},
                 {"dense_1/bias", {10}, value_of(st, "dense_2/bias")}});
  const nn::Array whole_val = nn_test::rows(whole, 2400, 600);
  const std::vector<float> p_one = floats(one.predict(whole_val, 128));
  const std::vector<nn::Array> p_two = two.predict({top_val, bot_val}, 128);
  ASSERT_EQ(p_two.size(), 1u);
  const std::vector<float> p2 = floats(p_two[0]);
  ASSERT_EQ(p_one.size(), p2.size());
  double worst = 0;
  for (size_t i = 0; i < p2.size(); ++i)
    worst = std::max(worst, std::fabs(double(p2[i]) - double(p_one[i])));
  EXPECT_LT(worst, 1e-3) << "two halves vs one image";
  // The single-array predict of a one-output model gives the same array.
  EXPECT_EQ(floats(two.predict(std::vector<nn::Array>{top_val, bot_val}, 128)[0]), p2);
}

// ---- two outputs ----

// One input of 4 features, two heads: "classes" (3 classes) and "parity" (5 classes) under
// the one compiled loss.
struct TwoHeads {
  nn::Array x, y3, y5;
  explicit TwoHeads(int n) {
    nn::Array x0, x1, y;
    split_blobs(n, 7, &x0, &x1, &y);
    std::vector<float> xs;
    const std::vector<float> a = x0.values<float>(), b = x1.values<float>();
    std::vector<int32_t> labels5;
    for (int i = 0; i < n; ++i) {
      xs.insert(xs.end(), {a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1]});
      labels5.push_back((i % 3) + (i % 2) * 2);  // 0..4: the class and a parity bit
    }
    x = nn::Array::of<float>({n, 4}, xs);
    y3 = y;
    y5 = nn::Array::of<int32_t>({n}, labels5);
  }
};

std::unique_ptr<nn::Model> two_heads(const dlrt::Context& ctx) {
  auto in = nn::Input({4});
  nn::SymbolicTensor h = nn::Dense(16, "relu")(in);
  return std::make_unique<nn::Model>(
      ctx, std::vector<nn::SymbolicTensor>{in},
      std::vector<nn::SymbolicTensor>{nn::Dense(3)(h), nn::Dense(5)(h)});
}

// Mean sparse cross-entropy of logits (n,k) against labels.
double mean_xent(const std::vector<float>& logits, size_t k, const std::vector<int32_t>& labels) {
  double sum = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const float* l = logits.data() + i * k;
    double m = l[0], z = 0;
    for (size_t j = 1; j < k; ++j) m = std::max(m, double(l[j]));
    for (size_t j = 0; j < k; ++j) z += std::exp(double(l[j]) - m);
    sum += m + std::log(z) - l[labels[i]];
  }
  return sum / double(labels.size());
}

TEST(NnMultiIo, TwoOutputsLogEachLossAndTheirWeightedSum) {
  dlrt::Context ctx = cpu_context();
  TwoHeads d(150);
  auto m = two_heads(ctx);
  EXPECT_EQ(m->output_names(), (std::vector<std::string>{"dense_1", "dense_2"}));
  nn::CompileConfig cfg = seeded(4);
  cfg.loss_weights = {1.0, 0.5};
  m->compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  nn::History h = m->fit(std::vector<nn::Array>{d.x}, {d.y3, d.y5}, quiet(3, 32));
  // Keras' names and order: the total, each output's loss, each output's metrics.
  const std::vector<std::string> want = {"loss", "dense_1_loss", "dense_2_loss", "dense_1_accuracy",
                                         "dense_2_accuracy"};
  for (const std::string& k : want) EXPECT_EQ(h.history.count(k), 1u) << k;
  EXPECT_EQ(h.history.size(), want.size());
  EXPECT_NEAR(h.last("loss"), h.last("dense_1_loss") + 0.5 * h.last("dense_2_loss"), 1e-5);
  EXPECT_LT(h.history["dense_1_loss"].back(), h.history["dense_1_loss"].front());
  EXPECT_GT(h.last("dense_1_accuracy"), 0.8);

  const nn::Logs e = m->evaluate(std::vector<nn::Array>{d.x}, {d.y3, d.y5}, 64);
  EXPECT_EQ(keys(e), want);
  EXPECT_NEAR(log_of(e, "loss"), log_of(e, "dense_1_loss") + 0.5 * log_of(e, "dense_2_loss"), 1e-5);
  // Each output's loss is the cross-entropy of its own predictions and targets.
  const std::vector<nn::Array> p = m->predict(std::vector<nn::Array>{d.x}, 64);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].dims(), (std::vector<int64_t>{150, 3}));
  EXPECT_EQ(p[1].dims(), (std::vector<int64_t>{150, 5}));
  EXPECT_NEAR(log_of(e, "dense_1_loss"), mean_xent(floats(p[0]), 3, d.y3.values<int32_t>()), 1e-4);
  EXPECT_NEAR(log_of(e, "dense_2_loss"), mean_xent(floats(p[1]), 5, d.y5.values<int32_t>()), 1e-4);

  // train_on_batch / test_on_batch take the lists too and log the same names.
  const nn::Logs t = m->train_on_batch({d.x}, {d.y3, d.y5});
  EXPECT_EQ(keys(t), want);
  EXPECT_NEAR(log_of(t, "loss"), log_of(t, "dense_1_loss") + 0.5 * log_of(t, "dense_2_loss"), 1e-5);
  const nn::Logs tb = m->test_on_batch({d.x}, {d.y3, d.y5});
  EXPECT_EQ(keys(tb), want);
  EXPECT_LT(log_of(tb, "loss"), log_of(t, "loss"));  // the step just taken lowered it

  // A one-output predict is refused with the way to get both.
  const auto [code, msg] = error_of([&] { m->predict(d.x); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("2 outputs (dense_1, dense_2)"), std::string::npos) << msg;
  // loss_weights must give one weight per output.
  cfg.loss_weights = {1.0};
  const auto [wcode, wmsg] = error_of(
      [&] { m->compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {}, cfg); });
  EXPECT_EQ(wcode, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(wmsg.find("loss_weights has 1 weight"), std::string::npos) << wmsg;
  EXPECT_NE(wmsg.find("2 outputs"), std::string::npos) << wmsg;
}

// ---- predict in any batch size ----

std::unique_ptr<nn::Model> two_inputs(const dlrt::Context& ctx) {
  auto a = nn::Input({2});
  auto b = nn::Input({2});
  nn::SymbolicTensor h = nn::Add()({nn::Dense(8, "tanh")(a), nn::Dense(8, "relu")(b)});
  return std::make_unique<nn::Model>(ctx, std::vector<nn::SymbolicTensor>{a, b},
                                     std::vector<nn::SymbolicTensor>{nn::Dense(3)(h)});
}

TEST(NnMultiIo, PredictOfTwoInputsIsTheSameInEveryBatchSize) {
  dlrt::Context ctx = cpu_context();
  nn::Array x0, x1, y;
  split_blobs(45, 2, &x0, &x1, &y);
  auto m = two_inputs(ctx);
  m->compile(nn::Adam(0.05), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(1));
  m->fit({x0, x1}, {y}, quiet(4, 8));
  EXPECT_GT(log_of(m->evaluate({x0, x1}, {y}, 16), "accuracy"), 0.8);
  const std::vector<float> all = floats(m->predict({x0, x1}, 64).at(0));
  ASSERT_EQ(all.size(), 45u * 3u);
  for (int64_t batch : {1, 7, 16}) {
    const std::vector<float> p = floats(m->predict({x0, x1}, batch).at(0));
    ASSERT_EQ(p.size(), all.size());
    for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], all[i], 1e-5) << "batch " << batch;
  }
  // Batches cut by hand, with the rows of both inputs taken together.
  for (int64_t first = 0; first < 45; first += 10) {
    const int64_t count = std::min<int64_t>(10, 45 - first);
    const std::vector<float> p = floats(
        m->predict({nn_test::rows(x0, first, count), nn_test::rows(x1, first, count)}).at(0));
    for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], all[first * 3 + i], 1e-5);
  }
  // The inputs are not interchangeable: swapping them changes the prediction.
  const std::vector<float> swapped = floats(m->predict({x1, x0}, 64).at(0));
  EXPECT_NE(swapped, all);
}

// An input the outputs do not need is taken (one array for it, checked) and ignored.
TEST(NnMultiIo, InputTheOutputsDoNotNeedIsIgnored) {
  dlrt::Context ctx = cpu_context();
  nn::Array x0, x1, y;
  split_blobs(24, 8, &x0, &x1, &y);
  auto a = nn::Input({2});
  auto b = nn::Input({2});
  nn::Model m(ctx, {a, b}, {nn::Dense(3)(a)});
  m.compile(nn::SGD(0.1), nn::SparseCategoricalCrossentropy(true), {}, seeded(1));
  m.fit({x0, x1}, {y}, quiet(1, 8));
  const nn::Logs e = m.evaluate({x0, x1}, {y}, 5);
  EXPECT_NEAR(log_of(e, "loss"), log_of(m.evaluate({x0, x0}, {y}, 7), "loss"), 1e-6);
  EXPECT_EQ(floats(m.predict({x0, x1}).at(0)), floats(m.predict({x0, x0}).at(0)));
  const auto [code, msg] = error_of([&] { m.predict({x0}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("predict: 1 x array given"), std::string::npos) << msg;
}

// ---- an input of ids beside one of features ----

TEST(NnMultiIo, IdsInputBesideFeatures) {
  dlrt::Context ctx = cpu_context();
  nn::Array x0, x1, y;
  split_blobs(60, 5, &x0, &x1, &y);
  // ids: the class hidden in one of three tokens out of 6 (0-2 noise, 3-5 the class)
  std::vector<int32_t> ids;
  const std::vector<int32_t> labels = y.values<int32_t>();
  for (int i = 0; i < 60; ++i) ids.insert(ids.end(), {i % 3, 3 + labels[i], (i / 3) % 3});
  const nn::Array tokens = nn::Array::of<int32_t>({60, 3}, ids);
  auto t = nn::Input({3});
  auto f = nn::Input({2});
  nn::SymbolicTensor h = nn::Add()({nn::Flatten()(nn::Embedding(6, 4)(t)), nn::Dense(12)(f)});
  nn::Model m(ctx, {t, f}, {nn::Dense(3)(nn::Activation("relu")(h))});
  m.compile(nn::Adam(0.05), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(2));
  m.fit({tokens, x0}, {y}, quiet(5, 12));
  EXPECT_GT(log_of(m.evaluate({tokens, x0}, {y}), "accuracy"), 0.9);
  // x[0] takes ids, x[1] features: each checked for what its own input takes.
  std::vector<int32_t> bad = ids;
  bad[4] = 6;
  const auto [c1, m1] = error_of([&] { m.predict({nn::Array::of<int32_t>({60, 3}, bad), x0}); });
  EXPECT_EQ(c1, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(m1.find("x[0] holds id 6 (sample 1, element 1)"), std::string::npos) << m1;
  const auto [c2, m2] = error_of([&] { m.predict({tokens, tokens.head(60)}); });
  EXPECT_EQ(c2, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(m2.find("x[1] has samples of shape (None, 3)"), std::string::npos) << m2;
  std::vector<int32_t> int_features(120, 1);
  const auto [c3, m3] = error_of([&] {
    m.predict({tokens, nn::Array::of<int32_t>({60, 2}, int_features)});
  });
  EXPECT_EQ(c3, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(m3.find("x[1] is i32"), std::string::npos) << m3;
}

// ---- bad data ----

TEST(NnMultiIo, BadArraysAreInvalidArgumentNamingThem) {
  dlrt::Context ctx = cpu_context();
  nn::Array x0, x1, y;
  split_blobs(30, 3, &x0, &x1, &y);
  auto a = nn::Input({2});
  auto b = nn::Input({2});
  nn::SymbolicTensor h = nn::Add()({nn::Dense(6)(a), nn::Dense(6)(b)});
  nn::Model m(ctx, {a, b}, {nn::Dense(3)(h), nn::Dense(2)(h)});
  m.compile(nn::SGD(0.1), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(1));
  const nn::Array y2 = nn::Array::of<int32_t>({30}, std::vector<int32_t>(30, 1));
  auto expect = [](auto fn, const std::vector<std::string>& parts) {
    const auto [code, msg] = error_of(fn);
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  };
  // The number of x arrays (the single-array form included).
  expect(
      [&] {
        m.fit({x0}, {y, y2}, quiet(1, 8));
      },
      {"fit: 1 x array given", "2 inputs (input, input_1)"});
  expect([&] { m.fit(x0, y, quiet(1, 8)); }, {"fit: 1 x array given", "2 inputs"});
  expect([&] { m.evaluate({x0, x1, x1}, {y, y2}); }, {"evaluate: 3 x arrays given"});
  // Rows: x[1] against x[0], y[1] against x[0].
  expect(
      [&] {
        m.fit({x0, nn_test::rows(x1, 0, 29)}, {y, y2}, quiet(1, 8));
      },
      {"x[1] has 29 samples but x[0] has 30"});
  expect(
      [&] {
        m.train_on_batch({x0, x1}, {y, nn_test::rows(y2, 0, 20)});
      },
      {"y[1] has 20 samples but x[0] has 30"});
  // The sample shape of x[1].
  const nn::Array wide = nn::Array::of<float>({30, 3}, std::vector<float>(90, 0.f));
  expect(
      [&] {
        m.predict({x0, wide});
      },
      {"predict: x[1] has samples of shape (None, 3)", "input 1 (input_1) takes (None, 2)"});
  // The number of y arrays.
  expect(
      [&] {
        m.fit({x0, x1}, {y}, quiet(1, 8));
      },
      {"fit: 1 y array given", "2 outputs (dense_2, dense_3)"});
  // y[1]'s targets, checked by the loss against output 1.
  const nn::Array y_wide = nn::Array::of<int32_t>({30, 2}, std::vector<int32_t>(60, 0));
  expect(
      [&] {
        m.evaluate({x0, x1}, {y, y_wide});
      },
      {"evaluate: y[1] (targets of output 1, dense_3)", "labels have shape (None, 2)"});
  // Validation data is checked as fit's own.
  const std::vector<nn::Array> vx = {x0}, vy = {y, y2};
  nn::FitOptions o = quiet(1, 8);
  o.validation_xs = &vx;
  o.validation_ys = &vy;
  expect([&] { m.fit({x0, x1}, {y, y2}, o); }, {"fit (validation): 1 x array given"});
  o.validation_x = &x0;
  o.validation_y = &y;
  expect([&] { m.fit({x0, x1}, {y, y2}, o); }, {"validation data given twice"});
  // Nothing was trained by the refused calls.
  EXPECT_EQ(m.state().back().values.at(0), 0.f);  // optimizer/iterations
  // The good call works.
  nn::History good = m.fit({x0, x1}, {y, y2}, quiet(1, 8));
  EXPECT_EQ(good.history.count("dense_3_accuracy"), 1u);
}

// ---- a distribution strategy ----

TEST(NnMultiIo, MirroredTwoInputsTwoOutputsEqualOneDevice) {
  dlrt::Context ctx = cpu_context(2);
  nn::Array x0, x1, y;
  split_blobs(50, 4, &x0, &x1, &y);
  std::vector<int32_t> labels2;
  for (int32_t v : y.values<int32_t>()) labels2.push_back(v == 2 ? 1 : 0);
  const nn::Array y2 = nn::Array::of<int32_t>({50}, labels2);
  auto build = [&] {
    auto a = nn::Input({2});
    auto b = nn::Input({2});
    nn::SymbolicTensor h = nn::Add()({nn::Dense(8, "relu")(a), nn::Dense(8, "relu")(b)});
    return std::make_unique<nn::Model>(
        ctx, std::vector<nn::SymbolicTensor>{a, b},
        std::vector<nn::SymbolicTensor>{nn::Dense(3)(h), nn::Dense(2)(h)});
  };
  nn::CompileConfig cfg = seeded(6);
  cfg.loss_weights = {1.0, 2.0};
  auto single = build();
  cfg.device = "/CPU:0";
  single->compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  nn::History hs = single->fit({x0, x1}, {y, y2}, quiet(2, 12));

  nn::MirroredStrategy strategy(ctx);
  auto mirrored = build();
  cfg.device = "";
  {
    nn::StrategyScope scope(strategy);
    mirrored->compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  }
  nn::History hm = mirrored->fit({x0, x1}, {y, y2}, quiet(2, 12));
  ASSERT_EQ(mirrored->num_local_replicas(), 2u);
  const auto a = single->state(), b = mirrored->state();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < a[i].values.size(); ++k)
      ASSERT_NEAR(a[i].values[k], b[i].values[k], 1e-4) << a[i].name;
  for (const char* key : {"loss", "dense_2_loss", "dense_3_loss"})
    EXPECT_NEAR(hm.last(key), hs.last(key), 1e-4) << key;
  EXPECT_DOUBLE_EQ(hm.last("dense_3_accuracy"), hs.last("dense_3_accuracy"));
  EXPECT_NEAR(hm.last("loss"), hm.last("dense_2_loss") + 2 * hm.last("dense_3_loss"), 1e-5);
}

}  // namespace
