// select.hpp: which nodes and assigns a compile needs (the first step of Executable::compile).
#pragma once

#include <vector>

#include "graph/graph.hpp"

namespace dlrt::core::exec {

struct Selection {
  std::vector<NodeId> nodes;    // topological (ascending id) order
  std::vector<Assign> assigns;  // the graph's assigns that this executable applies
};

// The ancestors of `fetches`; with `run_assigns`, also every assign of the graph with the
// ancestors of its variable and value (a training step: the optimizer updates and whatever
// they read, such as the labels behind the loss gradient) and every stateful op
// (OpDef::stateful) with its ancestors, unless each variable it would write in place is
// assigned another value here (the assign decides). Without it no assign is taken,
// whatever the fetches read: an evaluation or prediction executable only reads variables,
// so it needs no label feed and changes nothing. The choice is the caller's
// (dlrt_compile_options::run_assigns), not guessed from what the fetches touch.
// Throws INVALID_ARGUMENT: a feed that is not a placeholder (or fed twice), a needed
// placeholder that is not fed (naming it), two assigns of one variable.
Selection select_nodes(const Graph& graph, const std::vector<ValueRef>& feeds,
                       const std::vector<ValueRef>& fetches, bool run_assigns);

}  // namespace dlrt::core::exec
