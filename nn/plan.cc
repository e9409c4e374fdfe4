// plan.cc: the questions asked of a model's plan (dlrt/nn/plan.hpp).
#include "dlrt/nn/plan.hpp"

#include <algorithm>

namespace dlrt::nn::detail {

bool Plan::input_used(size_t input) const {
  for (const PlanNode& n : nodes)
    if (std::find(n.inputs.begin(), n.inputs.end(), input) != n.inputs.end()) return true;
  return std::find(outputs.begin(), outputs.end(), input) != outputs.end();
}

int64_t model_input_ids(const Plan& p, size_t input) {
  int64_t ids = 0;
  for (const PlanNode& n : p.nodes)
    for (size_t s : n.inputs) {
      if (s != input) continue;
      const int64_t k = p.layers.at(n.layer)->input_ids();
      if (k == 0) return 0;
      ids = ids == 0 ? k : std::min(ids, k);
    }
  return ids;
}

}  // namespace dlrt::nn::detail
