// core/ops/op_examples.cc: the example of each op: the first of its samples in the schema.
#include "op_examples.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

#include "op_registry.hpp"

namespace dlrt::ops {
namespace {

using Table = std::map<std::string, OpExample, std::less<>>;

// Each op's first sample (sample.hpp): the schema's own example call.
Table build_table() {
  Table t;
  for (const OpDef* def : all_ops()) {
    const std::vector<Sample> samples = op_samples(*def);
    if (samples.empty()) continue;
    OpExample e;
    for (const SampleInput& in : samples.front().inputs) e.inputs.push_back({in.dtype, in.dims});
    e.attrs = samples.front().attrs;
    t.emplace(def->name, std::move(e));
  }
  return t;
}

const Table& table() {
  static const Table t = build_table();
  return t;
}

}  // namespace

const OpExample* find_example(std::string_view op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

Result<OpInstance> instantiate_example(std::string_view op) {
  const OpExample* e = find_example(op);
  if (e == nullptr) return Status(DLRT_NOT_FOUND, fmt::format("op '{}' has no example", op));
  return instantiate(op, e->inputs, e->attrs);
}

}  // namespace dlrt::ops
