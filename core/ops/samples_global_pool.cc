// core/ops/samples_global_pool.cc: samples of the global pools and their backward ops
// (infer_global_pool.cc): batch 1 to 3, both data formats, keepdims both ways, odd sizes, a
// 1x1 image, channel counts that are not multiples of 8, ties for the max, and a mean over
// 2000 cells.
#include "samples.hpp"

namespace dlrt::ops::samples {

SampleFn global_pool(GlobalPoolPass pass) {
  struct Geometry {
    const char* format;
    int64_t n, h, w, c;
    bool keepdims;
  };
  static const Geometry kGeometries[] = {
      {"NHWC", 1, 5, 7, 3, false},  {"NHWC", 2, 4, 4, 10, false}, {"NCHW", 2, 5, 5, 3, false},
      {"NHWC", 1, 1, 1, 9, true},   {"NCHW", 3, 7, 5, 2, true},   {"NHWC", 2, 3, 6, 5, true},
      {"NCHW", 1, 6, 3, 13, false},
  };
  return [pass](const OpDef&) {
    std::vector<Sample> out;
    const Values u = uniform(-2, 2);
    auto pooled = [](const Geometry& g) {
      if (!g.keepdims) return Dims{g.n, g.c};
      return image_dims(g.format, g.n, 1, 1, g.c);
    };
    for (const Geometry& g : kGeometries) {
      const Dims x = image_dims(g.format, g.n, g.h, g.w, g.c);
      AttrMap attrs{{"data_format", g.format}, {"keepdims", g.keepdims}};
      switch (pass) {
        case GlobalPoolPass::kAvg:
          out.push_back({{f32_in("x", x, u)}, attrs});
          break;
        case GlobalPoolPass::kMax:
          out.push_back({{f32_in("x", x, distinct(-3, 3))}, attrs});
          break;
        case GlobalPoolPass::kAvgBackward:
          attrs.emplace("input_shape", Ints(x.begin(), x.end()));
          out.push_back({{f32_in("dy", pooled(g), u)}, attrs});
          break;
        case GlobalPoolPass::kMaxBackward:
          out.push_back({{f32_in("x", x, distinct(-3, 3)), f32_in("dy", pooled(g), u)}, attrs});
          break;
      }
    }
    // Ties: the gradient goes to the first maximum, rows first (as max_pool2d_backward).
    if (pass == GlobalPoolPass::kMaxBackward || pass == GlobalPoolPass::kMax)
      out.push_back({pass == GlobalPoolPass::kMax
                         ? std::vector<SampleInput>{f32_in("x", {2, 3, 4, 3}, integers(0, 2))}
                         : std::vector<SampleInput>{f32_in("x", {2, 3, 4, 3}, integers(0, 2)),
                                                    f32_in("dy", {2, 3}, u)},
                     {},
                     true,
                     "ties"});
    // A mean over many cells (accumulation order matters at 1e-4).
    if (pass == GlobalPoolPass::kAvg)
      out.push_back({{f32_in("x", {1, 40, 50, 3}, uniform(0, 10))}, {}, true, "2000 cells"});
    return out;
  };
}

}  // namespace dlrt::ops::samples
