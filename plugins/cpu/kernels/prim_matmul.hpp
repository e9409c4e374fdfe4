// prim_matmul.hpp: matmul, matmul_bias_act and batch_matmul on oneDNN's matmul primitive (rows in
// primitive_table.cc; semantics in docs/ops.md).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void matmul_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> matmul_create(const dlrt_plugin& p, const plugin::OpView& op);
// batch_matmul: the same primitive with batch dims (numpy broadcasting).
void batch_matmul_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> batch_matmul_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
