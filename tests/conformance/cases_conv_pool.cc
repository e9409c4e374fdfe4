// tests/conformance/cases_conv_pool.cc: cases of conv2d, conv2d_bias_act, max/avg_pool2d and
// their backward ops. Geometries cover batch 1 and 2, odd and even spatial sizes, channels
// that are not a multiple of 8, SAME and VALID, stride 2 and mixed strides, dilation, even
// kernels under SAME (asymmetric padding), 1x1 kernels, and NCHW as well as NHWC.
#include "cases_util.hpp"

namespace dlrt::conformance {
namespace {

using detail::f32;
using detail::image;
using detail::window_out;

struct ConvGeom {
  const char* format;
  int64_t n, h, w, ci, co, kh, kw, sh, sw, dh, dw;
  const char* padding;
  int64_t oh() const { return window_out(padding, h, kh, sh, dh); }
  int64_t ow() const { return window_out(padding, w, kw, sw, dw); }
  Dims x() const { return image(format, n, h, w, ci); }
  Dims y() const { return image(format, n, oh(), ow(), co); }
  Dims filter() const { return {kh, kw, ci, co}; }
  std::vector<Attr> attrs() const {
    return {a_ints("strides", {sh, sw}), a_str("padding", padding),
            a_ints("dilations", {dh, dw}), a_str("data_format", format)};
  }
};

const ConvGeom kConv[] = {
    {"NHWC", 1, 5, 7, 3, 5, 3, 3, 1, 1, 1, 1, "VALID"},
    {"NHWC", 2, 6, 5, 3, 4, 3, 2, 2, 2, 1, 1, "SAME"},
    {"NHWC", 1, 9, 8, 4, 6, 3, 3, 1, 1, 2, 2, "SAME"},   // dilation 2
    {"NCHW", 2, 7, 6, 3, 5, 3, 3, 2, 1, 1, 1, "SAME"},
    {"NHWC", 1, 8, 8, 9, 10, 1, 1, 1, 1, 1, 1, "VALID"}, // 1x1, Ci 9, Co 10
    {"NCHW", 1, 9, 9, 2, 3, 3, 3, 1, 2, 2, 1, "VALID"},  // dilation (2,1), stride (1,2)
    {"NHWC", 2, 7, 7, 2, 3, 5, 5, 2, 2, 1, 1, "VALID"},
    {"NCHW", 1, 5, 5, 3, 4, 2, 2, 2, 2, 1, 1, "SAME"},   // even kernel: asymmetric padding
};

struct PoolGeom {
  const char* format;
  int64_t n, h, w, c, kh, kw, sh, sw;
  const char* padding;
  bool defaults;  // leave every attribute to its default (ksize 2, strides 2, VALID, NHWC)
  Dims x() const { return image(format, n, h, w, c); }
  Dims y() const {
    return image(format, n, window_out(padding, h, kh, sh, 1), window_out(padding, w, kw, sw, 1), c);
  }
  std::vector<Attr> attrs() const {
    if (defaults) return {};
    return {a_ints("ksize", {kh, kw}), a_ints("strides", {sh, sw}), a_str("padding", padding),
            a_str("data_format", format)};
  }
};

const PoolGeom kPool[] = {
    {"NHWC", 1, 6, 6, 3, 2, 2, 2, 2, "VALID", true},
    {"NHWC", 2, 7, 5, 3, 3, 3, 2, 2, "SAME", false},
    {"NCHW", 1, 3, 7, 7, 3, 3, 1, 1, "SAME", false},   // overlapping windows
    {"NHWC", 1, 5, 9, 10, 3, 2, 1, 2, "VALID", false},
    {"NCHW", 2, 5, 7, 4, 2, 2, 2, 2, "SAME", false},   // odd input: a padded edge
    {"NHWC", 1, 1, 3, 2, 2, 2, 2, 2, "SAME", false},   // 1-high image, window mostly padding
};

}  // namespace

std::vector<Case> conv_pool_cases() {
  std::vector<Case> cases;
  const Fill u = uniform(-1, 1);
  for (const ConvGeom& g : kConv) {
    cases.push_back({"conv2d", {f32("x", g.x(), u), f32("w", g.filter(), u)}, g.attrs()});

    std::vector<Attr> bd = g.attrs();
    bd.push_back(a_ints("input_shape", g.x()));
    cases.push_back({"conv2d_backward_data", {f32("dy", g.y(), u), f32("w", g.filter(), u)}, bd});

    std::vector<Attr> bf = g.attrs();
    bf.push_back(a_ints("filter_shape", g.filter()));
    cases.push_back({"conv2d_backward_filter", {f32("x", g.x(), u), f32("dy", g.y(), u)}, bf});
  }
  // Every activation of the fused op, each on two geometries (so NCHW, SAME, stride 2 and
  // dilation all meet a non-trivial activation).
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  for (int a = 0; a < 4; ++a)
    for (int k : {a, a + 4}) {
      const ConvGeom& g = kConv[k];
      std::vector<Attr> attrs = g.attrs();
      attrs.push_back(a_str("activation", acts[a]));
      cases.push_back({"conv2d_bias_act",
                       {f32("x", g.x(), u), f32("w", g.filter(), u), f32("b", {g.co}, u)},
                       attrs});
    }
  // The default activation ("none") with nothing but the defaults.
  cases.push_back({"conv2d_bias_act",
                   {f32("x", {1, 4, 4, 3}, u), f32("w", {2, 2, 3, 5}, u), f32("b", {5}, u)},
                   {}, {}, true, "all defaults"});

  for (const PoolGeom& g : kPool) {
    // Distinct values: the first max of each window is the only max.
    cases.push_back({"max_pool2d", {f32("x", g.x(), distinct(-3, 3))}, g.attrs()});
    cases.push_back({"avg_pool2d", {f32("x", g.x(), u)}, g.attrs()});
    cases.push_back(
        {"max_pool2d_backward", {f32("x", g.x(), distinct(-3, 3)), f32("dy", g.y(), u)}, g.attrs()});
    std::vector<Attr> ab = g.attrs();
    ab.push_back(a_ints("input_shape", g.x()));
    cases.push_back({"avg_pool2d_backward", {f32("dy", g.y(), u)}, ab});
  }
  return cases;
}

}  // namespace dlrt::conformance
