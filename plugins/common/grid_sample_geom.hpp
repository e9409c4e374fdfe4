// grid_sample_geom.hpp: the host-side builder of grid_sample_math.hpp's Geom from a
// grid_sample / grid_sample_grad descriptor the core's op schema built
// (core/ops/infer_grid_sample.cc). Shared by the cpu and CUDA plugins, and by cuda's
// kernel_math_test.cc, so the struct a kernel gets is built by exactly this code.
#pragma once

#include <string>
#include <vector>

#include "grid_sample_math.hpp"
#include "op_view.hpp"

namespace dlrt::plugin::grid_sample {

// x_dims: x (dx) as stored; grid_dims: (N,OH,OW,2).
inline Geom geom_of(const OpView& op, const std::vector<int64_t>& x_dims,
                    const std::vector<int64_t>& grid_dims) {
  const std::string& mode = op.get_string("mode");
  const std::string& pad = op.get_string("padding_mode");
  const ImageShape xs = image_shape(x_dims, is_nchw(op.get_string("data_format"), op.name()));
  Geom g;
  g.mode = mode == "nearest" ? kNearest : mode == "bicubic" ? kBicubic : kBilinear;
  g.padding = pad == "border" ? kBorder : pad == "reflection" ? kReflection : kZeros;
  g.align = op.get_bool("align_corners");
  g.nchw = xs.nchw;
  g.n = xs.n, g.c = xs.c, g.h = xs.h, g.w = xs.w;
  g.oh = grid_dims[1], g.ow = grid_dims[2];
  return g;
}

// The schema's instance: grid_sample's x and grid are inputs 0 and 1, grid_sample_grad's
// inputs 1 and 2 (after dy).
inline Geom geom_of(const OpView& op) {
  const bool grad = op.name() == "grid_sample_grad";
  return geom_of(op, op.input(grad ? 1 : 0).dims, op.input(grad ? 2 : 1).dims);
}

}  // namespace dlrt::plugin::grid_sample
