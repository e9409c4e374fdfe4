// select.hpp: which nodes and assigns a compile needs (the first step of Executable::compile).
#pragma once

#include <vector>

#include "graph/graph.hpp"

namespace dlrt::core::exec {

struct Selection {
  std::vector<NodeId> nodes;      // topological (ascending id) order
  std::vector<Assign> assigns;    // the graph's assigns that this executable applies
};

// The ancestors of `fetches`, then every assign whose variable or value lies in that set
// (with the ancestors of its value), repeated until nothing changes: so fetching a loss
// brings in the optimizer updates of the variables the loss reads.
// Throws INVALID_ARGUMENT: a feed that is not a placeholder (or fed twice), a needed
// placeholder that is not fed (naming it), two assigns of one variable.
Selection select_nodes(const Graph& graph, const std::vector<ValueRef>& feeds,
                       const std::vector<ValueRef>& fetches);

}  // namespace dlrt::core::exec
