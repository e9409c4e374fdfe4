// no_gpu_test.cc: what a machine without a usable GPU does with a model that asks for one
// (docs/design.md sections 3 and 4; docs/placement.md).
//
// The context loads this build tree's plugins (cpu, reference, null, and cuda in a CUDA
// build, which on such a machine loads with no devices and its reason) plus the loader test
// plugin count_fails, which stands in for any GPU plugin whose platform is unusable: its
// device_count answers UNAVAILABLE "no test hardware in this machine", as cuda does without a
// driver. Only CPU devices are made visible, so /GPU:0 is missing on every machine.
//   - strict placement: fit fails with INVALID_ARGUMENT naming /GPU:0 and saying why;
//   - soft placement (the default): the model trains on /device:CPU:0 and the placement log
//     shows fallback:device-missing with the same words;
//   - find_device("/GPU:0") and visible_devices "GPU" fail NOT_FOUND saying why.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

const std::string kStandIn =
    "plugin loader_count_fails has no devices: no test hardware in this machine";

dlrt::ContextOptions options() {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .plugin_path(DLRT_COUNT_FAILS_DIR)
      .search_default_paths(false)
      .plugin_options("")
      .visible_devices("CPU")
      .log_level(DLRT_LOG_ERROR);
  return o;
}

// The cuda plugin's own words when this build has one and it found no device ("" otherwise):
// "plugin cuda has no devices: cuda: no CUDA device: cudaErrorInsufficientDriver (...)".
std::string cuda_reason(const dlrt::Context& ctx) {
  for (const dlrt::PluginInfo& p : ctx.plugins())
    if (p.name == "cuda" && p.state == DLRT_PLUGIN_LOADED && p.device_count == 0 &&
        p.error_code == DLRT_UNAVAILABLE)
      return "plugin cuda has no devices: cuda: ";
  return "";
}

void expect_says_why(const dlrt::Context& ctx, const std::string& message) {
  EXPECT_NE(message.find(kStandIn), std::string::npos) << message;
  const std::string cuda = cuda_reason(ctx);
  if (!cuda.empty()) {
    EXPECT_NE(message.find(cuda), std::string::npos) << message;
  }
}

void blobs(int n, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(7);
  std::normal_distribution<float> noise(0.f, 0.3f);
  const float centres[3][4] = {{1, 0, 0, 1}, {0, 1, 1, 0}, {-1, -1, 0, 0}};
  std::vector<float> xs;
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) {
    ys.push_back(i % 3);
    for (int k = 0; k < 4; ++k) xs.push_back(centres[i % 3][k] + noise(gen));
  }
  *x = nn::Array::of<float>({n, 4}, xs);
  *y = nn::Array::of<int32_t>({n}, ys);
}

nn::FitOptions quiet(int64_t epochs) {
  nn::FitOptions f;
  f.epochs = epochs;
  f.batch_size = 30;
  f.progress.verbose = 0;
  return f;
}

// A 4 -> 16 -> 3 classifier built and compiled inside a /GPU:0 scope.
void build_on_gpu0(nn::Sequential& m, bool log_placement) {
  nn::DeviceScope gpu(m, "/GPU:0");
  nn::CompileConfig c;
  c.seed = 5;
  c.log_device_placement = log_placement;
  m.compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
}

TEST(NoGpu, StrictPlacementIsAnErrorThatSaysWhy) {
  dlrt::Context ctx(options().soft_placement(false));
  nn::Array x, y;
  blobs(90, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(16, "relu"), nn::Dense(3)});
  build_on_gpu0(m, false);
  try {
    m.fit(x, y, quiet(1));
    FAIL() << "a model on a missing /GPU:0 trained under strict placement";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(e.message().find("requested /GPU:0 but no visible device matches it (visible: "
                               "/device:CPU:0"),
              std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("devices that can: /device:CPU:0"), std::string::npos);
    expect_says_why(ctx, e.message());
  }
}

TEST(NoGpu, SoftPlacementTrainsOnCpuAndLogsWhy) {
  dlrt::Context ctx(options());  // soft placement: the default
  nn::Array x, y;
  blobs(150, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(16, "relu"), nn::Dense(3)});
  build_on_gpu0(m, true);
  ::testing::internal::CaptureStderr();
  const nn::History h = m.fit(x, y, quiet(10));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_GE(h.last("accuracy"), 0.9);

  const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
  dlrt::Executable& step = m.train_executable();
  size_t fell_back = 0;
  for (size_t i = 0; i < step.node_count(); ++i) {
    const dlrt::NodePlacement p = step.node_placement(i);
    EXPECT_EQ(p.assigned, cpu0) << p.name;
    if (p.reason != "fallback:device-missing") continue;
    ++fell_back;
    EXPECT_EQ(p.requested, "/GPU:0") << p.name;
    expect_says_why(ctx, p.detail);
  }
  EXPECT_GT(fell_back, 0u);
  // TensorFlow's log line, then the reason with the plugins' words.
  EXPECT_NE(log.find(": " + cpu0 +
                     " [fallback:device-missing: requested /GPU:0 but no visible "
                     "device matches it (visible: /device:CPU:0; "),
            std::string::npos)
      << log;
  expect_says_why(ctx, log);
}

TEST(NoGpu, AskingForTheDeviceByNameSaysWhy) {
  dlrt::Context ctx(options());
  try {
    ctx.find_device("/GPU:0");
    FAIL() << "find_device found a GPU that is not visible";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
    EXPECT_NE(e.message().find("no device matches '/GPU:0'"), std::string::npos) << e.message();
    expect_says_why(ctx, e.message());
  }
  // Only GPUs visible, on a machine that has none usable: the context itself says why.
  bool gpu_machine = false;
  for (const dlrt::PluginInfo& p : ctx.plugins())
    gpu_machine |= p.name == "cuda" && p.device_count > 0;
  if (gpu_machine) GTEST_SKIP() << "this machine has a CUDA device";
  try {
    dlrt::Context gpus(options().visible_devices("GPU"));
    FAIL() << "a context with visible devices GPU was made without a GPU";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
    EXPECT_NE(e.message().find(kStandIn), std::string::npos) << e.message();
  }
}

}  // namespace
