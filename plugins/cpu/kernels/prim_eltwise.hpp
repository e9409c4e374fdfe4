// prim_eltwise.hpp: relu/sigmoid/tanh, the sigmoid and tanh gradients, and bias_add on oneDNN's
// eltwise and binary primitives (rows in primitive_table.cc; semantics in docs/ops.md).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void eltwise_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> eltwise_create(const dlrt_plugin& p, const plugin::OpView& op);

void bias_add_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> bias_add_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
