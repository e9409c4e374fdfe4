// placement_dump.cc: the placed graph as people read it — TensorFlow's placement log, JSON for
// tools and tests, Graphviz DOT for a picture (one fill colour per device, copies dashed).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "placement/placement.hpp"
#include "placement/support.hpp"

namespace dlrt::core {
namespace {

// What a placed node shows: its graph node's fields, or those of a copy.
struct View {
  std::string op;         // registry op, "placeholder"/"constant"/"variable", or "copy"
  std::string requested;  // the spec as written, "" for none (and for copies)
};

View view(const Graph& graph, const PlacedNode& p) {
  if (p.is_copy) return {"copy", ""};
  const Node& n = graph.node(p.source);
  return {placement::op_type(n), n.requested_device};
}

// "name" for output 0, "name:k" otherwise (dlrt_graph_find's form).
std::string input_name(const PlacedGraph& placed, const PlacedInput& in) {
  const std::string& name = placed.nodes.at(in.node).name;
  return in.output == 0 ? name : fmt::format("{}:{}", name, in.output);
}

// ColorBrewer Set3: pale enough for black labels. Past twelve devices, hues spread by the
// golden angle so neighbours still differ.
std::string colour(size_t device) {
  static const char* kSet3[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  if (device < 12) return kSet3[device];
  const double hue = std::fmod(device * 0.618033988749895, 1.0);
  return fmt::format("{:.3f} 0.40 0.95", hue);
}

// A DOT string literal's body: quotes and backslashes escaped.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

const char* reason_name(PlacementReason reason) {
  switch (reason) {
    case PlacementReason::kExplicit:
      return "explicit";
    case PlacementReason::kColocated:
      return "colocated";
    case PlacementReason::kDefaultPriority:
      return "default-priority";
    case PlacementReason::kFollowsInput:
      return "follows-input";
    case PlacementReason::kFallbackNoKernel:
      return "fallback:no-kernel";
    case PlacementReason::kFallbackDeviceMissing:
      return "fallback:device-missing";
    case PlacementReason::kInsertedCopy:
      return "inserted-copy";
    case PlacementReason::kVariableStore:
      return "variable-placed";
  }
  return "unknown";
}

// matmul_1: (matmul): /job:localhost/replica:0/task:0/device:GPU:0 [default-priority]
// relu: (relu): /job:localhost/replica:0/task:0/device:CPU:0 [fallback:no-kernel: requested ...]
std::string placement_log(const Graph& graph, const PlacedGraph& placed) {
  const auto& devices = graph.context().registry().devices();
  std::string out;
  for (const PlacedNode& p : placed.nodes) {
    out += fmt::format("{}: ({}): {} [{}", p.name, view(graph, p).op,
                       devices.at(p.device).full_name, reason_name(p.reason));
    if (!p.detail.empty()) out += ": " + p.detail;
    out += "]\n";
  }
  return out;
}

// {"nodes": [{"name", "op", "requested", "assigned", "reason", "detail", "inputs": [...]}],
//  "devices": [{"index", "name", "full_name", "type", "nodes"}]}; inputs name placed nodes
// (so a consumer of a copied value lists the copy).
std::string placement_json(const Graph& graph, const PlacedGraph& placed) {
  const auto& devices = graph.context().registry().devices();
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  std::vector<size_t> per_device(devices.size(), 0);
  for (const PlacedNode& p : placed.nodes) {
    View v = view(graph, p);
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const PlacedInput& in : p.inputs) inputs.push_back(input_name(placed, in));
    nodes.push_back({{"name", p.name},
                     {"op", v.op},
                     {"requested", v.requested},
                     {"assigned", devices.at(p.device).full_name},
                     {"reason", reason_name(p.reason)},
                     {"detail", p.detail},
                     {"is_copy", p.is_copy},
                     {"inputs", inputs}});
    ++per_device[p.device];
  }
  nlohmann::ordered_json devs = nlohmann::ordered_json::array();
  for (size_t d = 0; d < devices.size(); ++d)
    devs.push_back({{"index", d},
                    {"name", devices[d].name},
                    {"full_name", devices[d].full_name},
                    {"type", devices[d].type},
                    {"nodes", per_device[d]}});
  nlohmann::ordered_json doc = {{"nodes", nodes}, {"devices", devs}};
  return doc.dump(2) + "\n";
}

// Nodes are n<index> (names may hold any character); a legend cluster shows each device that
// holds a node in its colour; copies are dashed boxes.
std::string placement_dot(const Graph& graph, const PlacedGraph& placed) {
  const auto& devices = graph.context().registry().devices();
  std::string out = "digraph placement {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n";
  std::set<size_t> used;
  for (size_t i = 0; i < placed.nodes.size(); ++i) {
    const PlacedNode& p = placed.nodes[i];
    used.insert(p.device);
    const std::string label = fmt::format("{}\\n{} [{}]", dot_escape(p.name),
                                          dot_escape(view(graph, p).op), reason_name(p.reason));
    out += fmt::format("  n{} [label=\"{}\", shape={}, style=\"{}\", fillcolor=\"{}\"];\n", i,
                       label, p.is_copy ? "box" : "ellipse", p.is_copy ? "filled,dashed" : "filled",
                       colour(p.device));
    for (const PlacedInput& in : p.inputs)
      out += in.output == 0 ? fmt::format("  n{} -> n{};\n", in.node, i)
                            : fmt::format("  n{} -> n{} [label=\"{}\"];\n", in.node, i, in.output);
  }
  out += "  subgraph cluster_legend {\n    label=\"devices\";\n";
  for (size_t d : used)
    out += fmt::format("    device{} [label=\"{}\", shape=box, style=filled, fillcolor=\"{}\"];\n",
                       d, dot_escape(devices[d].full_name), colour(d));
  out += "  }\n}\n";
  return out;
}

}  // namespace dlrt::core
