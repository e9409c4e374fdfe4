// prim_pool.hpp: max_pool2d, avg_pool2d and their backward ops on oneDNN's pooling primitives
// (rows in primitive_table.cc; semantics in docs/ops.md).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void pool_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> pool_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
