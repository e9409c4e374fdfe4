// core/ops/samples_grid_sample.cc: samples of grid_sample and grid_sample_grad
// (infer_grid_sample.cc): every mode x padding_mode x align_corners on four geometries (both
// data formats, batch 1 and 2, up- and down-sampling, an image one row high and one two
// columns wide, where the reflection and bicubic taps run off both ends), the grid uniform in
// [-1.3, 1.3) so some points lie outside the image; and once more with grid values that are
// integers in [-2, 2], which put nearest's coordinates exactly on .5 (its half-to-even ties)
// and points on the image's edges and beyond.
#include "samples.hpp"

namespace dlrt::ops::samples {

SampleFn grid_sample(bool grad) {
  struct Geometry {
    const char* format;
    int64_t n, h, w, c, oh, ow;
  };
  static const Geometry kGeometries[] = {
      {"NHWC", 1, 3, 4, 2, 5, 3},
      {"NCHW", 2, 4, 5, 3, 3, 4},
      {"NHWC", 2, 1, 6, 3, 2, 2},  // one row: L = 1 along H
      {"NCHW", 1, 5, 2, 1, 4, 1},
  };
  static const Geometry kTies = {"NHWC", 2, 4, 6, 2, 3, 5};  // even H and W: .5 ties
  return [grad](const OpDef&) {
    std::vector<Sample> out;
    auto add = [&](const Geometry& g, const AttrMap& attrs, Values grid) {
      const Dims x = image_dims(g.format, g.n, g.h, g.w, g.c);
      const Dims gd = {g.n, g.oh, g.ow, 2};
      const Values u = uniform(-2, 2);
      if (!grad) {
        out.push_back({{f32_in("x", x, u), f32_in("grid", gd, grid)}, attrs});
      } else {
        const Dims y = image_dims(g.format, g.n, g.oh, g.ow, g.c);
        out.push_back({{f32_in("dy", y, u), f32_in("x", x, u), f32_in("grid", gd, grid)}, attrs});
      }
    };
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
      for (const char* pad : {"zeros", "border", "reflection"})
        for (bool align : {false, true}) {
          auto attrs = [&](const char* format) {
            return AttrMap{{"data_format", format},
                           {"mode", mode},
                           {"padding_mode", pad},
                           {"align_corners", align}};
          };
          for (const Geometry& g : kGeometries) add(g, attrs(g.format), uniform(-1.3, 1.3));
          add(kTies, attrs(kTies.format), integers(-2, 2));
        }
    return out;
  };
}

}  // namespace dlrt::ops::samples
