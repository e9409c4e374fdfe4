// primitive_table.cc: the cpu plugin's kernel rows for ops built from oneDNN primitives.
#include "../ops.hpp"

namespace dlrt::cpu {

const std::vector<KernelDef>& primitive_kernel_defs() {
  static const std::vector<KernelDef> defs = {};
  return defs;
}

}  // namespace dlrt::cpu
