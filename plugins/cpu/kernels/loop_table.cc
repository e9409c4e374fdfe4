// loop_table.cc: the cpu plugin's kernel rows for ops built from plain loops parallelised over the cores.
#include "../ops.hpp"

namespace dlrt::cpu {

const std::vector<KernelDef>& loop_kernel_defs() {
  static const std::vector<KernelDef> defs = {};
  return defs;
}

}  // namespace dlrt::cpu
