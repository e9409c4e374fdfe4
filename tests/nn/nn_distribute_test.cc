// nn_distribute_test.cc: data-parallel training with nn::MirroredStrategy on CPU logical
// devices (the in-process reduction) and on reference devices (the plugin-collectives path,
// through the reference plugin's NCCL test double): after N steps the weights equal
// single-device training with the same global batch within float tolerance, every replica
// holds the same bits, an uneven split is refused with the rule, and a resumed fit with
// Dropout ends where the uninterrupted one does.
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

dlrt::Context cpu_context(int logical) {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("")
      .visible_devices("CPU")
      .log_level(DLRT_LOG_ERROR);
  if (logical > 1) o.logical_devices("CPU:0", logical);
  return dlrt::Context(o);
}

// 8x8x1 u8 images of two classes (bright top or bright bottom) and their labels.
void images(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dim(0, 60), bright(150, 255);
  std::vector<uint8_t> px, labels;
  for (int i = 0; i < n; ++i) {
    labels.push_back(static_cast<uint8_t>(i % 2));
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        px.push_back(static_cast<uint8_t>((r < 4) == (i % 2 == 0) ? bright(gen) : dim(gen)));
  }
  *x = nn::Array(DLRT_U8, {n, 8, 8, 1}, px);
  *y = nn::Array(DLRT_U8, {n}, labels);
}

std::unique_ptr<nn::Sequential> cnn(const dlrt::Context& ctx, bool dropout = false) {
  auto m = std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{nn::Input({8, 8, 1}), nn::Conv2D(4, {3, 3}, "relu"),
                                               nn::MaxPool2D(), nn::Flatten()});
  if (dropout) m->add(nn::Dropout(0.3));
  m->add(nn::Dense(8, "relu"));
  m->add(nn::Dense(2));
  return m;
}

void compile(nn::Sequential& m, const std::string& device = "") {
  nn::CompileConfig c;
  c.seed = 5;
  c.device = device;
  m.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
}

using nn_test::quiet;

// max |a - b| / max(1, max |a|) over every variable.
double max_rel_diff(const std::vector<nn::Sequential::NamedValue>& a,
                    const std::vector<nn::Sequential::NamedValue>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double scale = 1, diff = 0;
    for (size_t k = 0; k < a[i].values.size(); ++k) {
      scale = std::max(scale, std::fabs(double(a[i].values[k])));
      diff = std::max(diff, std::fabs(double(a[i].values[k]) - double(b[i].values[k])));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

void expect_replicas_identical(nn::Sequential& m) {
  const auto first = m.replica_state(0);
  for (size_t r = 1; r < m.num_local_replicas(); ++r) {
    const auto other = m.replica_state(r);
    for (size_t i = 0; i < first.size(); ++i)
      EXPECT_EQ(first[i].values, other[i].values) << "replica " << r << ": " << first[i].name;
  }
}

// Global batch 12 over `replicas` CPU logical devices vs one device: 62 rows make 5 full
// steps and a last one of 2 rows (with 3 replicas of 4 rows: one replica has 2 real rows,
// the others none).
void mirrored_equals_single(int replicas) {
  dlrt::Context ctx = cpu_context(replicas);
  nn::Array x, y;
  images(62, 1, &x, &y);

  auto single = cnn(ctx);
  compile(*single, "/CPU:0");
  nn::History hs = single->fit(x, y, quiet(3, 12));

  nn::MirroredStrategy strategy(ctx);
  ASSERT_EQ(strategy.num_replicas_in_sync(), replicas);
  auto mirrored = cnn(ctx);
  {
    nn::StrategyScope scope(strategy);
    compile(*mirrored);
  }
  nn::History hm = mirrored->fit(x, y, quiet(3, 12));
  ASSERT_EQ(mirrored->num_local_replicas(), size_t(replicas));

  const double diff = max_rel_diff(single->state(), mirrored->state());
  EXPECT_LT(diff, 1e-4) << "mirrored over " << replicas << " devices drifted from one device";
  EXPECT_GT(single->state()[0].values[0], -100.f);           // trained something finite
  EXPECT_EQ(mirrored->state().back().values[0], 3.f * 6.f);  // every step counted once
  EXPECT_NEAR(hm.last("loss"), hs.last("loss"), 1e-4);
  EXPECT_DOUBLE_EQ(hm.last("accuracy"), hs.last("accuracy"));
  expect_replicas_identical(*mirrored);

  // Evaluation runs on replica 0 and agrees with the single device.
  EXPECT_NEAR(mirrored->evaluate(x, y, 16)[0].second, single->evaluate(x, y, 16)[0].second, 1e-4);
}

TEST(NnMirrored, TwoCpuDevicesEqualOneDevice) { mirrored_equals_single(2); }
TEST(NnMirrored, ThreeCpuDevicesEqualOneDevice) { mirrored_equals_single(3); }

TEST(NnMirrored, DefaultDevicesAreTheCpuLogicalDevices) {
  dlrt::Context ctx = cpu_context(2);
  nn::MirroredStrategy strategy(ctx);
  EXPECT_EQ(strategy.devices(), (std::vector<std::string>{"/device:CPU:0", "/device:CPU:1"}));
  EXPECT_EQ(strategy.num_workers(), 1);
  EXPECT_TRUE(strategy.is_chief());
}

TEST(NnMirrored, UnevenGlobalBatchIsRefusedWithTheRule) {
  dlrt::Context ctx = cpu_context(3);
  nn::Array x, y;
  images(40, 2, &x, &y);
  nn::MirroredStrategy strategy(ctx);
  auto m = cnn(ctx);
  {
    nn::StrategyScope scope(strategy);
    compile(*m);
  }
  try {
    m->fit(x, y, quiet(1, 10));
    FAIL() << "batch 10 over 3 replicas";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("does not split evenly over 3 replicas"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("use a multiple of 3"), std::string::npos) << e.message();
  }
  m->fit(x, y, quiet(1, 9));  // a multiple works on the same model
  expect_replicas_identical(*m);
}

TEST(NnMirrored, DropoutReplicasStayIdentical) {
  // Replicas draw different masks (replica 0 the single-device ones) but apply the same
  // summed update.
  dlrt::Context ctx = cpu_context(2);
  nn::Array x, y;
  images(48, 3, &x, &y);
  nn::MirroredStrategy strategy(ctx);
  auto m = cnn(ctx, /*dropout=*/true);
  {
    nn::StrategyScope scope(strategy);
    compile(*m);
  }
  nn::History h = m->fit(x, y, quiet(4, 8));
  expect_replicas_identical(*m);
  EXPECT_LT(h.history["loss"].back(), h.history["loss"].front());
}

// BatchNormalization under fit: each replica normalises with its own rows' statistics, and
// the moving statistics after a step are the mean of what each replica's rows alone give
// (one device fitting each half), as Keras' mirrored moving variables; every replica holds
// them. The statistics come from x alone (the layer reads the input), whatever the weights.
TEST(NnMirrored, BatchNormMovingStatisticsAreTheReplicasMean) {
  dlrt::Context ctx = cpu_context(2);
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(2.f, 3.f);
  std::vector<float> xv(16 * 3), yv(16);
  for (float& f : xv) f = normal(gen);
  for (float& f : yv) f = normal(gen);
  auto make = [&] {
    nn::Input in({3});
    auto m = std::make_unique<nn::Model>(ctx, in, nn::Dense(1)(nn::BatchNormalization()(in)));
    return m;
  };
  nn::CompileConfig c;
  c.seed = 3;
  std::vector<std::vector<nn::Model::NamedValue>> halves;
  for (int h = 0; h < 2; ++h) {
    auto m = make();
    c.device = "/CPU:0";
    m->compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, c);
    const nn::Array x = nn::Array::of<float>(
        {8, 3}, std::vector<float>(xv.begin() + h * 24, xv.begin() + h * 24 + 24));
    const nn::Array y = nn::Array::of<float>(
        {8, 1}, std::vector<float>(yv.begin() + h * 8, yv.begin() + h * 8 + 8));
    nn::FitOptions f = quiet(1, 8);
    f.shuffle = false;
    m->fit(x, y, f);
    halves.push_back(m->state());
  }
  nn::MirroredStrategy strategy(ctx);
  auto m = make();
  c.device = "";
  {
    nn::StrategyScope scope(strategy);
    m->compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, c);
  }
  nn::FitOptions f = quiet(1, 16);
  f.shuffle = false;
  m->fit(nn::Array::of<float>({16, 3}, xv), nn::Array::of<float>({16, 1}, yv), f);
  const auto got = m->state();
  int checked = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].name.find("moving_") == std::string::npos) continue;
    for (size_t k = 0; k < got[i].values.size(); ++k)
      EXPECT_NEAR(got[i].values[k], 0.5f * (halves[0][i].values[k] + halves[1][i].values[k]), 1e-5)
          << got[i].name << "[" << k << "]";
    EXPECT_NE(got[i].values, halves[0][i].values) << got[i].name << ": replica 1 ignored";
    ++checked;
  }
  EXPECT_EQ(checked, 2) << "moving_mean and moving_variance";
  const auto other = m->replica_state(1);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i].values, other[i].values) << "replica 1: " << got[i].name;
}

TEST(NnMirrored, WeightsLoadedBeforeFitReachEveryReplica) {
  dlrt::Context ctx = cpu_context(2);
  nn::Array x, y;
  images(24, 4, &x, &y);
  const std::string path = ::testing::TempDir() + "nn_mirrored_load.safetensors";
  auto trained = cnn(ctx);
  compile(*trained, "/CPU:0");
  trained->fit(x, y, quiet(1, 8));
  trained->save_weights(path);

  nn::MirroredStrategy strategy(ctx);
  auto m = cnn(ctx);
  {
    nn::StrategyScope scope(strategy);
    compile(*m);
  }
  m->load_weights(path);
  EXPECT_EQ(max_rel_diff(m->replica_state(1), trained->state()), 0.0);
  std::remove(path.c_str());
}

TEST(NnMirrored, ReferenceDevicesUseThePluginCollectives) {
  // Two REF devices: the reference plugin offers a collectives table (an in-process double of
  // NCCL), so the strategy reduces through it instead of on the host.
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("reference:num_devices=2")
      .visible_devices("REF")
      .log_level(DLRT_LOG_ERROR);
  dlrt::Context ctx(o);
  ASSERT_EQ(ctx.devices().size(), 2u);
  nn::Array x, y;
  images(20, 5, &x, &y);
  auto single = cnn(ctx);
  compile(*single, "/REF:0");
  single->fit(x, y, quiet(1, 4));
  nn::MirroredStrategy strategy(ctx, {"/REF:0", "/REF:1"});
  auto m = cnn(ctx);
  {
    nn::StrategyScope scope(strategy);
    compile(*m);
  }
  m->fit(x, y, quiet(1, 4));
  EXPECT_LT(max_rel_diff(single->state(), m->state()), 1e-5);
  expect_replicas_identical(*m);
}

// GPU-labelled in spirit: they skip without a usable GPU (tools/gpu-check.sh runs them with
// --gtest_filter='*Gpu*'). One H200 cannot hold two NCCL ranks (NCCL refuses two ranks on one
// GPU), so: two logical GPUs of one physical GPU (the strategy sums on the host), and one GPU
// alone (a one-rank NCCL communicator: the device path end to end).
bool has_gpu(const dlrt::Context& ctx) {
  for (const dlrt::DeviceInfo& d : ctx.devices())
    if (d.device_class == DLRT_DEVICE_CLASS_GPU) return true;
  return false;
}

dlrt::Context gpu_context(int logical) {
  dlrt::ContextOptions o;
  o.log_level(DLRT_LOG_ERROR);  // the default search: plugins beside the binary, also when packed
  if (logical > 1) o.logical_devices("GPU:0", logical);
  return dlrt::Context(o);
}

void mirrored_gpu_equals_single(const std::vector<std::string>& devices, int logical) {
  dlrt::Context probe = gpu_context(1);
  if (!has_gpu(probe)) GTEST_SKIP() << "no usable GPU on this machine";
  dlrt::Context ctx = gpu_context(logical);
  nn::Array x, y;
  images(96, 7, &x, &y);
  auto single = cnn(ctx);
  compile(*single, "/GPU:0");
  single->fit(x, y, quiet(2, 16));
  nn::MirroredStrategy strategy(ctx, devices);
  auto m = cnn(ctx);
  {
    nn::StrategyScope scope(strategy);
    compile(*m);
  }
  m->fit(x, y, quiet(2, 16));
  EXPECT_LT(max_rel_diff(single->state(), m->state()), 1e-4);
  expect_replicas_identical(*m);
}

TEST(NnMirroredGpu, TwoLogicalGpusEqualOneGpu) {
  mirrored_gpu_equals_single({"/GPU:0", "/GPU:1"}, 2);
}
TEST(NnMirroredGpu, OneGpuThroughNccl) { mirrored_gpu_equals_single({"/GPU:0"}, 1); }

TEST(NnCheckpoint, ResumeWithDropoutEqualsUninterrupted) {
  // The step executable's run count (Dropout's rng_offset) continues from the checkpoint's
  // step count, so the resumed run draws the masks of the uninterrupted one.
  dlrt::Context ctx = cpu_context(1);
  nn::Array x, y;
  images(40, 6, &x, &y);
  const std::string path = ::testing::TempDir() + "nn_resume_dropout.safetensors";
  auto whole = cnn(ctx, true);
  compile(*whole);
  whole->fit(x, y, quiet(3, 16));

  auto first = cnn(ctx, true);
  compile(*first);
  nn::FitOptions f = quiet(1, 16);
  f.callbacks.push_back(std::make_shared<nn::ModelCheckpoint>(path));
  first->fit(x, y, f);
  first.reset();

  auto resumed = cnn(ctx, true);
  compile(*resumed);
  resumed->load_weights(path);
  nn::FitOptions rest = quiet(3, 16);
  rest.initial_epoch = resumed->epoch();
  resumed->fit(x, y, rest);
  EXPECT_EQ(max_rel_diff(whole->state(), resumed->state()), 0.0);
  std::remove(path.c_str());
}

}  // namespace
