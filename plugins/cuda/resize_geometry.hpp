// resize_geometry.hpp: the host-side builder of kernel_math.hpp's ResizeGeom for resize.cu,
// from a resize / resize_grad descriptor the core's op schema built (core/ops/infer_resize.cc).
// A header of its own so kernel_math_test.cc builds the struct with exactly this code.
#pragma once

#include <string>
#include <vector>

#include "kernel_math.hpp"
#include "op_view.hpp"

namespace dlrt::cuda {

// x: the input image's dims as stored (dx for resize_grad), y: the resized image's (dy).
inline math::ResizeGeom resize_geom(const plugin::OpView& op, const std::vector<int64_t>& x,
                                    const std::vector<int64_t>& y) {
  const bool nchw = plugin::is_nchw(op.get_string("data_format"), op.name());
  const plugin::ImageShape xs = plugin::image_shape(x, nchw), ys = plugin::image_shape(y, nchw);
  const std::string& coord = op.get_string("coordinate_transformation");
  const std::string& round = op.get_string("nearest_mode");
  math::ResizeAxis a;
  a.bilinear = op.get_string("mode") == "bilinear";
  a.coord = coord == "half_pixel"      ? math::ResizeCoord::kHalfPixel
            : coord == "align_corners" ? math::ResizeCoord::kAlignCorners
                                       : math::ResizeCoord::kAsymmetric;
  a.round = round == "round_prefer_floor"  ? math::NearestRound::kRoundPreferFloor
            : round == "round_prefer_ceil" ? math::NearestRound::kRoundPreferCeil
            : round == "floor"             ? math::NearestRound::kFloor
                                           : math::NearestRound::kCeil;
  math::ResizeGeom g;
  g.nchw = nchw, g.n = xs.n, g.c = xs.c;
  g.h = a, g.w = a;
  g.h.in = xs.h, g.h.out = ys.h;
  g.w.in = xs.w, g.w.out = ys.w;
  return g;
}

}  // namespace dlrt::cuda
