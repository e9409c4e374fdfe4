// loop_gather.hpp: the cpu plugin's loop kernels for gather and scatter_add (loop_gather.cc),
// rows of loop_kernel_defs().
#pragma once

#include <vector>

#include "../ops.hpp"

namespace dlrt::cpu::loops {

void add_gather_defs(std::vector<KernelDef>& t);

}  // namespace dlrt::cpu::loops
