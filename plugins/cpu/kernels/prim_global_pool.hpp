// prim_global_pool.hpp: global_avg_pool2d, global_max_pool2d and their backward ops
// (prim_global_pool.cc; rows in primitive_table.cc; semantics in docs/ops.md).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void global_pool_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> global_pool_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
