// copies.hpp: the last placement pass — turning per-node device decisions into a PlacedGraph
// with the copies between devices. Private to core/placement.
#pragma once

#include <string>
#include <vector>

#include "placement/placement.hpp"

namespace dlrt::core::placement {

// What the earlier passes decided for one graph node.
struct Decision {
  size_t device = 0;  // registry index
  PlacementReason reason = PlacementReason::kDefaultPriority;
  std::string detail;
};

// The placed graph of `needed` (topological order, every input before its consumer), where
// `decided[id]` is node id's decision (indexed by NodeId; only needed nodes are read).
// A copy is inserted just before the first consumer that needs a value on another device and
// reused by every later consumer on that device: one copy per (value, destination device).
// A value assigned to a needed variable is made available on the variable's device too (the
// write happens there), so its copy, if any, comes last.
PlacedGraph insert_copies(const Graph& graph, const std::vector<NodeId>& needed,
                          const std::vector<Decision>& decided);

}  // namespace dlrt::core::placement
