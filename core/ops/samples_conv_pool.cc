// core/ops/samples_conv_pool.cc: samples of conv2d, conv2d_bias_act, max/avg_pool2d and their
// backward ops (samples.hpp). Geometries cover batch 1 and 2, odd and even spatial sizes,
// channels that are not a multiple of 8, SAME, VALID and EXPLICIT, stride 2 and mixed strides,
// dilation, even kernels under SAME (asymmetric padding), 1x1 kernels, NCHW as well as NHWC;
// grouped convolutions (groups 2 and 3) and depthwise ones (groups = Ci, Co = Ci * multiplier
// with multipliers 1, 2 and 3) in both formats, with strides, dilation, SAME and EXPLICIT.
#include <iterator>
#include <vector>

#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct ConvGeom {
  const char* format;
  int64_t n, h, w, ci, co, kh, kw, sh, sw, dh, dw;
  const char* padding;
  Ints pads = {0, 0, 0, 0};  // with EXPLICIT: (h_before, w_before, h_after, w_after)
  int64_t groups = 1;        // w is (KH,KW,Ci/groups,Co)
  PadPair ph() const {
    return window_padding(*parse_padding(padding), h, kh, sh, dh, {pads[0], pads[2]});
  }
  PadPair pw() const {
    return window_padding(*parse_padding(padding), w, kw, sw, dw, {pads[1], pads[3]});
  }
  int64_t oh() const { return padded_output_size(h, ph(), kh, sh, dh); }
  int64_t ow() const { return padded_output_size(w, pw(), kw, sw, dw); }
  Dims x() const { return image_dims(format, n, h, w, ci); }
  Dims y() const { return image_dims(format, n, oh(), ow(), co); }
  Dims filter() const { return {kh, kw, ci / groups, co}; }
  AttrMap attrs() const {
    AttrMap a{{"strides", Ints{sh, sw}},
              {"padding", padding},
              {"dilations", Ints{dh, dw}},
              {"data_format", format}};
    if (std::string(padding) == "EXPLICIT") a.emplace("pads", pads);
    if (groups != 1) a.emplace("groups", groups);
    return a;
  }
};

const ConvGeom kConv[] = {
    {"NHWC", 1, 5, 7, 3, 5, 3, 3, 1, 1, 1, 1, "VALID"},
    {"NHWC", 2, 6, 5, 3, 4, 3, 2, 2, 2, 1, 1, "SAME"},
    {"NHWC", 1, 9, 8, 4, 6, 3, 3, 1, 1, 2, 2, "SAME"},  // dilation 2
    {"NCHW", 2, 7, 6, 3, 5, 3, 3, 2, 1, 1, 1, "SAME"},
    {"NHWC", 1, 8, 8, 9, 10, 1, 1, 1, 1, 1, 1, "VALID"},  // 1x1, Ci 9, Co 10
    {"NCHW", 1, 9, 9, 2, 3, 3, 3, 1, 2, 2, 1, "VALID"},   // dilation (2,1), stride (1,2)
    {"NHWC", 2, 7, 7, 2, 3, 5, 5, 2, 2, 1, 1, "VALID"},
    {"NCHW", 1, 5, 5, 3, 4, 2, 2, 2, 2, 1, 1, "SAME"},  // even kernel: asymmetric padding
    {"NHWC", 1, 6, 5, 3, 4, 3, 3, 1, 2, 1, 1, "EXPLICIT", {2, 0, 1, 3}},  // ONNX-style pads
    {"NCHW", 2, 5, 6, 2, 3, 3, 2, 2, 1, 1, 2, "EXPLICIT", {0, 1, 1, 0}},
};
constexpr int kConvGeoms = sizeof(kConv) / sizeof(kConv[0]);

// Grouped and depthwise convolutions (groups > 1).
const ConvGeom kGroupedConv[] = {
    {"NHWC", 2, 6, 7, 4, 6, 3, 3, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, 2},
    {"NCHW", 1, 7, 6, 6, 9, 3, 2, 2, 1, 1, 1, "VALID", {0, 0, 0, 0}, 3},
    {"NHWC", 2, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1, "SAME", {0, 0, 0, 0}, 3},   // depthwise, stride 2
    {"NCHW", 1, 9, 8, 4, 8, 3, 3, 1, 1, 2, 2, "SAME", {0, 0, 0, 0}, 4},   // depthwise x2, dilated
    {"NHWC", 1, 8, 9, 2, 6, 3, 3, 1, 1, 1, 2, "VALID", {0, 0, 0, 0}, 2},  // depthwise x3
    {"NCHW", 2, 5, 6, 5, 5, 2, 2, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, 5},   // even kernel
    {"NHWC", 1, 6, 5, 4, 4, 3, 3, 2, 1, 1, 1, "EXPLICIT", {1, 0, 2, 1}, 2},
    // 3x3 stride 1 NHWC with 32 channels: the shape the cpu plugin's Winograd and im2col paths
    // take for groups = 1, which must not take a grouped conv.
    {"NHWC", 1, 8, 8, 32, 32, 3, 3, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, 2},
};

struct PoolGeom {
  const char* format;
  int64_t n, h, w, c, kh, kw, sh, sw;
  const char* padding;
  bool defaults;  // leave every attribute to its default (ksize 2, strides 2, VALID, NHWC)
  Ints pads = {0, 0, 0, 0};
  int64_t out(int64_t in, int64_t k, int64_t s, int64_t before, int64_t after) const {
    return padded_output_size(
        in, window_padding(*parse_padding(padding), in, k, s, 1, {before, after}), k, s, 1);
  }
  Dims x() const { return image_dims(format, n, h, w, c); }
  Dims y() const {
    return image_dims(format, n, out(h, kh, sh, pads[0], pads[2]), out(w, kw, sw, pads[1], pads[3]),
                      c);
  }
  AttrMap attrs() const {
    if (defaults) return {};
    AttrMap a{{"ksize", Ints{kh, kw}},
              {"strides", Ints{sh, sw}},
              {"padding", padding},
              {"data_format", format}};
    if (std::string(padding) == "EXPLICIT") a.emplace("pads", pads);
    return a;
  }
};

const PoolGeom kPool[] = {
    {"NHWC", 1, 6, 6, 3, 2, 2, 2, 2, "VALID", true},
    {"NHWC", 2, 7, 5, 3, 3, 3, 2, 2, "SAME", false},
    {"NCHW", 1, 3, 7, 7, 3, 3, 1, 1, "SAME", false},  // overlapping windows
    {"NHWC", 1, 5, 9, 10, 3, 2, 1, 2, "VALID", false},
    {"NCHW", 2, 5, 7, 4, 2, 2, 2, 2, "SAME", false},  // odd input: a padded edge
    {"NHWC", 1, 1, 3, 2, 2, 2, 2, 2, "SAME", false},  // 1-high image, window mostly padding
    {"NHWC", 1, 5, 6, 3, 3, 3, 2, 1, "EXPLICIT", false, {1, 2, 2, 0}},
};

}  // namespace

SampleFn conv(ConvPass pass) {
  return [pass](const OpDef&) {
    std::vector<Sample> out;
    const Values u = uniform(-1, 1);
    if (pass == ConvPass::kBiasAct) {
      // Every activation, each on two geometries (so NCHW, SAME, stride 2 and dilation all
      // meet a non-trivial activation), and on one with explicit pads; then one with nothing
      // but the defaults.
      const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
      for (int a = 0; a < 4; ++a)
        for (int k : {a, a + 4, 8 + a % (kConvGeoms - 8)}) {
          const ConvGeom& g = kConv[k];
          AttrMap attrs = g.attrs();
          attrs.emplace("activation", acts[a]);
          out.push_back(
              {{f32_in("x", g.x(), u), f32_in("w", g.filter(), u), f32_in("b", {g.co}, u)}, attrs});
        }
      // Each grouped geometry with one of the activations in turn.
      int a = 0;
      for (const ConvGeom& g : kGroupedConv) {
        AttrMap attrs = g.attrs();
        attrs.emplace("activation", acts[a++ % 4]);
        out.push_back(
            {{f32_in("x", g.x(), u), f32_in("w", g.filter(), u), f32_in("b", {g.co}, u)}, attrs});
      }
      out.push_back(
          {{f32_in("x", {1, 4, 4, 3}, u), f32_in("w", {2, 2, 3, 5}, u), f32_in("b", {5}, u)},
           {},
           true,
           "all defaults"});
      return out;
    }
    std::vector<ConvGeom> geoms(std::begin(kConv), std::end(kConv));
    geoms.insert(geoms.end(), std::begin(kGroupedConv), std::end(kGroupedConv));
    for (const ConvGeom& g : geoms) {
      AttrMap attrs = g.attrs();
      switch (pass) {
        case ConvPass::kForward:
          out.push_back({{f32_in("x", g.x(), u), f32_in("w", g.filter(), u)}, attrs});
          break;
        case ConvPass::kBackwardData:
          attrs.emplace("input_shape", g.x());
          out.push_back({{f32_in("dy", g.y(), u), f32_in("w", g.filter(), u)}, attrs});
          break;
        case ConvPass::kBackwardDataAdd:
          attrs.emplace("input_shape", g.x());
          out.push_back({{f32_in("dy", g.y(), u), f32_in("w", g.filter(), u),
                          f32_in("addend", g.x(), u)},
                         attrs});
          break;
        case ConvPass::kBackwardBoth:
          out.push_back({{f32_in("dy", g.y(), u), f32_in("x", g.x(), u), f32_in("w", g.filter(), u)},
                         attrs});
          break;
        case ConvPass::kBackwardFilter:
          attrs.emplace("filter_shape", g.filter());
          out.push_back({{f32_in("x", g.x(), u), f32_in("dy", g.y(), u)}, attrs});
          break;
        case ConvPass::kBiasAct:
          break;
      }
    }
    return out;
  };
}

SampleFn pool(PoolPass pass) {
  return [pass](const OpDef&) {
    std::vector<Sample> out;
    const Values u = uniform(-1, 1);
    for (const PoolGeom& g : kPool) {
      AttrMap attrs = g.attrs();
      switch (pass) {
        // Distinct values: the first max of each window is the only max.
        case PoolPass::kMax:
          out.push_back({{f32_in("x", g.x(), distinct(-3, 3))}, attrs});
          break;
        case PoolPass::kAvg:
          out.push_back({{f32_in("x", g.x(), u)}, attrs});
          break;
        case PoolPass::kMaxBackward:
          out.push_back({{f32_in("x", g.x(), distinct(-3, 3)), f32_in("dy", g.y(), u)}, attrs});
          break;
        case PoolPass::kAvgBackward:
          attrs.emplace("input_shape", g.x());
          out.push_back({{f32_in("dy", g.y(), u)}, attrs});
          break;
      }
    }
    return out;
  };
}

}  // namespace dlrt::ops::samples
