// nn_depthwise_conv_test.cc: nn::DepthwiseConv2D and Conv2D's groups / dilation_rate on the cpu
// plugin — each layer's output equals a per-channel (per-group) convolution computed here by
// hand from the same weights; the summary counts parameters as Keras; a depthwise-separable
// net (DepthwiseConv2D then a 1x1 Conv2D) learns a few hundred Fashion-MNIST images.
#include <dlrt/idx.hpp>
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;

std::vector<float> random_values(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// The geometry of one hand-computed convolution over an NHWC batch, VALID or SAME (TF's
// padding: before = total / 2).
struct Geom {
  int64_t n, h, w, c;  // input
  int64_t kh, kw, sh, sw, dh, dw;
  bool same;
  int64_t oh() const { return same ? (h + sh - 1) / sh : (h - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t ow() const { return same ? (w + sw - 1) / sw : (w - ((kw - 1) * dw + 1)) / sw + 1; }
  int64_t pad_top() const {
    return same ? std::max<int64_t>((oh() - 1) * sh + (kh - 1) * dh + 1 - h, 0) / 2 : 0;
  }
  int64_t pad_left() const {
    return same ? std::max<int64_t>((ow() - 1) * sw + (kw - 1) * dw + 1 - w, 0) / 2 : 0;
  }
};

// y[n,oh,ow,o] = b[o] + sum over i, j and the channels ci of o's input of
// x[n, oh*sh - top + i*dh, ow*sw - left + j*dw, ci] * weight(i, j, ci, o): `inputs_of(o)` gives
// the input channels output o reads, `weight` the tap.
template <typename Inputs, typename Weight>
std::vector<double> by_hand(const Geom& g, const std::vector<float>& x, int64_t co,
                            const std::vector<float>& b, Inputs inputs_of, Weight weight) {
  std::vector<double> y(size_t(g.n * g.oh() * g.ow() * co), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < g.oh(); ++oh)
      for (int64_t ow = 0; ow < g.ow(); ++ow)
        for (int64_t o = 0; o < co; ++o) {
          double acc = b.empty() ? 0.0 : b[size_t(o)];
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t ih = oh * g.sh - g.pad_top() + i * g.dh;
              const int64_t iw = ow * g.sw - g.pad_left() + j * g.dw;
              if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
              for (int64_t ci : inputs_of(o))
                acc +=
                    double(x[size_t(((n * g.h + ih) * g.w + iw) * g.c + ci)]) * weight(i, j, ci, o);
            }
          y[size_t(((n * g.oh() + oh) * g.ow() + ow) * co + o)] = acc;
        }
  return y;
}

const nn::Sequential::NamedValue* find(const std::vector<nn::Sequential::NamedValue>& s,
                                       const std::string& name) {
  for (const auto& v : s)
    if (v.name == name) return &v;
  return nullptr;
}

// Compiles m and sets its layers' parameters ("<layer>/<param>") to random values; returns them.
std::vector<nn::Sequential::NamedValue> randomise(nn::Sequential& m) {
  m.compile(nn::SGD(0.1), nn::MeanSquaredError());
  std::vector<nn::Sequential::NamedValue> s = m.state();
  std::vector<nn::Sequential::NamedValue> set;
  unsigned seed = 11;
  for (auto& v : s) {
    const size_t slash = v.name.find('/');
    if (slash == std::string::npos || v.name.find('/', slash + 1) != std::string::npos ||
        v.name.rfind("optimizer", 0) == 0)
      continue;
    v.values = random_values(v.values.size(), seed++, -1.f, 1.f);
    set.push_back(v);
  }
  m.set_state(set);
  return set;
}

// The summary's row of the layer named `name`.
std::string row_of(const std::string& summary, const std::string& name) {
  std::istringstream in(summary);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + " (", 0) == 0) return line;
  return "";
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

// DepthwiseConv2D: output channel c*M + m is input channel c convolved with
// depthwise_kernel[:, :, c, m] (Keras' kernel layout (KH,KW,C,M)), plus bias[c*M + m]; with
// multipliers 1 and 3, VALID and SAME, strides and dilation.
TEST(NnDepthwiseConv, EqualsAPerChannelConvolutionByHand) {
  dlrt::Context ctx = cpu_context();
  struct Case {
    Geom g;
    int64_t multiplier;
    bool use_bias;
  };
  const Case cases[] = {
      {{2, 5, 6, 3, 3, 3, 1, 1, 1, 1, false}, 1, true},
      {{1, 7, 6, 2, 3, 2, 2, 2, 1, 1, true}, 3, true},
      {{2, 8, 7, 4, 3, 3, 1, 1, 2, 1, true}, 2, false},
  };
  for (const Case& k : cases) {
    const Geom& g = k.g;
    SCOPED_TRACE("c " + std::to_string(g.c) + " multiplier " + std::to_string(k.multiplier));
    nn::DepthwiseConv2DOptions o;
    o.strides = {g.sh, g.sw};
    o.dilation_rate = {g.dh, g.dw};
    o.padding = g.same ? "same" : "valid";
    o.depth_multiplier = k.multiplier;
    o.use_bias = k.use_bias;
    nn::Sequential m(ctx, {nn::Input({g.h, g.w, g.c}), nn::DepthwiseConv2D({g.kh, g.kw}, o)});
    const auto set = randomise(m);
    const auto* kernel = find(set, "depthwise_conv2d/depthwise_kernel");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel->dims, (nn::Shape{g.kh, g.kw, g.c, k.multiplier}));
    const auto* bias = find(set, "depthwise_conv2d/bias");
    EXPECT_EQ(bias != nullptr, k.use_bias);
    const std::vector<float> b = bias != nullptr ? bias->values : std::vector<float>{};

    const std::vector<float> xs = random_values(size_t(g.n * g.h * g.w * g.c), 3, -1.f, 1.f);
    nn::Array x = nn::Array::of<float>({g.n, g.h, g.w, g.c}, xs);
    const int64_t mult = k.multiplier;
    const std::vector<double> want = by_hand(
        g, xs, g.c * mult, b, [&](int64_t o) { return std::vector<int64_t>{o / mult}; },
        [&](int64_t i, int64_t j, int64_t c, int64_t o) {
          return double(kernel->values[size_t(((i * g.kw + j) * g.c + c) * mult + o % mult)]);
        });
    nn::Array y = m.predict(x, g.n);
    EXPECT_EQ(y.dims(), (std::vector<int64_t>{g.n, g.oh(), g.ow(), g.c * mult}));
    expect_near(y.values<float>(), want);
  }
}

// Conv2D with groups (and dilation_rate): output o reads the Ci/groups channels of its group
// o / (filters/groups), kernel (KH,KW,Ci/groups,filters).
TEST(NnDepthwiseConv, Conv2DGroupsEqualsAGroupedConvolutionByHand) {
  dlrt::Context ctx = cpu_context();
  const Geom g{2, 7, 7, 6, 3, 3, 1, 1, 2, 1, true};
  const int64_t groups = 3, filters = 9;
  nn::Conv2DOptions o;
  o.padding = "same";
  o.dilation_rate = {2, 1};
  o.groups = groups;
  nn::Sequential m(ctx, {nn::Input({g.h, g.w, g.c}), nn::Conv2D(filters, {3, 3}, o)});
  const auto set = randomise(m);
  const auto* kernel = find(set, "conv2d/kernel");
  ASSERT_NE(kernel, nullptr);
  const int64_t cig = g.c / groups, cog = filters / groups;
  EXPECT_EQ(kernel->dims, (nn::Shape{3, 3, cig, filters}));
  const std::vector<float> xs = random_values(size_t(g.n * g.h * g.w * g.c), 5, -1.f, 1.f);
  const std::vector<double> want = by_hand(
      g, xs, filters, find(set, "conv2d/bias")->values,
      [&](int64_t o) {
        std::vector<int64_t> in;
        for (int64_t c = 0; c < cig; ++c) in.push_back(o / cog * cig + c);
        return in;
      },
      [&](int64_t i, int64_t j, int64_t c, int64_t o) {
        return double(kernel->values[size_t(((i * 3 + j) * cig + c % cig) * filters + o)]);
      });
  expect_near(m.predict(nn::Array::of<float>({g.n, g.h, g.w, g.c}, xs), g.n).values<float>(), want);
}

TEST(NnDepthwiseConv, SummaryCountsParamsAsKerasAndBadSettingsAreRefused) {
  dlrt::Context ctx = cpu_context();
  nn::Conv2DOptions grouped;
  grouped.groups = 2;
  nn::Sequential m(ctx,
                   {nn::Input({28, 28, 3}), nn::DepthwiseConv2D({3, 3}, {.depth_multiplier = 2}),
                    nn::Conv2D(8, {3, 3}, grouped), nn::Conv2D(4, {1, 1})});
  std::ostringstream out;
  m.summary(out);
  const std::string s = out.str();
  // Keras: 3*3*3*2 + 6 = 60; 3*3*(6/2)*8 + 8 = 224; 8*4 + 4 = 36.
  const std::string depthwise = row_of(s, "depthwise_conv2d");
  EXPECT_NE(depthwise.find("(None, 26, 26, 6) "), std::string::npos) << s;
  EXPECT_NE(depthwise.find(" 60 "), std::string::npos) << s;
  const std::string grouped_row = row_of(s, "conv2d");
  EXPECT_NE(grouped_row.find("(None, 24, 24, 8) "), std::string::npos) << s;
  EXPECT_NE(grouped_row.find(" 224 "), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: 320"), std::string::npos) << s;

  EXPECT_THROW(nn::DepthwiseConv2D({3, 3}, {.depth_multiplier = 0}), dlrt::Error);
  EXPECT_THROW(nn::DepthwiseConv2D({3, 3}, {.padding = "full"}), dlrt::Error);
  // Keras refuses strides > 1 with dilation_rate > 1.
  EXPECT_THROW(nn::DepthwiseConv2D({3, 3}, {.strides = {2, 2}, .dilation_rate = {2, 2}}),
               dlrt::Error);
  nn::Conv2DOptions bad;
  bad.groups = 3;
  EXPECT_THROW(nn::Conv2D(8, {3, 3}, bad), dlrt::Error);  // 8 filters, 3 groups
  nn::Sequential wrong(ctx, {nn::Input({8, 8, 4}), nn::Conv2D(6, {3, 3}, bad)});
  std::ostringstream ignored;
  try {
    wrong.summary(ignored);
    ADD_FAILURE() << "4 channels in 3 groups accepted";
  } catch (const dlrt::Error& e) {
    EXPECT_NE(e.message().find("C a multiple of groups (3)"), std::string::npos) << e.message();
  }
}

// Fashion-MNIST, 300 training images: Conv2D(8) -> DepthwiseConv2D(3x3, relu) -> Conv2D(16,
// 1x1, relu) (a depthwise-separable block) -> MaxPool2D -> Flatten -> Dense(10) learns: the loss
// falls, most training images right.
TEST(NnDepthwiseConv, DepthwiseSeparableNetLearnsFashionMnist) {
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
  nn::Sequential m(
      ctx, {nn::Input({28, 28, 1}), nn::Conv2D(8, {3, 3}, "relu"),
            nn::DepthwiseConv2D({3, 3}, {.activation = "relu"}), nn::Conv2D(16, {1, 1}, "relu"),
            nn::MaxPool2D(), nn::Flatten(), nn::Dense(10)});
  nn::CompileConfig cfg;
  cfg.seed = 3;
  m.compile(nn::Adam(3e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  nn::FitOptions f;
  f.epochs = 4;
  f.batch_size = 30;
  f.progress.verbose = 0;
  nn::History h = m.fit(x, y, f);
  EXPECT_LT(h.history["loss"].back(), 0.7 * h.history["loss"].front());
  EXPECT_GE(h.last("accuracy"), 0.6);
}

}  // namespace
