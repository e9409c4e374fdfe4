// prim_conv.hpp: conv2d, conv2d_bias_act, conv2d_backward_data, conv2d_backward_filter on
// oneDNN's convolution primitives (rows in primitive_table.cc; semantics in docs/ops.md).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void conv_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> conv_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
