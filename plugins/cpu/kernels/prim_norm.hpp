// prim_norm.hpp: batch_norm, the inference form, on oneDNN's batch_normalization primitive (row
// in primitive_table.cc; semantics in docs/ops.md). The training forms are
// loop_batch_norm_train.cc's, the backward ops loop_batch_norm.cc's.
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void batch_norm_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> batch_norm_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
