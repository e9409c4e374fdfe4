// nn_mixed_precision_test.cc: Keras' dtype policies (dlrt/nn/mixed_precision.hpp) — names
// checked, layers take the global policy when made, a mixed_bfloat16 model computes in bf16
// (its outputs differ from the f32 model's by bf16 rounding, and only by that), its training
// steps follow the f32 model's on Fashion-MNIST over 200 steps, its variables stay f32, and
// its checkpoint loads into an f32 model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace {

namespace nn = dlrt::nn;
using nn_test::cpu_context;
using nn_test::error_of;
using nn_test::rows;

// Sets the global policy for one test and puts "float32" back after it.
class GlobalPolicy {
 public:
  explicit GlobalPolicy(const std::string& p) { nn::set_global_policy(p); }
  ~GlobalPolicy() { nn::set_global_policy("float32"); }
};

const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

bool have_fashion() {
  std::FILE* f = std::fopen((kFashion + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (f != nullptr) std::fclose(f);
  return f != nullptr;
}

// The first n training images (u8, (n,28,28,1)) and labels (u8, (n)).
void fashion(int64_t n, nn::Array* x, nn::Array* y) {
  dlrt::IdxArray images(kFashion + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray labels(kFashion + "train-labels-idx1-ubyte.gz", n);
  const uint8_t* px = images.data<uint8_t>();
  *x = nn::Array(DLRT_U8, {n, 28, 28, 1}, std::vector<uint8_t>(px, px + n * 28 * 28));
  const uint8_t* lb = labels.data<uint8_t>();
  *y = nn::Array(DLRT_U8, {n}, std::vector<uint8_t>(lb, lb + n));
}

// A small CNN with every kind of layer a policy treats differently: convolutions and a dense
// layer (16-bit), batch norm (kept f32), pooling, and a softmax head (computed in f32).
void add_cnn(nn::Sequential& m) {
  for (const nn::LayerRef& l : std::initializer_list<nn::LayerRef>{
           nn::Input({28, 28, 1}), nn::Conv2D(16, {3, 3}, "relu"), nn::MaxPool2D(),
           nn::Conv2D(32, {3, 3}), nn::BatchNormalization(), nn::ReLU(), nn::MaxPool2D(),
           nn::Flatten(), nn::Dense(10, "softmax")})
    m.add(l);
}

void compile(nn::Sequential& m, const std::string& policy) {
  nn::CompileConfig cfg;
  cfg.seed = 7;
  cfg.dtype_policy = policy;
  m.compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(), {"accuracy"}, cfg);
}

TEST(MixedPrecision, PolicyNamesAreChecked) {
  auto [code, message] = error_of([] { nn::set_global_policy("mixed_float64"); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(message.find("mixed_float64"), std::string::npos) << message;
  EXPECT_NE(message.find("mixed_bfloat16"), std::string::npos) << message;
  EXPECT_EQ(nn::global_policy(), "float32");  // unchanged by the refused call

  nn::Dense d(4);
  EXPECT_EQ(error_of([&] { d.set_dtype_policy("half"); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(d.dtype_policy(), "float32");

  dlrt::Context ctx = cpu_context();
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(2)});
  EXPECT_EQ(error_of([&] { compile(m, "bf16"); }).first, DLRT_INVALID_ARGUMENT);
}

TEST(MixedPrecision, LayersTakeTheGlobalPolicyWhenMade) {
  nn::Dense before(4);
  {
    GlobalPolicy p("mixed_bfloat16");
    EXPECT_EQ(nn::global_policy(), "mixed_bfloat16");
    nn::Dense during(4);
    EXPECT_EQ(during.dtype_policy(), "mixed_bfloat16");
    during.set_dtype_policy("float32");  // one layer kept in f32, as Keras' dtype="float32"
    EXPECT_EQ(during.dtype_policy(), "float32");
  }
  EXPECT_EQ(before.dtype_policy(), "float32");
  EXPECT_EQ(nn::Dense(4).dtype_policy(), "float32");
}

// The same weights in an f32 model and a mixed_bfloat16 one: their predictions differ (the
// convolutions and the matmul ran on bf16 operands) by no more than bf16's rounding explains,
// the outputs are f32 probabilities, and the mixed model's variables are f32 values equal to
// the f32 model's (the checkpoint of one loads into the other).
// mixed_bfloat16 on a device without native bf16 (this machine's CPU unless it has
// AVX512-BF16 or AMX) is said once, naming the device; with native bf16 nothing is said.
TEST(MixedPrecision, Bf16OnADeviceWithoutNativeBf16IsSaidOnce) {
  dlrt::Context ctx = cpu_context();
  // What the CPU device itself says it computes natively (plugins/cpu/device.cc).
  std::string native;
  dlrt_device_info d{};
  d.struct_size = sizeof(d);
  dlrt::check(dlrt_context_device_info(ctx.get(), 0, &d));
  for (size_t a = 0; a < d.num_attrs; ++a)
    if (std::string(d.attrs[a]->name) == "native_dtypes") native = d.attrs[a]->s;
  ASSERT_FALSE(native.empty());
  const bool has_bf16 = native.find("bf16") != std::string::npos;
  const std::string why = nn::detail::bf16_is_converted_on(ctx);
  EXPECT_EQ(why.empty(), has_bf16) << native;
  if (!has_bf16) {
    EXPECT_NE(why.find("/device:CPU:0"), std::string::npos) << why;
    EXPECT_NE(why.find("native dtypes: " + native), std::string::npos) << why;
  }
  // Compiling bf16 models prints it at most once; an f32 model never.
  testing::internal::CaptureStderr();
  nn::Sequential f32(ctx), a(ctx), b(ctx);
  add_cnn(f32);
  add_cnn(a);
  add_cnn(b);
  compile(f32, "float32");
  compile(a, "mixed_bfloat16");
  compile(b, "mixed_bfloat16");
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string head = "mixed precision compatibility check (mixed_bfloat16): WARNING";
  size_t count = 0;
  for (size_t at = err.find(head); at != std::string::npos; at = err.find(head, at + 1)) ++count;
  // Earlier tests in this binary may have said it already (once per process).
  EXPECT_LE(count, 1u) << err;
  if (has_bf16) EXPECT_EQ(count, 0u) << err;
}

TEST(MixedPrecision, Bf16ModelComputesIn16BitsWithF32VariablesAndCheckpoints) {
  if (!have_fashion()) GTEST_SKIP() << "no Fashion-MNIST in " << kFashion;
  nn::Array x, y;
  fashion(256, &x, &y);
  dlrt::Context ctx = cpu_context();
  nn::Sequential f32(ctx), bf16(ctx);
  add_cnn(f32);
  add_cnn(bf16);
  compile(f32, "float32");
  compile(bf16, "mixed_bfloat16");

  // Train the mixed model a little, then hand its weights to the f32 one.
  nn::FitOptions fit;
  fit.epochs = 1;
  fit.batch_size = 32;
  fit.progress.verbose = 0;
  bf16.fit(x, y, fit);
  for (const auto& v : bf16.state()) EXPECT_FALSE(v.values.empty()) << v.name;  // f32 values
  const std::string path = ::testing::TempDir() + "mixed_bf16.safetensors";
  bf16.save_weights(path);
  f32.load_weights(path);
  std::remove(path.c_str());
  const auto a = f32.state(), b = bf16.state();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].values, b[i].values) << a[i].name;

  const nn::Array p32 = f32.predict(x, 64), p16 = bf16.predict(x, 64);
  ASSERT_EQ(p16.dtype(), DLRT_F32);
  const std::vector<float> v32 = p32.values<float>(), v16 = p16.values<float>();
  ASSERT_EQ(v32.size(), v16.size());
  double max_diff = 0;
  int same_class = 0;
  for (size_t r = 0; r < v32.size() / 10; ++r) {
    for (size_t k = 0; k < 10; ++k)
      max_diff = std::max(max_diff, double(std::fabs(v32[r * 10 + k] - v16[r * 10 + k])));
    auto arg = [&](const std::vector<float>& v) {
      return std::max_element(v.begin() + r * 10, v.begin() + r * 10 + 10) - (v.begin() + r * 10);
    };
    same_class += arg(v32) == arg(v16);
  }
  EXPECT_GT(max_diff, 0.0) << "the mixed model computed exactly what the f32 one did";
  EXPECT_LT(max_diff, 0.1) << "more than bf16 rounding apart";
  EXPECT_GE(same_class, 240) << "of 256 images predicted as the f32 model does";
}

// 200 steps of batch 32 from the same initial weights: the mixed_bfloat16 and mixed_float16
// models' losses follow the f32 model's (each 20-step window's mean within 0.03 nats, the last
// window's within 5%), and all three learn. (Measured: within 0.002 nats for bf16.)
TEST(MixedPrecision, Bf16AndF16StepsFollowF32StepsOver200Steps) {
  if (!have_fashion()) GTEST_SKIP() << "no Fashion-MNIST in " << kFashion;
  const int64_t batch = 32, steps = 200;
  nn::Array x, y;
  fashion(batch * steps, &x, &y);
  dlrt::Context ctx = cpu_context();
  auto losses = [&](const std::string& policy) {
    nn::Sequential m(ctx);
    add_cnn(m);
    compile(m, policy);
    std::vector<double> out;
    for (int64_t s = 0; s < steps; ++s)
      out.push_back(
          m.train_on_batch(rows(x, s * batch, batch), rows(y, s * batch, batch))[0].second);
    return out;
  };
  auto window = [](const std::vector<double>& l, size_t w) {
    double s = 0;
    for (size_t i = w * 20; i < (w + 1) * 20; ++i) s += l[i];
    return s / 20;
  };
  const std::vector<double> l32 = losses("float32");
  EXPECT_LT(window(l32, 9), 0.6 * window(l32, 0));
  for (const std::string policy : {"mixed_bfloat16", "mixed_float16"}) {
    const std::vector<double> l16 = losses(policy);
    for (size_t w = 0; w < 10; ++w) {
      EXPECT_NEAR(window(l16, w), window(l32, w), 0.03)
          << policy << ", steps " << w * 20 << "-" << w * 20 + 19;
      std::printf("[   INFO   ] steps %3zu-%3zu: loss float32 %.4f, %s %.4f\n", w * 20, w * 20 + 19,
                  window(l32, w), policy.c_str(), window(l16, w));
    }
    EXPECT_NEAR(window(l16, 9), window(l32, 9), 0.05 * window(l32, 9)) << policy;
  }
}

// The value of state variable `name` (a scalar's only element for scalars).
const std::vector<float>& state_of(const std::vector<nn::Sequential::NamedValue>& s,
                                   const std::string& name) {
  for (const auto& v : s)
    if (v.name == name) return v.values;
  throw std::runtime_error("no state variable " + name);
}

// mixed_float16 scales the loss (Keras' dynamic LossScaleOptimizer): a finite step keeps the
// scale 2^15 and counts; a step whose gradients are not finite (an infinite input) changes no
// weight, slot or step count, halves the scale and resets the count; the next finite step
// trains again. Over 60 more steps the f16 model learns.
TEST(MixedPrecision, Float16LossScalingSkipsANonFiniteStepAndRecovers) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  nn_test::two_classes(64, 3, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(16, "relu"), nn::Dense(2)});
  nn::CompileConfig cfg;
  cfg.seed = 3;
  cfg.dtype_policy = "mixed_float16";
  m.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {}, cfg);

  const double first = m.train_on_batch(x, y)[0].second;
  EXPECT_TRUE(std::isfinite(first));
  auto before = m.state();
  EXPECT_EQ(state_of(before, "optimizer/loss_scale").at(0), 32768.f);
  EXPECT_EQ(state_of(before, "optimizer/loss_scale_good_steps").at(0), 1.f);
  EXPECT_EQ(state_of(before, "optimizer/iterations").at(0), 1.f);

  std::vector<float> bad = x.values<float>();
  bad[5] = std::numeric_limits<float>::infinity();
  const double skipped = m.train_on_batch(nn::Array::of<float>({64, 4}, bad), y)[0].second;
  EXPECT_FALSE(std::isfinite(skipped));
  auto after = m.state();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i].name.rfind("optimizer/loss_scale", 0) == 0) continue;
    EXPECT_EQ(after[i].values, before[i].values) << after[i].name << " changed in a skipped step";
  }
  EXPECT_EQ(state_of(after, "optimizer/loss_scale").at(0), 16384.f);
  EXPECT_EQ(state_of(after, "optimizer/loss_scale_good_steps").at(0), 0.f);

  const double again = m.train_on_batch(x, y)[0].second;
  EXPECT_TRUE(std::isfinite(again));
  auto recovered = m.state();
  EXPECT_NE(state_of(recovered, "dense/kernel"), state_of(after, "dense/kernel"));
  EXPECT_EQ(state_of(recovered, "optimizer/iterations").at(0), 2.f);
  EXPECT_EQ(state_of(recovered, "optimizer/loss_scale_good_steps").at(0), 1.f);
  double last = again;
  for (int s = 0; s < 60; ++s) last = m.train_on_batch(x, y)[0].second;
  EXPECT_LT(last, 0.5 * first);
}

// Under MirroredStrategy (two CPU logical devices): a mixed_bfloat16 model trains (bf16 needs
// no loss scaling, so fit's split step runs it) and ends close to the same model on one device
// (the replicas' bf16 gradients are averaged in f32; the difference is bf16 rounding on half
// batches); mixed_float16 is refused with UNIMPLEMENTED naming what to use instead.
TEST(MixedPrecision, Bf16UnderMirroredStrategyAndF16Refused) {
  dlrt::Context ctx = cpu_context(2);
  nn::Array x, y;
  nn_test::two_classes(64, 5, &x, &y);
  auto make = [&](const std::string& policy, nn::DistributionStrategy* strategy) {
    auto m = std::make_unique<nn::Sequential>(
        ctx,
        std::initializer_list<nn::LayerRef>{nn::Input({4}), nn::Dense(16, "relu"), nn::Dense(2)});
    nn::CompileConfig cfg;
    cfg.seed = 9;
    cfg.dtype_policy = policy;
    if (strategy == nullptr) cfg.device = "/CPU:0";
    std::optional<nn::StrategyScope> scope;
    if (strategy != nullptr) scope.emplace(*strategy);
    m->compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {}, cfg);
    return m;
  };
  nn::FitOptions fit;
  fit.epochs = 5;
  fit.batch_size = 16;
  fit.shuffle = false;
  fit.progress.verbose = 0;
  auto single = make("mixed_bfloat16", nullptr);
  const nn::History hs = single->fit(x, y, fit);
  nn::MirroredStrategy strategy(ctx);
  auto mirrored = make("mixed_bfloat16", &strategy);
  const nn::History hm = mirrored->fit(x, y, fit);
  EXPECT_LT(hm.history.at("loss").back(), 0.7 * hm.history.at("loss").front());
  EXPECT_NEAR(hm.last("loss"), hs.last("loss"), 0.05);

  auto f16 = make("mixed_float16", &strategy);
  auto [code, message] = error_of([&] { f16->fit(x, y, fit); });
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(message.find("mixed_bfloat16"), std::string::npos) << message;
}

// A custom step (nn::TrainStep) of a mixed_float16 model scales its optimizer's loss the same
// way: "<optimizer>/loss_scale" starts at 2^15; a batch with an infinite input changes no
// weight or slot and halves it; the next batch trains again.
TEST(MixedPrecision, Float16CustomStepScalesItsLoss) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  nn_test::two_classes(32, 4, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(2)});
  nn::CompileConfig cfg;
  cfg.seed = 4;
  cfg.dtype_policy = "mixed_float16";
  m.compile(cfg);
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(1e-2);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value l = t.loss(loss, t.input("y"), m(t.input("x")));
    t.minimize(l, adam, m.trainable_variables());
    return {{"loss", l}};
  });
  auto value = [&](const std::string& name) {
    for (const auto& v : step.state())
      if (v.name == name) return v.values;
    throw std::runtime_error("no step variable " + name);
  };
  EXPECT_TRUE(std::isfinite(step.run({{"x", x}, {"y", y}})[0].second));
  EXPECT_EQ(value("optimizer/loss_scale").at(0), 32768.f);
  const auto before = step.state();
  std::vector<float> bad = x.values<float>();
  bad[0] = std::numeric_limits<float>::infinity();
  step.run({{"x", nn::Array::of<float>({32, 4}, bad)}, {"y", y}});
  const auto after = step.state();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i].name.find("loss_scale") == std::string::npos) {
      EXPECT_EQ(after[i].values, before[i].values) << after[i].name;
    }
  }
  EXPECT_EQ(value("optimizer/loss_scale").at(0), 16384.f);
  EXPECT_TRUE(std::isfinite(step.run({{"x", x}, {"y", y}})[0].second));
  EXPECT_EQ(value("optimizer/iterations").at(0), 2.f);
}

}  // namespace
