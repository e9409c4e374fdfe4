// nn_train_test.cc: dlrt::nn models trained for real on the cpu plugin (oneDNN) — a small MLP
// on a separable problem and a small CNN on u8 images reach high accuracy; evaluate and
// predict change no variable; checkpoints round-trip every variable and the metadata;
// checkpoint + resume gives bit for bit the state of an uninterrupted run; a device scope
// places the model; a new batch size keeps the trained state; bad data is refused by name.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

dlrt::Context cpu_context(int logical = 1) {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("")
      .visible_devices("CPU")
      .log_level(DLRT_LOG_ERROR);
  if (logical > 1) o.logical_devices("CPU:0", logical);
  return dlrt::Context(o);
}

// Three classes, the nearest of three fixed centres, with noise: x (n,4) f32, y (n) i32.
void blobs(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
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

using nn_test::quiet;

void make_mlp(nn::Sequential& m, uint64_t seed = 3) {
  nn::CompileConfig c;
  c.seed = seed;
  m.compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
}

std::vector<nn::Sequential::NamedValue> weights(nn::Sequential& m) { return m.state(); }

void expect_same_state(nn::Sequential& a, nn::Sequential& b) {
  auto sa = a.state(), sb = b.state();
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].name, sb[i].name);
    EXPECT_EQ(sa[i].values, sb[i].values) << sa[i].name << " differs";
  }
}

TEST(NnTrain, MlpLearnsSeparableBlobs) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y, vx, vy;
  blobs(300, 1, &x, &y);  // 300 = 9 full batches of 32 + one of 12 (padded, masked)
  blobs(90, 2, &vx, &vy);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(16, "relu"), nn::Dense(3)});
  make_mlp(m);
  nn::FitOptions f = quiet(15, 32);
  f.validation_x = &vx;
  f.validation_y = &vy;
  nn::History h = m.fit(x, y, f);
  ASSERT_EQ(h.epoch.size(), 15u);
  EXPECT_LT(h.history["loss"].back(), 0.5 * h.history["loss"].front());
  EXPECT_GE(h.last("accuracy"), 0.95);
  EXPECT_GE(h.last("val_accuracy"), 0.95);
  const nn::Logs ev = m.evaluate(vx, vy, 32);
  EXPECT_EQ(ev[0].first, "loss");
  EXPECT_EQ(ev[1].first, "accuracy");
  EXPECT_DOUBLE_EQ(ev[1].second, h.last("val_accuracy"));
  EXPECT_EQ(m.epoch(), 15);
  // The step count is the number of batches run.
  const auto state = m.state();
  ASSERT_EQ(state.back().name, "optimizer/iterations");
  EXPECT_EQ(state.back().values[0], 15.f * 10.f);
  ASSERT_EQ(state[state.size() - 2].name, "optimizer/learning_rate");
  EXPECT_EQ(state[state.size() - 2].values[0], 0.02f);
}

// Linux only: the hostile plugin is one of tests/loader's .so cases, which the Windows
// cross-build does not build.
#if !defined(_WIN32)
// CompileConfig device "auto" (dlrt's auto device) next to a hostile GPU: a plugin whose two
// GPU-class devices claim 2^62 bytes and decline every op (tests/loader's huge_memory case).
// Picking by class would put the model there; auto picks CPU:0, which runs all of it, trains,
// and says what it picked and what it passed over.
TEST(NnTrain, AutoDevicePassesOverAGpuThatRunsNothing) {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_HUGE_GPU_PLUGIN)
      .plugin_path(std::string(DLRT_TEST_PLUGIN_DIR) + "/libdlrt-cpu.so")
      .search_default_paths(false)
      .plugin_options("")
      .log_level(DLRT_LOG_ERROR);
  dlrt::Context ctx(o);
  ASSERT_EQ(ctx.devices().size(), 3u);
  ASSERT_EQ(ctx.devices()[0].device_class, DLRT_DEVICE_CLASS_GPU);
  nn::Array x, y;
  blobs(96, 1, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(16, "relu"), nn::Dense(3)});
  nn::CompileConfig c;
  c.device = "auto";
  m.compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
  nn::History h = m.fit(x, y, quiet(5, 32));
  EXPECT_LT(h.history["loss"].back(), h.history["loss"].front());
  const std::string picked = m.train_executable().auto_device();
  EXPECT_EQ(picked.rfind("picked /device:CPU:0 (plugin cpu, class CPU): it runs all of the ", 0),
            0u)
      << picked;
  EXPECT_NE(picked.find("passed over higher-ranked /device:GPU:0 (plugin huge_gpu, class GPU) "
                        "runs 0 of "),
            std::string::npos)
      << picked;
  // Every node of the step runs on CPU:0.
  dlrt::Executable& step = m.train_executable();
  for (size_t n = 0; n < step.node_count(); ++n)
    EXPECT_EQ(step.node_placement(n).assigned, "/job:localhost/replica:0/task:0/device:CPU:0")
        << step.node_placement(n).name;
}
#endif  // !_WIN32

TEST(NnTrain, CnnLearnsOnU8Images) {
  // 8x8 u8 images: class 0 bright on top, class 1 bright at the bottom.
  dlrt::Context ctx = cpu_context();
  std::mt19937 gen(4);
  std::uniform_int_distribution<int> dim(0, 60), bright(150, 255);
  const int n = 200;
  std::vector<uint8_t> px;
  std::vector<uint8_t> labels;
  for (int i = 0; i < n; ++i) {
    labels.push_back(static_cast<uint8_t>(i % 2));
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        px.push_back(static_cast<uint8_t>((r < 4) == (i % 2 == 0) ? bright(gen) : dim(gen)));
  }
  nn::Array x(DLRT_U8, {n, 8, 8, 1}, px), y(DLRT_U8, {n}, labels);
  nn::Sequential m(ctx, {nn::Input({8, 8, 1}), nn::Conv2D(4, {3, 3}, "relu"), nn::MaxPool2D(),
                         nn::Flatten(), nn::Dense(2)});
  m.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"});
  m.fit(x, y, quiet(5, 16));
  EXPECT_GE(m.evaluate(x, y, 64)[1].second, 0.95);
  nn::Array p = m.predict(x.head(3), 2);  // a full batch of 2 and a partial one of 1
  EXPECT_EQ(p.dims(), (std::vector<int64_t>{3, 2}));
}

TEST(NnTrain, EvaluateAndPredictChangeNoVariable) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(64, 5, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(8, "tanh"), nn::Dense(3)});
  make_mlp(m);
  m.fit(x, y, quiet(1, 16));
  const auto before = weights(m);
  m.evaluate(x, y, 16);
  m.evaluate(x, y, 50);  // a full batch of 50 and a partial one of 14
  m.predict(x, 16);
  const auto after = weights(m);
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(before[i].values, after[i].values) << before[i].name << " changed";
}

TEST(NnTrain, SgdAndMseTrainToo) {
  dlrt::Context ctx = cpu_context();
  // y = 2*x0 - x1, learnt by a linear layer.
  std::vector<float> xs, ys;
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < 128; ++i) {
    xs.push_back(u(gen));
    xs.push_back(u(gen));
    ys.push_back(2 * xs[xs.size() - 2] - xs.back());
  }
  nn::Array x = nn::Array::of<float>({128, 2}, xs), y = nn::Array::of<float>({128, 1}, ys);
  nn::Sequential m(ctx, {nn::Input({2}), nn::Dense(1)});
  m.compile(nn::SGD(0.1, 0.9), nn::MeanSquaredError());
  nn::History h = m.fit(x, y, quiet(20, 16));
  EXPECT_LT(h.last("loss"), 1e-3);
  EXPECT_THROW(m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {"accuracy"}), dlrt::Error);
}

TEST(NnCheckpoint, SaveLoadRoundTrip) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(96, 6, &x, &y);
  const std::string path = ::testing::TempDir() + "nn_ckpt_test.safetensors";
  nn::Sequential a(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
  make_mlp(a, 11);
  a.fit(x, y, quiet(2, 32));
  a.save_weights(path);

  const dlrt::SafeTensors file = dlrt::SafeTensors::open(path);
  EXPECT_EQ(file.metadata("format").value_or(""), "dlrt.nn/1");
  EXPECT_EQ(file.metadata("epoch").value_or(""), "2");
  EXPECT_EQ(file.metadata("step").value_or(""), "6");
  EXPECT_EQ(file.metadata("seed").value_or(""), "11");
  EXPECT_TRUE(file.find("dense/kernel/m").has_value());
  EXPECT_TRUE(file.find("optimizer/iterations").has_value());

  nn::Sequential b(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
  make_mlp(b, 99);
  b.load_weights(path);
  expect_same_state(a, b);
  EXPECT_EQ(b.epoch(), 2);
  EXPECT_EQ(b.seed(), 11u);  // the run's seed comes back with it

  // A model the file does not fit is refused, naming what is wrong.
  nn::Sequential wider(ctx, {nn::Input({4}), nn::Dense(9, "relu"), nn::Dense(3)});
  make_mlp(wider);
  try {
    wider.load_weights(path);
    FAIL() << "loaded 8 units into 9";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("dense/kernel"), std::string::npos) << e.message();
  }
  nn::Sequential deeper(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3), nn::Dense(3)});
  make_mlp(deeper);
  try {
    deeper.load_weights(path);
    FAIL() << "loaded a file without dense_2's weights";
  } catch (const dlrt::Error& e) {
    EXPECT_NE(e.message().find("has no tensor 'dense_2/kernel'"), std::string::npos) << e.message();
  }
  EXPECT_THROW(b.load_weights(path + ".missing"), dlrt::Error);
  std::remove(path.c_str());
}

TEST(NnCheckpoint, ResumeEqualsUninterrupted) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(100, 7, &x, &y);  // 4 steps of 32 per epoch, the last one padded
  const std::string path = ::testing::TempDir() + "nn_resume_test.safetensors";
  auto model = [&] {
    auto m = std::make_unique<nn::Sequential>(
        ctx,
        std::initializer_list<nn::LayerRef>{nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
    make_mlp(*m, 21);
    return m;
  };
  auto whole = model();
  whole->fit(x, y, quiet(3, 32));

  auto first = model();
  nn::FitOptions f = quiet(1, 32);
  f.callbacks.push_back(std::make_shared<nn::ModelCheckpoint>(path));
  first->fit(x, y, f);
  first.reset();  // the "process" that wrote the checkpoint is gone

  auto resumed = model();
  resumed->load_weights(path);
  nn::FitOptions rest = quiet(3, 32);
  rest.initial_epoch = resumed->epoch();
  EXPECT_EQ(rest.initial_epoch, 1);
  resumed->fit(x, y, rest);
  expect_same_state(*whole, *resumed);
  std::remove(path.c_str());
}

TEST(NnDevices, ScopePlacesTheModel) {
  dlrt::Context ctx = cpu_context(2);  // CPU:0 and CPU:1, logical halves of one CPU
  nn::Array x, y;
  blobs(64, 8, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
  {
    nn::DeviceScope on1(m, "/CPU:1");
    make_mlp(m);
  }
  m.fit(x, y, quiet(1, 32));
  dlrt::Executable& step = m.train_executable();
  size_t on_cpu1 = 0, copies = 0;
  for (size_t i = 0; i < step.node_count(); ++i) {
    const dlrt::NodePlacement p = step.node_placement(i);
    on_cpu1 += p.assigned == "/job:localhost/replica:0/task:0/device:CPU:1";
    copies += p.op == "copy";
  }
  EXPECT_EQ(on_cpu1, step.node_count());
  EXPECT_EQ(copies, 0u);
  EXPECT_THROW(nn::DeviceScope(m, "/GPU:zero"), dlrt::Error);
}

TEST(NnTrain, NewBatchSizeKeepsTheState) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(90, 9, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
  make_mlp(m);
  m.fit(x, y, quiet(4, 30));
  const double trained = m.evaluate(x, y, 30)[1].second;
  m.fit(x, y, quiet(1, 45));  // a new graph; the weights, slots and step count move over
  EXPECT_EQ(m.state().back().values[0], 4.f * 3.f + 2.f);
  EXPECT_GE(m.evaluate(x, y, 30)[1].second, trained - 0.05);
}

TEST(NnTrain, CapturedStepsCanBeTurnedOff) {
  // The reference plugin's capture double (reference:capture=1) stands in for CUDA Graphs: the
  // training step is captured at its second run and replayed after; CompileConfig::use_capture
  // false (dlbench train --no-capture) runs every step kernel by kernel.
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("reference:capture=1")
      .visible_devices("REF")
      .log_level(DLRT_LOG_ERROR);
  dlrt::Context ctx(o);
  nn::Array x, y;
  blobs(64, 4, &x, &y);
  auto replays = [&](bool capture) {
    nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)});
    nn::CompileConfig c;
    c.device = "/REF:0";
    c.use_capture = capture;
    m.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
    m.fit(x, y, quiet(2, 16));  // 8 steps
    return m.train_executable().run_stats().captured_replays;
  };
  EXPECT_GT(replays(true), 0u);
  EXPECT_EQ(replays(false), 0u);
}

TEST(NnTrain, BadDataIsRefusedByName) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y, short_y;
  blobs(30, 1, &x, &y);
  blobs(20, 1, &x, &short_y);
  blobs(30, 1, &x, &y);
  nn::Sequential m(ctx, {nn::Input({4}), nn::Dense(3)});
  try {
    m.fit(x, y, quiet(1, 8));
    FAIL() << "fit before compile";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_FAILED_PRECONDITION);
  }
  make_mlp(m);
  try {
    m.fit(x, short_y, quiet(1, 8));
    FAIL() << "30 images, 20 labels";
  } catch (const dlrt::Error& e) {
    EXPECT_NE(e.message().find("x has 30 samples but y has 20"), std::string::npos) << e.message();
  }
  nn::Array wide = nn::Array::of<float>({2, 5}, std::vector<float>(10, 0.f));
  EXPECT_THROW(m.predict(wide), dlrt::Error);
  nn::Array float_labels = nn::Array::of<float>({30}, std::vector<float>(30, 0.f));
  EXPECT_THROW(m.evaluate(x, float_labels), dlrt::Error);
}

// "accuracy" beside a binary cross-entropy is Keras' binary accuracy: a sigmoid output
// (threshold 0.5) or logits (threshold 0, from_logits), each sample a hit when it is on its
// target's side. Evaluated over 250 samples in batches of 32, so the padded rows of the last
// batch must not count: the metric equals the count made from predict.
TEST(NnTrain, AccuracyBesideBinaryCrossentropyIsBinaryAccuracy) {
  dlrt::Context ctx = cpu_context();
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int n = 250;
  std::vector<float> xs, ys;
  for (int i = 0; i < n; ++i) {
    float a = normal(gen), b = normal(gen);
    xs.insert(xs.end(), {a, b});
    ys.push_back(a + 0.5f * b > 0.f ? 1.f : 0.f);
  }
  const nn::Array x = nn::Array::of<float>({n, 2}, xs), y = nn::Array::of<float>({n, 1}, ys);
  for (const bool logits : {false, true}) {
    SCOPED_TRACE(logits ? "logits" : "sigmoid");
    nn::Sequential m(ctx, {nn::Input({2}), logits ? nn::Dense(1) : nn::Dense(1, "sigmoid")});
    m.compile(nn::Adam(0.05), nn::BinaryCrossentropy(logits), {"accuracy"});
    const nn::History h = m.fit(x, y, quiet(10, 32));
    EXPECT_GE(h.last("accuracy"), 0.9);
    const nn::Logs ev = m.evaluate(x, y, 32);
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[1].first, "accuracy");
    const std::vector<float> p = m.predict(x, 32).values<float>();
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += ((p[i] > (logits ? 0.f : 0.5f)) == (ys[i] > 0.5f)) ? 1 : 0;
    EXPECT_NEAR(ev[1].second, hits / double(n), 1e-6);
  }
  nn::Sequential named(ctx, {nn::Input({2}), nn::Dense(1, "sigmoid")});
  named.compile(nn::Adam(0.05), nn::BinaryCrossentropy(), {"binary_accuracy"});
  EXPECT_EQ(named.evaluate(x, y, 32)[1].first, "binary_accuracy");
}

// save_onnx before compile: a model with an Input is built for inference and saved (Keras
// saves uncompiled models too); one without is a FAILED_PRECONDITION naming what to do, never
// a null plan dereferenced (which crashed the Python interpreter once).
TEST(NnTrain, SaveOnnxBeforeCompile) {
#if !DLRT_TEST_HAS_ONNX
  GTEST_SKIP() << "this build has no ONNX export (DLRT_BUILD_ONNX off); "
                  "NnGuide.BuildTrainSaveReloadResume checks that save_onnx says so";
#endif
  dlrt::Context ctx = cpu_context();
  const std::string path = ::testing::TempDir() + "nn_save_uncompiled.onnx";
  nn::Sequential with_input(ctx, {nn::Input({4}), nn::Dense(3)});
  with_input.save_onnx(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr) << path;
  std::fseek(f, 0, SEEK_END);
  EXPECT_GT(std::ftell(f), 0);
  std::fclose(f);
  std::remove(path.c_str());
  nn::Sequential without(ctx, {nn::Dense(3)});
  try {
    without.save_onnx(path);
    FAIL() << "a model without an Input was saved";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_FAILED_PRECONDITION) << e.message();
    EXPECT_NE(e.message().find("Input"), std::string::npos) << e.message();
  }
}

}  // namespace
