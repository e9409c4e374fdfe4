// core/ops/samples_conv_transpose.cc: samples of conv2d_transpose (infer_conv_transpose.cc).
// Both data formats, strides 1 and 2 (and mixed), VALID, SAME and EXPLICIT, dilation, odd and
// even kernels (SAME's asymmetric pads and the even-kernel crop), output_padding none, 0 and
// 1, a kernel smaller than the stride (VALID's zero tail), batch 1 and 2, channel counts that
// are not multiples of 8. The schema infers y; a sample gives x and w only.
#include "samples.hpp"

namespace dlrt::ops::samples {

std::vector<Sample> conv_transpose(const OpDef&) {
  struct Geometry {
    const char* format;
    int64_t n, h, w, ci, co, kh, kw, sh, sw, dh, dw;
    const char* padding;
    Ints output_padding;  // {} = none (Keras' None)
    Ints pads = {0, 0, 0, 0};
  };
  static const Geometry kGeometries[] = {
      {"NHWC", 1, 4, 5, 3, 2, 3, 3, 1, 1, 1, 1, "VALID", {}},
      {"NHWC", 2, 4, 3, 3, 5, 3, 3, 2, 2, 1, 1, "SAME", {}},  // H*s: 8x6
      {"NCHW", 2, 3, 4, 2, 3, 3, 2, 2, 2, 1, 1, "VALID", {}},
      {"NCHW", 1, 4, 4, 3, 4, 4, 4, 2, 2, 1, 1, "SAME", {}},      // even kernel: pads (1,1)
      {"NHWC", 1, 3, 4, 2, 3, 3, 3, 2, 2, 1, 1, "SAME", {1, 0}},  // (H-1)*s + k%2 + op
      {"NHWC", 1, 4, 4, 3, 2, 2, 2, 2, 2, 1, 1, "SAME", {0, 1}},  // even kernel, op 0: cropped
      {"NCHW", 2, 3, 3, 2, 3, 3, 3, 2, 2, 1, 1, "VALID", {1, 1}},
      {"NHWC", 1, 5, 4, 2, 3, 3, 3, 1, 1, 2, 2, "SAME", {}},   // dilation 2
      {"NCHW", 1, 4, 5, 3, 2, 2, 3, 1, 2, 2, 1, "VALID", {}},  // dilation (2,1), stride (1,2)
      {"NHWC", 1, 3, 3, 2, 2, 1, 1, 3, 3, 1, 1, "VALID", {}},  // k < s: zero rows at the end
      {"NHWC", 2, 4, 3, 9, 10, 1, 1, 1, 1, 1, 1, "SAME", {}},  // 1x1, Ci 9, Co 10
      {"NHWC", 1, 3, 4, 2, 3, 3, 3, 2, 1, 1, 1, "EXPLICIT", {1, 0}, {1, 0, 1, 2}},  // ONNX
      {"NCHW", 2, 4, 3, 3, 2, 3, 2, 2, 2, 1, 1, "EXPLICIT", {}, {0, 1, 2, 0}},
  };
  std::vector<Sample> out;
  const Values u = uniform(-1, 1);
  for (const Geometry& g : kGeometries) {
    AttrMap attrs{{"strides", Ints{g.sh, g.sw}},
                  {"padding", g.padding},
                  {"dilations", Ints{g.dh, g.dw}},
                  {"data_format", g.format}};
    if (!g.output_padding.empty()) attrs.emplace("output_padding", g.output_padding);
    if (std::string(g.padding) == "EXPLICIT") attrs.emplace("pads", g.pads);
    out.push_back({{f32_in("x", image_dims(g.format, g.n, g.h, g.w, g.ci), u),
                    f32_in("w", {g.kh, g.kw, g.co, g.ci}, u)},
                   attrs});
  }
  out.push_back(
      {{f32_in("x", {1, 3, 3, 4}, u), f32_in("w", {3, 3, 2, 4}, u)}, {}, true, "all defaults"});
  return out;
}

}  // namespace dlrt::ops::samples
