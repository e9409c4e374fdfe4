// placement.hpp: the placement engine (docs/design.md section 4) — maps every node an executable
// needs onto a device, in this order:
//   1. requested devices (device scopes; TF device-spec grammar, partial specs match any
//      device of that type/index);
//   2. colocation: a variable, its assigns, the optimizer updates that read it and its slots
//      (update inputs that are variables) share a device; explicit colocate() groups too;
//   3. explicit requests are hard constraints; soft placement (default) moves an op whose
//      requested device cannot run it (or does not exist) to one that can, with the reason;
//      strict placement makes that an INVALID_ARGUMENT naming the op, the request and the
//      devices that could run it;
//   4. unconstrained ops go to the highest-priority device that supports them (GPU, then
//      ACCEL, then CPU; then registry order), then follow their inputs to avoid copies when
//      the input's device supports them (ggml's scheduler passes). With options.auto_device
//      they go to one device chosen for the whole executable first (auto_device.hpp), and by
//      priority only where that device cannot run them. Automatic placement never picks the
//      reference oracle's devices unless the user named them (Context::why_not_automatic);
//      an explicit request that matches one is honoured;
//   5. copies are inserted wherever a consumer sits on another device than its producer
//      (one copy per (value, destination device)).
// "Supports" is the plugin's op_supported on the node's complete descriptor.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace dlrt::core {

enum class PlacementReason {
  kExplicit,               // "explicit": on the device its scope requested
  kColocated,              // "colocated": follows its colocation group
  kDefaultPriority,        // "default-priority": best device that supports it
  kFollowsInput,           // "follows-input": on its input's device to avoid a copy
  kFallbackNoKernel,       // "fallback:no-kernel": requested device cannot run it (soft)
  kFallbackDeviceMissing,  // "fallback:device-missing": requested device does not exist (soft)
  kInsertedCopy,           // "inserted-copy": a copy between devices
  kVariableStore,          // "variable-placed": variable already placed by an earlier compile
};
const char* reason_name(PlacementReason reason);

// One input of a placed node: (index into PlacedGraph::nodes, output index).
struct PlacedInput {
  size_t node = 0;
  uint32_t output = 0;
};

struct PlacedNode {
  // The graph node this is, or for an inserted copy the node whose output it copies.
  NodeId source = 0;
  bool is_copy = false;
  uint32_t copied_output = 0;  // for copies: which output of `source`
  size_t device = 0;           // registry index
  PlacementReason reason = PlacementReason::kDefaultPriority;
  std::string detail;               // human words for the reason, or ""
  std::vector<PlacedInput> inputs;  // rewired through copies
  std::string name;                 // graph node name, or "<src>/copy_to_<TYPE>_<n>" for copies
};

struct PlacedGraph {
  std::vector<PlacedNode> nodes;  // topological order
  // Where graph value `v` is available on device `d`: index of the PlacedNode producing it.
  // (The original node, or the copy inserted to bring it there.)
  // Throws INTERNAL when `v` was never made available on `device`.
  size_t producer(ValueRef v, size_t device) const;
  std::map<std::pair<ValueRef, size_t>, size_t> available;  // (value, device) -> node index
  // With PlacementOptions::auto_device: what was picked and why (auto_device.hpp), else "".
  std::string auto_device;
};

struct PlacementOptions {
  bool soft = true;
  bool auto_device = false;  // one device for every unrequested group (auto_device.hpp)
};

// Places `needed` (graph node ids in topological order; the executor computes the subset a
// compile needs) and inserts copies. Variables already in the graph's VariableStore keep
// their device. Throws Error: INVALID_ARGUMENT for strict failures and for an op no device
// supports (naming the op and each device's reason).
PlacedGraph place(Graph& graph, const std::vector<NodeId>& needed, const PlacementOptions& options);

// TensorFlow's log line per node: "name: (OpType): /job:localhost/replica:0/task:0/device:CPU:0"
// followed by " [reason: detail]"; the whole log, one line per placed node.
std::string placement_log(const Graph& graph, const PlacedGraph& placed);
// The placed graph as JSON (nodes with requested/assigned/reason, edges, devices) and as
// Graphviz DOT with one fill colour per device and a legend.
std::string placement_json(const Graph& graph, const PlacedGraph& placed);
std::string placement_dot(const Graph& graph, const PlacedGraph& placed);

}  // namespace dlrt::core
