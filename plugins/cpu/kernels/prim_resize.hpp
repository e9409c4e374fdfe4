// prim_resize.hpp: resize and resize_grad (prim_resize.cc; rows in primitive_table.cc;
// semantics in docs/ops.md and core/ops/infer_resize.cc).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void resize_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> resize_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
