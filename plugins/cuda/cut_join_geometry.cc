// cut_join_geometry.cc: see cut_join_geometry.hpp.
#include "cut_join_geometry.hpp"

namespace dlrt::cuda {

math::Strided slice_view(const plugin::OpView& op, const std::vector<int64_t>& small,
                         const std::vector<int64_t>& big, int64_t* base) {
  const auto& begin = op.get_ints("begin");
  const auto& steps = op.get_ints("strides");
  const std::vector<int64_t> bs = plugin::row_major_strides(big);
  math::Strided v;
  v.rank = static_cast<int>(small.size());
  *base = 0;
  for (int k = 0; k < v.rank; ++k) {
    v.dims[k] = small[k];
    v.stride[0][k] = steps[k] * bs[k];
    *base += begin[k] * bs[k];
  }
  return v;
}

math::PadGeom pad_geom(const plugin::OpView& op, const std::vector<int64_t>& x,
                       const std::vector<int64_t>& y, bool reflect) {
  const auto& pads = op.get_ints("pads");
  math::PadGeom g;
  g.rank = static_cast<int>(x.size());
  g.reflect = reflect;
  for (int k = 0; k < g.rank; ++k) g.x[k] = x[k], g.y[k] = y[k], g.before[k] = pads[k];
  return g;
}

math::GlobalPool global_pool_geom(const plugin::OpView& op, const std::vector<int64_t>& image) {
  const plugin::ImageShape s =
      plugin::image_shape(image, plugin::is_nchw(op.get_string("data_format"), op.name()));
  math::GlobalPool g;
  g.nchw = s.nchw, g.n = s.n, g.h = s.h, g.w = s.w, g.c = s.c;
  return g;
}

}  // namespace dlrt::cuda
