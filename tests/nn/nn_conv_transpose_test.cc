// nn_conv_transpose_test.cc: nn::Conv2DTranspose on the cpu plugin — its output shapes are
// Keras' (conv_utils.deconv_output_length) and the op's (a compiled model predicts that
// shape), its parameters are Keras' kernel (KH,KW,filters,Ci) and bias, bad options are
// refused, and a small convolutional autoencoder (Conv2D stride 2 down, Conv2DTranspose
// stride 2 up, mean squared error) learns to reconstruct a few hundred Fashion-MNIST images.
#include <dlrt/idx.hpp>
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;

nn::Conv2DTransposeOptions opts(nn::Size2 strides, const char* padding,
                                std::optional<nn::Size2> output_padding = std::nullopt,
                                nn::Size2 dilation = {1, 1}) {
  nn::Conv2DTransposeOptions o;
  o.strides = strides;
  o.padding = padding;
  o.output_padding = output_padding;
  o.dilation_rate = dilation;
  return o;
}

// keras.layers.Conv2DTranspose(filters, kernel, strides, padding, output_padding,
// dilation_rate).compute_output_shape((None, H, W, C)), worked out with Keras'
// deconv_output_length (k the dilated kernel):
//   None: valid H*s + max(k - s, 0), same H*s;  op: (H-1)*s + k - 2*pad + op, pad k//2 | 0.
TEST(NnConvTranspose, OutputShapesAreKeras) {
  struct Case {
    nn::Shape in;
    int64_t filters;
    nn::Size2 kernel;
    nn::Conv2DTransposeOptions o;
    nn::Shape keras;
  };
  const std::vector<Case> cases = {
      {{7, 7, 4}, 8, {3, 3}, opts({1, 1}, "valid"), {9, 9, 8}},
      {{7, 7, 4}, 8, {3, 3}, opts({2, 2}, "valid"), {15, 15, 8}},
      {{7, 7, 4}, 8, {3, 3}, opts({2, 2}, "same"), {14, 14, 8}},
      {{7, 5, 4}, 2, {4, 4}, opts({2, 2}, "valid"), {16, 12, 2}},
      {{7, 7, 4}, 1, {3, 3}, opts({2, 2}, "same", nn::Size2{1, 0}), {14, 13, 1}},
      {{7, 7, 4}, 1, {3, 3}, opts({2, 2}, "valid", nn::Size2{1, 1}), {16, 16, 1}},
      {{7, 7, 4}, 1, {2, 2}, opts({2, 2}, "same", nn::Size2{0, 0}), {12, 12, 1}},
      {{4, 4, 2}, 3, {1, 1}, opts({3, 3}, "valid"), {12, 12, 3}},
      {{5, 6, 2}, 3, {3, 3}, opts({1, 1}, "valid", std::nullopt, {2, 2}), {9, 10, 3}},
      {{5, 6, 2}, 3, {3, 3}, opts({1, 1}, "same", std::nullopt, {2, 1}), {5, 6, 3}},
      {{3, 4, 2}, 3, {5, 3}, opts({3, 2}, "same", nn::Size2{2, 1}), {6 + 1 + 2, 6 + 1 + 1, 3}},
  };
  dlrt::Context ctx = cpu_context();
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(::testing::Message() << "case " << i);
    nn::Conv2DTranspose layer(c.filters, c.kernel, c.o);
    EXPECT_EQ(layer.output_shape(c.in), c.keras);
    // The op's schema agrees: the compiled model predicts that shape.
    nn::Sequential m(ctx, {nn::Input(c.in), layer});
    m.compile(nn::SGD(0.1), nn::MeanSquaredError());
    std::vector<int64_t> dims = {2};
    dims.insert(dims.end(), c.in.begin(), c.in.end());
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    const nn::Array y =
        m.predict(nn::Array::of<float>(dims, std::vector<float>(size_t(n), 0.5f)), 2);
    std::vector<int64_t> want = {2};
    want.insert(want.end(), c.keras.begin(), c.keras.end());
    EXPECT_EQ(y.dims(), want);
  }
}

TEST(NnConvTranspose, ParamsAndSummaryAreKeras) {
  dlrt::Context ctx = cpu_context();
  nn::Conv2DTransposeOptions no_bias;
  no_bias.use_bias = false;
  nn::Sequential m(ctx, {nn::Input({7, 7, 4}), nn::Conv2DTranspose(8, {3, 3}, opts({2, 2}, "same")),
                         nn::Conv2DTranspose(1, {2, 2}, no_bias)});
  std::ostringstream out;
  m.summary(out);
  const std::string s = out.str();
  // Keras: 3*3*8*4 + 8 = 296 and 2*2*1*8 = 32.
  EXPECT_NE(s.find("(None, 14, 14, 8)         296"), std::string::npos) << s;
  EXPECT_NE(s.find("(None, 15, 15, 1)         32"), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: 328"), std::string::npos) << s;
  m.compile(nn::SGD(0.1), nn::MeanSquaredError());
  std::map<std::string, std::vector<int64_t>> dims;
  for (const auto& v : m.state()) dims[v.name] = v.dims;
  // The kernel is (KH, KW, filters, Ci), Keras' transpose layout; no bias where use_bias false.
  EXPECT_EQ(dims["conv2d_transpose/kernel"], (std::vector<int64_t>{3, 3, 8, 4}));
  EXPECT_EQ(dims["conv2d_transpose/bias"], (std::vector<int64_t>{8}));
  EXPECT_EQ(dims["conv2d_transpose_1/kernel"], (std::vector<int64_t>{2, 2, 1, 8}));
  EXPECT_EQ(dims.count("conv2d_transpose_1/bias"), 0u);
}

TEST(NnConvTranspose, BadOptionsAreRefused) {
  auto message = [](auto&& make) -> std::string {
    try {
      make();
    } catch (const dlrt::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([] {
              nn::Conv2DTranspose(4, {3, 3}, opts({2, 2}, "same", nn::Size2{2, 0}));
            }).find("output_padding (2, 0) must be >= 0 and smaller than the strides (2, 2)"),
            std::string::npos);
  EXPECT_NE(message([] {
              nn::Conv2DTranspose(4, {3, 3}, opts({1, 1}, "full"));
            }).find("padding 'full'; expected valid or same"),
            std::string::npos);
  EXPECT_NE(message([] {
              nn::Conv2DTranspose(0, {3, 3});
            }).find("filters must be >= 1"),
            std::string::npos);
  EXPECT_NE(message([] {
              nn::Conv2DTranspose(2, {3, 3}).output_shape({4, 4});
            }).find("does not fit; expected (None, H, W, C)"),
            std::string::npos);
  // Same padding, an even kernel, output_padding 0 on a 1-high image: no rows (Keras gives 0).
  EXPECT_NE(message([] {
              nn::Conv2DTranspose(2, {2, 2}, opts({1, 1}, "same", nn::Size2{0, 0}))
                  .output_shape({1, 4, 3});
            }).find("does not fit"),
            std::string::npos);
}

// Fashion-MNIST, 512 training images: (28,28,1) -> Conv2D(16, 3x3, stride 2, same, relu)
// (14,14,16) -> Conv2D(32, 3x3, stride 2, same, relu) (7,7,32) -> Conv2DTranspose(16, 3x3,
// stride 2, same, relu) (14,14,16) -> Conv2DTranspose(1, 3x3, stride 2, same, sigmoid)
// (28,28,1), trained to reproduce its input (pixels / 255) under mean squared error. The loss
// falls well below where it starts, and on 256 test images the reconstruction beats the best
// constant image (each pixel's training mean), which a network that learnt nothing cannot.
TEST(NnConvTranspose, AutoencoderLearnsFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::FILE* probe = std::fopen((dir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << dir;
  std::fclose(probe);
  const int64_t n = 512, nt = 256, pixels = 28 * 28;
  dlrt::IdxArray train(dir + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray test(dir + "t10k-images-idx3-ubyte.gz", nt);
  auto images = [&](const dlrt::IdxArray& a, int64_t rows) {
    const uint8_t* p = a.data<uint8_t>();
    return nn::Array(DLRT_U8, {rows, 28, 28, 1}, std::vector<uint8_t>(p, p + rows * pixels));
  };
  auto targets = [&](const dlrt::IdxArray& a, int64_t rows) {
    const uint8_t* p = a.data<uint8_t>();
    std::vector<float> v(size_t(rows * pixels));
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(p[i]) / 255.0f;
    return nn::Array::of<float>({rows, 28, 28, 1}, v);
  };
  const nn::Array x = images(train, n), y = targets(train, n);
  const nn::Array tx = images(test, nt), ty = targets(test, nt);

  nn::Conv2DOptions down;
  down.strides = {2, 2};
  down.padding = "same";
  down.activation = "relu";
  nn::Conv2DTransposeOptions up = opts({2, 2}, "same");
  up.activation = "relu";
  nn::Conv2DTransposeOptions out = opts({2, 2}, "same");
  out.activation = "sigmoid";
  dlrt::Context ctx = cpu_context();
  nn::Sequential m(
      ctx, {nn::Input({28, 28, 1}), nn::Conv2D(16, {3, 3}, down), nn::Conv2D(32, {3, 3}, down),
            nn::Conv2DTranspose(16, {3, 3}, up), nn::Conv2DTranspose(1, {3, 3}, out)});
  nn::CompileConfig cfg;
  cfg.seed = 7;
  m.compile(nn::Adam(3e-3), nn::MeanSquaredError(), {}, cfg);
  const double before = m.evaluate(tx, ty, 64)[0].second;
  nn::FitOptions f;
  f.epochs = 6;
  f.batch_size = 32;
  f.progress.verbose = 0;
  nn::History h = m.fit(x, y, f);
  const std::vector<double>& loss = h.history["loss"];
  ASSERT_EQ(loss.size(), 6u);
  EXPECT_LT(loss.back(), 0.5 * loss.front());
  const double after = m.evaluate(tx, ty, 64)[0].second;
  EXPECT_LT(after, 0.5 * before);

  // The best constant image: each pixel's mean over the training images.
  const std::vector<float> yv = y.values<float>(), tv = ty.values<float>();
  std::vector<double> mean(size_t(pixels), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < pixels; ++p) mean[size_t(p)] += yv[size_t(i * pixels + p)] / double(n);
  double constant_mse = 0;
  for (int64_t i = 0; i < nt; ++i)
    for (int64_t p = 0; p < pixels; ++p) {
      const double d = tv[size_t(i * pixels + p)] - mean[size_t(p)];
      constant_mse += d * d / double(nt * pixels);
    }
  EXPECT_LT(after, constant_mse) << "loss before " << before << ", per-epoch first " << loss.front()
                                 << " last " << loss.back();
}

}  // namespace
