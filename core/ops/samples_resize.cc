// core/ops/samples_resize.cc: samples of resize and resize_grad (infer_resize.cc): up- and
// down-sampling, integer and non-integer ratios, from and to a single row or column, both
// data formats, batch 1 and 2, channel counts that are not multiples of 8, and every mode:
// bilinear and nearest with each coordinate_transformation, nearest with each nearest_mode.
// Two geometries put source coordinates exactly on .5 (half_pixel 4 -> 2 and 2 -> 1,
// asymmetric 3 -> 2, align_corners 4 -> 3), where the nearest modes differ.
#include "samples.hpp"

namespace dlrt::ops::samples {

SampleFn resize(bool grad) {
  struct Geometry {
    const char* format;
    int64_t n, h, w, c, oh, ow;
  };
  static const Geometry kGeometries[] = {
      {"NHWC", 1, 3, 4, 2, 6, 8},  // x2 up
      {"NCHW", 2, 4, 5, 3, 7, 3},  // 4 -> 7 up, 5 -> 3 down
      {"NHWC", 2, 6, 6, 5, 3, 2},  // x1/2, x1/3 down
      {"NHWC", 1, 1, 1, 3, 4, 5},  // from one cell
      {"NCHW", 1, 7, 5, 9, 1, 1},  // to one cell (align_corners' out = 1)
      {"NHWC", 1, 4, 2, 2, 2, 1},  // ties: half_pixel 4 -> 2, 2 -> 1
      {"NCHW", 2, 3, 4, 3, 2, 3},  // ties: asymmetric 3 -> 2, align_corners 4 -> 3
  };
  struct Mode {
    const char* mode;
    const char* coord;
    const char* nearest;
  };
  static const Mode kModes[] = {
      {"bilinear", "half_pixel", "round_prefer_floor"},
      {"bilinear", "align_corners", "round_prefer_floor"},
      {"bilinear", "asymmetric", "round_prefer_floor"},
      {"nearest", "half_pixel", "round_prefer_floor"},
      {"nearest", "half_pixel", "round_prefer_ceil"},
      {"nearest", "half_pixel", "floor"},
      {"nearest", "half_pixel", "ceil"},
      {"nearest", "align_corners", "round_prefer_floor"},
      {"nearest", "align_corners", "round_prefer_ceil"},
      {"nearest", "align_corners", "floor"},
      {"nearest", "align_corners", "ceil"},
      {"nearest", "asymmetric", "round_prefer_floor"},
      {"nearest", "asymmetric", "round_prefer_ceil"},
      {"nearest", "asymmetric", "floor"},
      {"nearest", "asymmetric", "ceil"},
  };
  return [grad](const OpDef&) {
    std::vector<Sample> out;
    const Values u = uniform(-2, 2);
    for (const Geometry& g : kGeometries)
      for (const Mode& m : kModes) {
        const Dims x = image_dims(g.format, g.n, g.h, g.w, g.c);
        AttrMap attrs{{"data_format", g.format},
                      {"mode", m.mode},
                      {"coordinate_transformation", m.coord},
                      {"nearest_mode", m.nearest}};
        if (!grad) {
          attrs.emplace("size", Ints{g.oh, g.ow});
          out.push_back({{f32_in("x", x, u)}, attrs});
        } else {
          attrs.emplace("input_shape", Ints(x.begin(), x.end()));
          out.push_back({{f32_in("dy", image_dims(g.format, g.n, g.oh, g.ow, g.c), u)}, attrs});
        }
      }
    return out;
  };
}

}  // namespace dlrt::ops::samples
