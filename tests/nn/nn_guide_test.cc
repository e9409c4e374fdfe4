// nn_guide_test.cc: docs/nn.md's "Start here" guide, step by step, on a few hundred
// Fashion-MNIST images (the guide uses all of them): load IDX files into nn::Array, build,
// compile, fit with validation, read History and Logs, predict, save weights and ONNX, reload
// into a second model, predict the same, resume. Also Keras' Reshape layer, which the guide
// lists.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;

namespace {

const std::string kDir = "/usr/share/datasets/fashion-mnist/";

// The guide's load(), with a row limit.
nn::Array load(const std::string& path, bool images, int64_t rows) {
  dlrt::IdxArray a = dlrt::read_idx(path, static_cast<uint64_t>(rows));
  std::vector<int64_t> dims = a.dims();
  if (images) dims.push_back(1);
  const auto* p = static_cast<const uint8_t*>(a.data());
  return nn::Array(DLRT_U8, dims, std::vector<uint8_t>(p, p + a.bytes()));
}

std::vector<nn::LayerRef> guide_layers() {
  return {nn::Input({28, 28, 1}), nn::Conv2D(32, {3, 3}, "relu"), nn::MaxPool2D(),
          nn::Flatten(),          nn::Dense(64, "relu"),          nn::Dense(10)};
}

}  // namespace

TEST(NnGuide, BuildTrainSaveReloadResume) {
  std::FILE* probe = std::fopen((kDir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << kDir;
  std::fclose(probe);
  const nn::Array x_train = load(kDir + "train-images-idx3-ubyte.gz", true, 512);
  const nn::Array y_train = load(kDir + "train-labels-idx1-ubyte.gz", false, 512);
  const nn::Array x_test = load(kDir + "t10k-images-idx3-ubyte.gz", true, 256);
  const nn::Array y_test = load(kDir + "t10k-labels-idx1-ubyte.gz", false, 256);
  ASSERT_EQ(x_train.dims(), (std::vector<int64_t>{512, 28, 28, 1}));
  ASSERT_EQ(y_train.dims(), (std::vector<int64_t>{512}));

  dlrt::Context ctx = nn_test::cpu_context();
  nn::Sequential model(ctx);
  for (const nn::LayerRef& l : guide_layers()) model.add(l);
  nn::CompileConfig cfg;
  cfg.seed = 42;
  model.compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  nn::FitOptions fit = nn_test::quiet(2, 64);
  fit.validation_x = &x_test;
  fit.validation_y = &y_test;
  const nn::History h = model.fit(x_train, y_train, fit);
  EXPECT_EQ(h.epoch, (std::vector<int64_t>{0, 1}));
  for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy"})
    EXPECT_EQ(h.history.at(key).size(), 2u) << key;
  EXPECT_LT(h.history.at("loss")[1], h.history.at("loss")[0]);  // it learns
  EXPECT_GT(h.last("val_accuracy"), 0.3);                       // chance is 0.1
  EXPECT_THROW(h.last("precision"), dlrt::Error);               // never logged: NOT_FOUND

  const nn::Logs test = model.evaluate(x_test, y_test, 256);
  ASSERT_EQ(test.size(), 2u);
  EXPECT_EQ(test[0].first, "loss");
  EXPECT_EQ(test[1].first, "accuracy");
  EXPECT_NEAR(test[1].second, h.last("val_accuracy"), 1e-6);  // the same weights, the same set

  const nn::Array logits = model.predict(x_test.head(8));
  EXPECT_EQ(logits.dims(), (std::vector<int64_t>{8, 10}));
  const std::string weights = ::testing::TempDir() + "nn_guide.safetensors";
  const std::string onnx = ::testing::TempDir() + "nn_guide.onnx";
  model.save_weights(weights);
#if DLRT_TEST_HAS_ONNX
  model.save_onnx(onnx);
  std::FILE* f = std::fopen(onnx.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
#else
  // A build without ONNX (the Windows cross-build): save_onnx refuses, saying so.
  EXPECT_THROW(model.save_onnx(onnx), dlrt::Error);
#endif

  nn::Sequential again(ctx);
  for (const nn::LayerRef& l : guide_layers()) again.add(l);
  again.compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  again.load_weights(weights);
  EXPECT_EQ(again.epoch(), 2);
  EXPECT_EQ(again.predict(x_test.head(8)).values<float>(), logits.values<float>());
  fit.initial_epoch = again.epoch();
  fit.epochs = 3;
  const nn::History more = again.fit(x_train, y_train, fit);
  EXPECT_EQ(more.epoch, (std::vector<int64_t>{2}));
  EXPECT_EQ(again.epoch(), 3);
  std::remove(weights.c_str());
  std::remove(onnx.c_str());
}

// Keras' Reshape: shapes (one -1 inferred), the elements unchanged in row-major order, and
// the refusals the guide names.
TEST(NnGuide, ReshapeLayer) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Sequential model(ctx, {nn::Input({2, 6}), nn::Reshape({3, -1})});
  model.compile();
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const nn::Array y = model.predict(nn::Array::of<float>({2, 2, 6}, v));
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(y.values<float>(), v);
  EXPECT_THROW(nn::Reshape({-1, -1}), dlrt::Error);  // two unknown dims
  EXPECT_THROW(nn::Reshape({0, 4}), dlrt::Error);    // a dim below 1
  EXPECT_THROW(nn::Reshape({}), dlrt::Error);        // empty target
  nn::Sequential bad(ctx, {nn::Input({2, 6}), nn::Reshape({5, 2})});
  EXPECT_THROW(bad.compile(), dlrt::Error);  // 12 elements cannot become 10
}
