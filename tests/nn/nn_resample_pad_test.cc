// nn_resample_pad_test.cc: UpSampling2D, ZeroPadding2D and GlobalMaxPooling2D as Keras has
// them: output shapes (symbolic calls and the summary table), values on small inputs against
// hand-computed results (nearest repeats, tf.image.resize's bilinear, zeros around the image,
// the channel max, both data formats), refusals, and a small model using all three (with
// GlobalAveragePooling2D) that learns a few hundred Fashion-MNIST images.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;

// y = layer(x) through a functional model on the cpu device.
std::vector<float> run_layer(dlrt::Context& ctx, const nn::Layer& layer, const nn::Shape& in_shape,
                             const nn::Array& x, std::vector<int64_t>* dims = nullptr) {
  auto in = nn::Input(in_shape);
  nn::Model m(ctx, in, layer(in));
  m.compile(nn::SGD(0.1), nn::MeanSquaredError());
  const nn::Array y = m.predict(x);
  if (dims != nullptr) *dims = y.dims();
  return y.values<float>();
}

TEST(NnResamplePad, SymbolicShapesAsKeras) {
  auto image = nn::Input({5, 6, 3});
  auto first = nn::Input({3, 5, 6});
  EXPECT_EQ(nn::UpSampling2D()(image).shape(), nn::Shape({10, 12, 3}));
  EXPECT_EQ(nn::UpSampling2D({3, 1}, "bilinear")(image).shape(), nn::Shape({15, 6, 3}));
  EXPECT_EQ(nn::UpSampling2D({2, 3}, "nearest", "channels_first")(first).shape(),
            nn::Shape({3, 10, 18}));
  EXPECT_EQ(nn::ZeroPadding2D()(image).shape(), nn::Shape({7, 8, 3}));
  EXPECT_EQ(nn::ZeroPadding2D(2)(image).shape(), nn::Shape({9, 10, 3}));
  EXPECT_EQ(nn::ZeroPadding2D({1, 3})(image).shape(), nn::Shape({7, 12, 3}));
  EXPECT_EQ(nn::ZeroPadding2D({1, 2}, {3, 4})(image).shape(), nn::Shape({8, 13, 3}));
  EXPECT_EQ(nn::ZeroPadding2D({0, 1}, {2, 0}, "channels_first")(first).shape(),
            nn::Shape({3, 6, 8}));
  EXPECT_EQ(nn::GlobalMaxPooling2D()(image).shape(), nn::Shape({3}));
  EXPECT_EQ(nn::GlobalMaxPooling2D(true)(image).shape(), nn::Shape({1, 1, 3}));
  EXPECT_EQ(nn::GlobalMaxPooling2D(false, "channels_first")(first).shape(), nn::Shape({3}));
  EXPECT_EQ(nn::GlobalMaxPooling2D(true, "channels_first")(first).shape(), nn::Shape({3, 1, 1}));
}

TEST(NnResamplePad, SummaryShowsKerasShapes) {
  dlrt::Context ctx(dlrt::ContextOptions().search_default_paths(false));
  nn::Sequential m(ctx, {nn::Input({28, 28, 1}), nn::ZeroPadding2D(), nn::Conv2D(4, {3, 3}),
                         nn::UpSampling2D(), nn::GlobalMaxPooling2D(), nn::Dense(10)});
  std::ostringstream out;
  m.summary(out);
  EXPECT_EQ(out.str(),
            "Model: \"sequential\"\n"
            "_________________________________________________________________\n"
            "Layer (type)                 Output Shape              Param #   \n"
            "=================================================================\n"
            "zero_padding2d (ZeroPadding2 (None, 30, 30, 1)         0         \n"
            "_________________________________________________________________\n"
            "conv2d (Conv2D)              (None, 28, 28, 4)         40        \n"
            "_________________________________________________________________\n"
            "up_sampling2d (UpSampling2D) (None, 56, 56, 4)         0         \n"
            "_________________________________________________________________\n"
            "global_max_pooling2d (Global (None, 4)                 0         \n"
            "_________________________________________________________________\n"
            "dense (Dense)                (None, 10)                50        \n"
            "=================================================================\n"
            "Total params: 90\n"
            "Trainable params: 90\n"
            "Non-trainable params: 0\n"
            "_________________________________________________________________\n");
}

TEST(NnResamplePad, UpSamplingNearestRepeatsRowsAndColumns) {
  dlrt::Context ctx = cpu_context();
  // x (1, 2, 3, 2): value = 10*h + w + 0.5*c
  std::vector<float> xs;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 2; ++c) xs.push_back(10.0f * h + w + 0.5f * c);
  std::vector<int64_t> dims;
  const std::vector<float> y = run_layer(ctx, nn::UpSampling2D({2, 3}), {2, 3, 2},
                                         nn::Array::of<float>({1, 2, 3, 2}, xs), &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 4, 9, 2}));
  ASSERT_EQ(y.size(), 72u);
  for (int h = 0; h < 4; ++h)
    for (int w = 0; w < 9; ++w)
      for (int c = 0; c < 2; ++c)
        EXPECT_EQ(y[size_t((h * 9 + w) * 2 + c)], 10.0f * (h / 2) + (w / 3) + 0.5f * c)
            << h << "," << w << "," << c;
  // channels_first: (1, 2, 2, 3) -> (1, 2, 4, 6), each plane repeated
  const std::vector<float> yf =
      run_layer(ctx, nn::UpSampling2D({2, 2}, "nearest", "channels_first"), {2, 2, 3},
                nn::Array::of<float>({1, 2, 2, 3}, xs), &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 2, 4, 6}));
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 4; ++h)
      for (int w = 0; w < 6; ++w)
        EXPECT_EQ(yf[size_t((c * 4 + h) * 6 + w)], xs[size_t((c * 2 + h / 2) * 3 + w / 2)]);
}

// tf.image.resize([[1, 2], [3, 4]], (4, 4), "bilinear") (half-pixel centres, clamped border).
TEST(NnResamplePad, UpSamplingBilinearIsTfImageResize) {
  dlrt::Context ctx = cpu_context();
  const std::vector<float> y = run_layer(ctx, nn::UpSampling2D({2, 2}, "bilinear"), {2, 2, 1},
                                         nn::Array::of<float>({1, 2, 2, 1}, {1, 2, 3, 4}));
  const std::vector<float> want = {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,
                                   2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f};
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
}

TEST(NnResamplePad, ZeroPaddingPutsZerosAround) {
  dlrt::Context ctx = cpu_context();
  // (1, 2, 2, 1) [[1, 2], [3, 4]] with top 1, bottom 0, left 0, right 2 -> (1, 3, 4, 1)
  std::vector<int64_t> dims;
  const std::vector<float> y = run_layer(ctx, nn::ZeroPadding2D({1, 0}, {0, 2}), {2, 2, 1},
                                         nn::Array::of<float>({1, 2, 2, 1}, {1, 2, 3, 4}), &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 3, 4, 1}));
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  // channels_first (1, 2, 1, 1) with 1 everywhere: each channel a 3x3 with its value in the middle
  const std::vector<float> yf = run_layer(ctx, nn::ZeroPadding2D(1, "channels_first"), {2, 1, 1},
                                          nn::Array::of<float>({1, 2, 1, 1}, {5, 7}), &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 2, 3, 3}));
  EXPECT_EQ(yf, (std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0}));
}

TEST(NnResamplePad, GlobalMaxPoolingIsTheChannelMax) {
  dlrt::Context ctx = cpu_context();
  // (2, 2, 3, 2): value = (h*3 + w) * (c == 0 ? 1 : -1) + 100 n
  std::vector<float> xs;
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w)
        for (int c = 0; c < 2; ++c) xs.push_back(float((h * 3 + w) * (c == 0 ? 1 : -1) + 100 * n));
  std::vector<int64_t> dims;
  const nn::Array x = nn::Array::of<float>({2, 2, 3, 2}, xs);
  EXPECT_EQ(run_layer(ctx, nn::GlobalMaxPooling2D(), {2, 3, 2}, x, &dims),
            (std::vector<float>{5, 0, 105, 100}));
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(run_layer(ctx, nn::GlobalMaxPooling2D(true), {2, 3, 2}, x, &dims),
            (std::vector<float>{5, 0, 105, 100}));
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 1, 1, 2}));
  // The same numbers read as (2, 2, 2, 3) channels_first: planes of 6 values.
  std::vector<float> want;
  for (int p = 0; p < 4; ++p) {
    float m = xs[size_t(p * 6)];
    for (int k = 1; k < 6; ++k) m = std::max(m, xs[size_t(p * 6 + k)]);
    want.push_back(m);
  }
  EXPECT_EQ(run_layer(ctx, nn::GlobalMaxPooling2D(false, "channels_first"), {2, 2, 3},
                      nn::Array::of<float>({2, 2, 2, 3}, xs)),
            want);
}

TEST(NnResamplePad, RefusesBadSettingsAndInputs) {
  EXPECT_THROW(nn::UpSampling2D({0, 2}), dlrt::Error);
  EXPECT_THROW(nn::UpSampling2D({2, 2}, "bicubic"), dlrt::Error);
  EXPECT_THROW(nn::UpSampling2D({2, 2}, "nearest", "NHWC"), dlrt::Error);
  EXPECT_THROW(nn::ZeroPadding2D(-1), dlrt::Error);
  EXPECT_THROW(nn::ZeroPadding2D({1, 2}, {0, -3}), dlrt::Error);
  EXPECT_THROW(nn::GlobalMaxPooling2D(false, "nhwc"), dlrt::Error);
  auto flat = nn::Input({7});
  for (const nn::Layer* l : std::vector<const nn::Layer*>{
           new nn::UpSampling2D(), new nn::ZeroPadding2D(), new nn::GlobalMaxPooling2D()}) {
    try {
      (*l)(flat);
      ADD_FAILURE() << l->type() << ": a flat input was accepted";
    } catch (const dlrt::Error& e) {
      EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("(None, 7)"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("(None, H, W, C)"), std::string::npos) << e.what();
    }
    delete l;
  }
}

// 400 Fashion-MNIST images: ZeroPadding2D -> Conv2D -> MaxPool2D -> UpSampling2D (bilinear)
// -> Conv2D -> two heads, GlobalMaxPooling2D and GlobalAveragePooling2D, concatenated ->
// Dense(10). Every new layer lies on the gradient path; the loss falls.
TEST(NnResamplePad, SmallModelLearnsFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::FILE* probe = std::fopen((dir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << dir;
  std::fclose(probe);
  const int64_t n = 400;
  dlrt::IdxArray images(dir + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray labels(dir + "train-labels-idx1-ubyte.gz", n);
  const uint8_t* px = images.data<uint8_t>();
  nn::Array x(DLRT_U8, {n, 28, 28, 1}, std::vector<uint8_t>(px, px + n * 28 * 28));
  const uint8_t* lb = labels.data<uint8_t>();
  nn::Array y(DLRT_U8, {n}, std::vector<uint8_t>(lb, lb + n));

  dlrt::Context ctx = cpu_context();
  auto in = nn::Input({28, 28, 1});
  nn::SymbolicTensor t = nn::ZeroPadding2D(1)(in);  // 30x30x1
  t = nn::Conv2D(8, {3, 3}, "relu")(t);             // 28x28x8
  t = nn::MaxPool2D({4, 4})(t);                     // 7x7x8
  t = nn::UpSampling2D({2, 2}, "bilinear")(t);      // 14x14x8
  t = nn::Conv2D(16, {3, 3}, "relu")(t);            // 12x12x16
  t = nn::Concatenate()({nn::GlobalMaxPooling2D()(t), nn::GlobalAveragePooling2D()(t)});
  nn::Model m(ctx, in, nn::Dense(10)(t));
  nn::CompileConfig cfg;
  cfg.seed = 11;
  m.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  nn::FitOptions f;
  f.epochs = 10;  // 10 steps an epoch; measured: loss 2.31 -> 1.08, accuracy 0.64
  f.batch_size = 40;
  f.shuffle = true;
  f.progress.verbose = 0;
  const nn::History h = m.fit(x, y, f);
  const std::vector<double>& loss = h.history.at("loss");
  EXPECT_LT(loss.back(), 0.7 * loss.front());
  EXPECT_GE(h.last("accuracy"), 0.5);
}

}  // namespace
