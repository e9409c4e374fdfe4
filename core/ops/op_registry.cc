// core/ops/op_registry.cc: builds the registry from the family tables.
#include "op_registry.hpp"

#include <algorithm>
#include <map>

namespace dlrt::ops {
namespace {

struct Registry {
  std::vector<OpDef> defs;  // sorted by name; never resized after construction
  std::map<std::string, const OpDef*, std::less<>> by_name;

  Registry() {
    for (auto* family :
         {conv_pool_ops,    elementwise_ops,    activation_ops, math_ops,        comparison_ops,
          reduce_shape_ops, misc_ops,           train_ops,      norm_ops,        shape_ops,
          global_pool_ops,  conv_transpose_ops, resize_ops,     grid_sample_ops, gather_ops,
          layer_norm_ops,   batch_matmul_ops,   seq_ops,        attention_ops,   sampling_ops,
          rnn_ops})
      for (OpDef& d : family()) defs.push_back(std::move(d));
    std::sort(defs.begin(), defs.end(),
              [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
    // A duplicate name is a bug in the tables; the registry test catches it, and the first
    // definition wins here rather than taking the host process down.
    for (const OpDef& d : defs) by_name.emplace(d.name, &d);
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const OpDef* find_op(std::string_view name) {
  const Registry& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> out;
  for (const OpDef& d : registry().defs) out.push_back(&d);
  return out;
}

}  // namespace dlrt::ops
