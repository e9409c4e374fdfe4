// conv_grouped_pointwise.hpp: grouped 1x1 convolutions (NHWC, stride 1, no padding, groups > 1,
// more than one channel per group: ShuffleNet's, ResNeXt's) as one oneDNN matmul per group on
// strided views of the operands (conv_grouped_pointwise.cc says why).
#pragma once

#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::prim {

// The forward op (conv2d, conv2d_bias_act) is one: NHWC, a 1x1 filter at stride 1 without
// padding, groups > 1 and more than one input or output channel per group (depthwise ones
// keep oneDNN's jit_dw kernel), every operand f32.
bool grouped_pointwise_fits(const plugin::OpView& op);

std::unique_ptr<Kernel> make_grouped_pointwise(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
