// cut_join_geometry.hpp: host-side builders of kernel_math.hpp's index structs for
// cut_join.cu (slice, slice_grad, pad, pad_grad, the global pools), from an op whose
// attributes the core normalised (core/ops/infer_shape_ops.cc). Separate from the .cu file so
// kernel_math_test.cc builds its structs with exactly this code.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_math.hpp"
#include "op_view.hpp"

namespace dlrt::cuda {

// The view of `small` (y of slice, dy of slice_grad) inside `big` (x, or dx) for
// math::slice_offset: small's dims, big's row-major strides times the steps; *base the offset
// of the first element taken.
math::Strided slice_view(const plugin::OpView& op, const std::vector<int64_t>& small,
                         const std::vector<int64_t>& big, int64_t* base);

// pad / pad_grad: x the unpadded dims, y the padded ones, the "pads" attribute's befores.
math::PadGeom pad_geom(const plugin::OpView& op, const std::vector<int64_t>& x,
                       const std::vector<int64_t>& y, bool reflect);

// The image `image` (dims as stored) of a global pool op, by its data_format.
math::GlobalPool global_pool_geom(const plugin::OpView& op, const std::vector<int64_t>& image);

}  // namespace dlrt::cuda
