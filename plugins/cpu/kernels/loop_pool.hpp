// loop_pool.hpp: max pooling over f32 (and bf16 2x2) images as loops (loop_pool.cc), used by prim_pool.cc for
// max_pool2d and max_pool2d_backward (NHWC vectorised, NCHW scalar); see loop_pool.cc for why.
#pragma once

#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::loops {

// The checked geometry of one max pooling (prim_pool.cc's pool_geom): x the input image, y
// the pooled one, h/w the windows along each axis (size, stride, padding).
struct MaxPoolGeometry {
  plugin::ImageShape x, y;
  plugin::Window1D h, w;
};

// The forward kernel (x -> y) or the backward one (x, dy -> dx) for `dtype`: f32, or bf16
// where runs_bf16 (checked before).
// relu_bias (backward): max_pool2d_backward_relu_bias, outputs dz and db.
std::unique_ptr<Kernel> make_max_pool(const dlrt_plugin& p, const MaxPoolGeometry& g, bool backward,
                                      int32_t dtype = DLRT_F32, bool relu_bias = false);
// Whether bf16 images of this geometry have a kernel of their own: the 2x2, stride-2,
// unpadded NHWC pool, forward, backward and the fused backward (other bf16 pools run the f32
// kernel between conversions).
bool runs_bf16(const MaxPoolGeometry& g);

}  // namespace dlrt::cpu::loops
