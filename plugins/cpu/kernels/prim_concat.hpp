// prim_concat.hpp: concat on oneDNN's concat primitive (prim_concat.cc; row in
// primitive_table.cc; semantics in docs/ops.md).
#pragma once

#include "../ops.hpp"

namespace dlrt::cpu::prim {

void concat_check(const plugin::OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost);
std::unique_ptr<Kernel> concat_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
