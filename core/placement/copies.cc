// copies.cc: PlacedGraph and copy insertion (see copies.hpp).
#include "placement/copies.hpp"

#include <fmt/format.h>

#include "context.hpp"

namespace dlrt::core::placement {

PlacedGraph insert_copies(const Graph& graph, const std::vector<NodeId>& needed,
                          const std::vector<Decision>& decided) {
  const std::vector<LogicalDevice>& devices = graph.context().registry().devices();
  PlacedGraph out;
  std::vector<size_t> index_of(decided.size(), static_cast<size_t>(-1));  // NodeId -> node
  std::vector<bool> in_needed(decided.size(), false);
  for (NodeId id : needed) in_needed[id] = true;

  // The placed node that provides `v` on device `d`: its producer, or a copy made now.
  auto available_on = [&](ValueRef v, size_t d) -> size_t {
    auto it = out.available.find({v, d});
    if (it != out.available.end()) return it->second;
    const Node& src = graph.node(v.node);
    const std::string value = v.output == 0 ? src.name : fmt::format("{}:{}", src.name, v.output);
    const std::string target = fmt::format("{}_{}", devices[d].type, devices[d].index);
    PlacedNode c;
    c.source = v.node;
    c.is_copy = true;
    c.copied_output = v.output;
    c.device = d;
    c.reason = PlacementReason::kInsertedCopy;
    c.detail = fmt::format("{} from {} to {}", value, devices[decided[v.node].device].name,
                           devices[d].name);
    c.inputs.push_back({index_of[v.node], v.output});
    // "h/copy_to_CPU_0", or "h/copy_1_to_CPU_0" for output 1: unique per (value, device).
    c.name = v.output == 0 ? fmt::format("{}/copy_to_{}", src.name, target)
                           : fmt::format("{}/copy_{}_to_{}", src.name, v.output, target);
    out.nodes.push_back(std::move(c));
    return out.available[{v, d}] = out.nodes.size() - 1;
  };

  for (NodeId id : needed) {
    const Node& n = graph.node(id);
    PlacedNode p;
    p.source = id;
    p.device = decided[id].device;
    p.reason = decided[id].reason;
    p.detail = decided[id].detail;
    p.name = n.name;
    for (ValueRef v : n.inputs) {
      if (decided[v.node].device == p.device) p.inputs.push_back({index_of[v.node], v.output});
      else p.inputs.push_back({available_on(v, p.device), 0});  // a copy has one output
    }
    out.nodes.push_back(std::move(p));
    index_of[id] = out.nodes.size() - 1;
    for (uint32_t o = 0; o < n.outputs.size(); ++o)
      out.available[{ValueRef{id, o}, decided[id].device}] = index_of[id];
  }
  for (const Assign& a : graph.assigns())
    if (in_needed[a.variable] && in_needed[a.value.node])
      available_on(a.value, decided[a.variable].device);
  return out;
}

}  // namespace dlrt::core::placement
